"""`SourcePolicies`: the verification policy a trusted commit declares, read through a fake
reader (commit, path) -> bytes; the operator's file replaces the keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitfleet.repo.signatures import TrustPolicy, operator_policy
from reconciler.sourcepolicy import PolicyError, SourcePolicies

C = "c" * 40
HEAD = "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata: {name: f}\n"
SSH = HEAD + "spec:\n  verification: {mode: SSH, allowedSignersFile: gov/signers}\n"
SSH_FP = SSH.replace("gov/signers}", "gov/signers, commits: FirstParent}")
KEYS = b"alice@example.invalid ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIL\n"


def policies(files: dict[str, bytes], operator: TrustPolicy | None = None) -> SourcePolicies:
    def read(commit: str, path: str) -> bytes | None:
        assert commit == C
        return files.get(path)

    return SourcePolicies(read, operator)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({}, None),
        ({"fleet.yaml": HEAD.encode()}, None),
        ({"fleet.yaml": (HEAD + "spec: {verification: {mode: None}}\n").encode()}, None),
        ({"fleet.yaml": b"a: [unclosed\n"}, None),
        (
            {"fleet.yaml": SSH.encode(), "gov/signers": KEYS},
            TrustPolicy("SSH", KEYS, "gov/signers at cccccccccccc"),
        ),
        (
            {
                "fleet.yaml": SSH_FP.encode(),
                "gov/signers": KEYS,
            },
            TrustPolicy("SSH", KEYS, "", first_parent=True),
        ),
    ],
)
def test_declared(files: dict[str, bytes], expected: TrustPolicy | None) -> None:
    policy = policies(files).policy_of(C)
    assert policy == expected
    if policy is not None and expected is not None and expected.origin:
        assert policy.origin == expected.origin


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"fleet.yaml": SSH.encode()},
            'fleet.yaml at cccccccccccc: spec.verification.allowedSignersFile: "gov/signers" '
            "is not a file at commit cccccccccccc",
        ),
        (
            {"fleet.yaml": (SSH + "  verification: again\n").encode()},
            "the verification settings of commit cccccccccccc cannot be read: fleet.yaml",
        ),
        (
            {"fleet.yaml": (HEAD + "spec: {verification: {mode: SSH}}\n").encode()},
            "the verification settings of commit cccccccccccc cannot be read: fleet.yaml",
        ),
    ],
)
def test_unreadable_settings_fail_closed(files: dict[str, bytes], message: str) -> None:
    with pytest.raises(PolicyError) as caught:
        policies(files).policy_of(C)
    assert str(caught.value).startswith(message), caught.value


def test_operator_file_replaces_the_keys(tmp_path: Path) -> None:
    path = tmp_path / "signers"
    path.write_bytes(b"bob@example.invalid ssh-ed25519 AAAA\n")
    operator = operator_policy(path)
    assert (operator.mode, operator.origin) == ("SSH", f"--allowed-signers {path}")
    got = policies({"fleet.yaml": SSH_FP.encode()}, operator).policy_of(C)  # file missing: fine
    assert got == TrustPolicy("SSH", operator.allowed, "", first_parent=True)
    assert policies({}, operator).policy_of(C) == operator
    armored = tmp_path / "keys.asc"
    armored.write_bytes(b"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEZ\n")
    assert operator_policy(armored).mode == "GPG"


def test_each_commit_is_read_once() -> None:
    calls: list[str] = []

    def read(commit: str, path: str) -> bytes | None:
        calls.append(path)
        return {"fleet.yaml": SSH.encode(), "gov/signers": KEYS}.get(path)

    cache = SourcePolicies(read)
    assert cache.policy_of(C) == cache.policy_of(C)
    assert calls == ["fleet.yaml", "gov/signers"]
