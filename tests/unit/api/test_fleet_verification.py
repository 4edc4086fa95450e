"""`Fleet.spec.verification`: the signed-commits settings and their rules (a table)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gitfleet.api import Fleet
from gitfleet.api.registry import parse_object
from gitfleet.repo.workdir import WorkdirTree
from renderers import load_fleet


def issues_of(verification: Any) -> list[tuple[str, str]]:
    body = {
        "apiVersion": "gitfleet.io/v1alpha1",
        "kind": "Fleet",
        "metadata": {"name": "fleet"},
        "spec": {"verification": verification},
    }
    _model, issues = parse_object(body)
    return [(i.field, i.message) for i in issues]


def test_defaults() -> None:
    body = {"apiVersion": "gitfleet.io/v1alpha1", "kind": "Fleet", "metadata": {"name": "f"}}
    model, issues = parse_object(
        {
            **body,
            "spec": {
                "verification": {"mode": "SSH", "allowedSignersFile": "governance/allowed_signers"}
            },
        }
    )
    assert issues == [] and isinstance(model, Fleet)
    verification = model.spec.verification
    assert verification is not None and verification.commits == "All"
    plain, _ = parse_object(body)
    assert isinstance(plain, Fleet) and plain.spec.verification is None


FIELD = "spec.verification.allowedSignersFile"


@pytest.mark.parametrize(
    ("verification", "expected"),
    [
        ({}, []),
        ({"mode": "None"}, []),
        ({"mode": "SSH", "allowedSignersFile": "a/allowed_signers", "commits": "All"}, []),
        ({"mode": "GPG", "allowedSignersFile": "keys.asc", "commits": "FirstParent"}, []),
        ({"mode": "SSH"}, [(FIELD, "is required when mode is SSH")]),
        ({"mode": "GPG"}, [(FIELD, "is required when mode is GPG")]),
        (
            {"mode": "SSH", "allowedSignersFile": "../outside"},
            [(FIELD, 'must not have empty, ".", ".." or hidden (leading ".") parts: "../outside"')],
        ),
        (
            {"mode": "SSH", "allowedSignersFile": ".gitfleet/allowed_signers"},
            [
                (
                    FIELD,
                    'must not have empty, ".", ".." or hidden (leading ".") parts: '
                    '".gitfleet/allowed_signers"',
                )
            ],
        ),
        (
            {"mode": "SSH", "allowedSignersFile": "/etc/ssh/allowed"},
            [(FIELD, 'must be a relative path inside the fleet repository: "/etc/ssh/allowed"')],
        ),
        (
            {"mode": "SSH", "allowedSignersFile": "a\nb"},
            [(FIELD, 'must be a relative path inside the fleet repository: "a\nb"')],
        ),
        (
            {"mode": "ssh", "allowedSignersFile": "k"},
            [("spec.verification.mode", "must be one of: None, SSH, GPG")],
        ),
        ({"commits": "Tip"}, [("spec.verification.commits", "must be one of: All, FirstParent")]),
        ({"keys": "x"}, [("spec.verification.keys", 'unknown field "keys"')]),
    ],
)
def test_rules(verification: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert issues_of(verification) == expected


VERIFIED_FLEET = """apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata: {name: f}
spec:
  verification: {mode: SSH, allowedSignersFile: governance/allowed_signers}
"""


@pytest.mark.parametrize("file", ["fleet.yaml", "settings/fleet.yaml"])
def test_verification_is_read_from_fleet_yaml_only(tmp_path: Path, file: str) -> None:
    (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / file).write_text(VERIFIED_FLEET)
    snapshot = load_fleet(WorkdirTree(tmp_path))
    errors = [(e.file, e.line, e.field) for e in snapshot.errors]
    if file == "fleet.yaml":
        assert errors == []
    else:
        assert errors == [(file, 5, "spec.verification")]
        assert "read from fleet.yaml only" in snapshot.errors[0].message
