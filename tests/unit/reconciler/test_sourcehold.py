"""The HubStatus record of a refused source (`reconciler.sourcehold.refusal_document`) and how
`gitfleet status` words it (`gitfleet.outputread.hub_refusal`): the same refusal gives the same
bytes (its transition time kept), a different one a new time, an unreadable prior document is
replaced, and the reason is taken from the verdict's `Reason: message` text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import yaml

from gitfleet.api.hubstatus import HubStatus
from gitfleet.outputread import hub_refusal
from reconciler.sourcehold import Refusal, refusal_document

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
LATER = NOW + timedelta(hours=2)
TIP, LAST = "a" * 40, "b" * 40
VERDICT = f"SourceVerificationFailed: commit {TIP[:12]}: not signed; SSH keys from x at y."


def parsed(data: bytes) -> HubStatus:
    return HubStatus.model_validate(yaml.safe_load(data))


@pytest.mark.parametrize(
    ("text", "reason", "message"),
    [
        (VERDICT, "SourceVerificationFailed", VERDICT.split(": ", 1)[1]),
        (f"SourceVerificationFailed: {TIP[:12]}: cannot read", "SourceVerificationFailed", None),
        ("no reason here", "SourceRefused", "no reason here"),
        ("two words: x", "SourceRefused", "two words: x"),
    ],
)
def test_reason_from_the_verdict_text(text: str, reason: str, message: str | None) -> None:
    refusal = Refusal.of(TIP, LAST, text)
    assert refusal.reason == reason
    assert refusal.message == (message if message is not None else text.split(": ", 1)[1])


def test_the_same_refusal_gives_the_same_bytes() -> None:
    refusal = Refusal.of(TIP, LAST, VERDICT)
    first = refusal_document(None, refusal, NOW)
    assert refusal_document(first, refusal, LATER) == first
    doc = parsed(first)
    condition = doc.refusal()
    assert condition is not None and condition.last_transition_time == "2026-11-21T10:00:00Z"
    assert (doc.status.refused_source, doc.status.rendered_source) == (TIP, LAST)


def test_another_refusal_gets_a_new_transition_time() -> None:
    first = refusal_document(None, Refusal.of(TIP, LAST, VERDICT), NOW)
    other = Refusal.of("c" * 40, LAST, VERDICT.replace(TIP[:12], "c" * 12))
    second = parsed(refusal_document(first, other, LATER))
    condition = second.refusal()
    assert condition is not None and condition.last_transition_time == "2026-11-21T12:00:00Z"
    assert second.status.refused_source == "c" * 40


@pytest.mark.parametrize("prior", [b"not: [valid", b"kind: Other\n", b"- a list\n"])
def test_an_unreadable_prior_document_is_replaced(prior: bytes) -> None:
    doc = parsed(refusal_document(prior, Refusal.of(TIP, None, VERDICT), NOW))
    assert doc.status.rendered_source is None and doc.refusal() is not None


def test_status_words() -> None:
    doc = yaml.safe_load(refusal_document(None, Refusal.of(TIP, LAST, VERDICT), NOW))
    text = hub_refusal(doc)
    assert text.startswith(f"Hub: REFUSING source commit {TIP[:12]} (SourceVerificationFailed")
    assert f"still renders source {LAST[:12]}" in text and "not signed" in text
    accepted = {**doc, "status": {**doc["status"], "conditions": []}}
    assert hub_refusal(accepted) == ""
    assert "not a HubStatus document" in hub_refusal({"kind": "Other"})
