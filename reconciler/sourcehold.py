"""The hub's record, on the output branch, that it refuses the tip of the source branch.

When the hub refuses the source tip (`reconciler.hubinputs.SourceGate` found a commit whose
signature does not verify: `SourceVerificationFailed`; or the branch was rewritten and no
operator accepted it: `SourceRewritten`), `record_refusal` commits one file on top of the last
output commit, the HubStatus document `status/hub.yaml` (`gitfleet.api.hubstatus`), and pushes
it fast-forward, so `gitfleet status`, `gitfleet history` and `git log` of the output branch show
that the hub holds the source, and why.
Everything else stays the last render: nothing of the refused commit is read or written. The
commit keeps the last reconciled `Gitfleet-Source` (the chain of trust and the rewrite check
read it), adds `Gitfleet-Source-Refused`, and carries no `Gitfleet-Reports`, so the next
accepted source is rendered in full, which removes the file. A refusal already recorded is not
committed again (the document keeps its `lastTransitionTime`, so its bytes are unchanged). With
no output commit yet (a refused first pass) the record is a root commit holding only
`status/hub.yaml` (no `Gitfleet-Source`: nothing is rendered, so no `clusters/`, and an agent
finds no directory and applies nothing), which the first accepted render builds on. Time is the
pass's `now`, kept from the recorded document while the refusal is unchanged. Part of the hub's
imperative shell; `reconciler.loop` is its only caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import yaml
from pydantic import ValidationError

from gitfleet.api.conditions import Condition, set_condition
from gitfleet.api.hubstatus import (
    HUB_STATUS_API_VERSION,
    HUB_STATUS_KIND,
    HUB_STATUS_PATH,
    SOURCE_ACCEPTED,
    HubSourceStatus,
    HubStatus,
    HubStatusMeta,
)
from gitfleet.load.yamlio import dump_yaml
from gitfleet.repo.gitcmd import GitError
from gitfleet.repo.gitwrite import Identity, commit_files
from gitfleet.repo.mirror import Mirror
from gitfleet.repo.outputview import GitOutputView
from gitfleet.repo.trailers import compose_message

REFUSED_TRAILER = "Gitfleet-Source-Refused"
SOURCE_TRAILER = "Gitfleet-Source"


@dataclass(frozen=True)
class Refusal:
    """A source tip the hub does not reconcile, and why (`reason: message`)."""

    refused: str
    rendered: str | None
    """The last reconciled source commit (what the output still renders)."""
    reason: str
    message: str

    @classmethod
    def of(cls, refused: str, rendered: str | None, text: str) -> Refusal:
        """From a verdict's text `Reason: message`."""
        reason, sep, message = text.partition(": ")
        if not sep or not reason.isalpha():
            reason, message = "SourceRefused", text
        return cls(refused, rendered, reason, message)


@dataclass(frozen=True)
class Writer:
    """Who commits the record, and where it goes."""

    mirror: Mirror
    branch: str
    identity: Identity
    sign_key: Path | None = None


def refusal_document(prior: bytes | None, refusal: Refusal, now: datetime) -> bytes:
    """The HubStatus document for `refusal`; the condition keeps `prior`'s transition time when
    the same refusal was recorded before (so the bytes are the same)."""
    condition = Condition(
        type=SOURCE_ACCEPTED, status="False", reason=refusal.reason, message=refusal.message
    )
    conditions = set_condition(_prior_conditions(prior), condition, now)
    doc = HubStatus(
        api_version=HUB_STATUS_API_VERSION,
        kind=HUB_STATUS_KIND,
        metadata=HubStatusMeta(name="hub"),
        status=HubSourceStatus(
            refused_source=refusal.refused,
            rendered_source=refusal.rendered,
            conditions=list(conditions),
        ),
    )
    return dump_yaml(doc.dump()).encode()


def _prior_conditions(prior: bytes | None) -> list[Condition]:
    if prior is None:
        return []
    try:
        return HubStatus.model_validate(yaml.safe_load(prior)).status.conditions
    except (yaml.YAMLError, ValidationError):
        return []  # not a document this hub wrote: replaced whole


def record_refusal(
    writer: Writer, output: str | None, refusal: Refusal, now: datetime
) -> tuple[str | None, str]:
    """Commit and push the record of `refusal` on top of `output` (None: as the output branch's
    first commit): (the new output commit, or None when nothing was pushed; "" or why it could
    not be recorded, for the pass message)."""
    try:
        prior = _prior_record(writer, output)
        data = refusal_document(prior.get(HUB_STATUS_PATH), refusal, now)
        if prior.get(HUB_STATUS_PATH) == data:
            return None, ""
        written = commit_files(
            writer.mirror.path,
            output,
            {HUB_STATUS_PATH: data},
            _message(refusal),
            writer.identity,
            sign_key=writer.sign_key,
        )
        pushed = writer.mirror.push_fast_forward(written.commit, writer.branch, output)
    except GitError as exc:
        return None, f" (not recorded on {writer.branch}: {exc})"
    if not pushed.ok:  # another writer moved the branch: the next poll records it
        return None, f" (not recorded on {writer.branch}: {pushed.message})"
    return written.commit, ""


def _prior_record(writer: Writer, output: str | None) -> dict[str, bytes]:
    """`status/hub.yaml` of the output commit, when there is one and it has the file."""
    if output is None:
        return {}
    return GitOutputView(writer.mirror.path, output).read_many([HUB_STATUS_PATH])


def _message(refusal: Refusal) -> str:
    kept = (
        f"the output keeps the render of {refusal.rendered[:12]}"
        if refusal.rendered
        else "nothing is rendered yet"
    )
    subject = f"gitfleet: source {refusal.refused[:12]} refused ({refusal.reason}); {kept}"
    trailers: dict[str, str | list[str]] = {REFUSED_TRAILER: refusal.refused}
    if refusal.rendered:
        trailers[SOURCE_TRAILER] = refusal.rendered
    return compose_message(subject, f"{refusal.reason}: {refusal.message}", trailers)
