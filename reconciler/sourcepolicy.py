"""The verification policy a source commit declares, or the operator's `--allowed-signers` file.

`SourcePolicies.policy_of(commit)` reads `fleet.yaml` at `commit` (the Fleet's
`spec.verification`; settings are read from `fleet.yaml` before any rendering, like the limits)
and the allowed signers file it names, at the same commit, through an injected reader, and
returns a `TrustPolicy` (None: verification off). It is only ever asked about commits already
trusted (see `gitfleet.repo.trust`). A `fleet.yaml` that mentions `verification` but cannot be
read, or an allowed signers file missing at that commit, fails closed (`PolicyError`: nothing
after that commit verifies until the operator passes `--allowed-signers`). The operator's file
replaces the keys of every commit (its format, SSH allowed-signers or armored GPG keys, is
recognised from the text). Called by the hub loop.
"""

from __future__ import annotations

from collections.abc import Callable

from gitfleet.api.fleet import FleetVerification
from gitfleet.api.limits import DEFAULT_LIMITS
from gitfleet.load.snapshot import read_fleet_settings
from gitfleet.load.yamlio import parse_documents
from gitfleet.repo.signatures import TrustPolicy

FLEET_FILE = "fleet.yaml"
Reader = Callable[[str, str], bytes | None]
"""(commit, path) -> the file's bytes at that commit, None when absent."""
_MEMO = 256


class PolicyError(ValueError):
    """The verification settings of a trusted commit cannot be read (fail closed)."""


class SourcePolicies:
    """Policies of trusted source commits, remembered by commit id."""

    def __init__(
        self,
        read: Reader,
        operator: TrustPolicy | None = None,
        memo: dict[str, TrustPolicy | None] | None = None,
    ) -> None:
        self._read = read
        self._operator = operator
        self._memo = memo if memo is not None else {}
        """Shared between instances (one per pass, each with its own reader)."""

    def policy_of(self, commit: str) -> TrustPolicy | None:
        """The policy `commit` declares (the operator's keys replace its keys)."""
        if commit not in self._memo:
            if len(self._memo) >= _MEMO:
                self._memo.clear()
            self._memo[commit] = self._policy(commit)
        return self._memo[commit]

    def _policy(self, commit: str) -> TrustPolicy | None:
        if self._operator is None:
            return self._declared(commit)
        try:
            verification = self._verification(commit)
        except PolicyError:
            verification = None
        first_parent = verification is not None and verification.commits == "FirstParent"
        operator = self._operator
        return TrustPolicy(operator.mode, operator.allowed, operator.origin, first_parent)

    def _declared(self, commit: str) -> TrustPolicy | None:
        verification = self._verification(commit)
        if verification is None or verification.mode == "None":
            return None
        path = verification.allowed_signers_file
        where = f"{FLEET_FILE} at {commit[:12]}: spec.verification.allowedSignersFile"
        if path is None:
            raise PolicyError(f"{where}: is required when mode is {verification.mode}")
        data = self._read(commit, path)
        if data is None:
            raise PolicyError(f'{where}: "{path}" is not a file at commit {commit[:12]}')
        first_parent = verification.commits == "FirstParent"
        return TrustPolicy(verification.mode, data, f"{path} at {commit[:12]}", first_parent)

    def _verification(self, commit: str) -> FleetVerification | None:
        raw = self._read(commit, FLEET_FILE)
        if raw is None:
            return None
        text = raw.decode("utf-8", "replace")
        docs, errors = parse_documents(FLEET_FILE, text, DEFAULT_LIMITS)
        fleet, problems = read_fleet_settings(docs)
        trouble = [*errors, *problems]
        if trouble and b"verification" in raw:
            shown = "; ".join(str(e) for e in trouble[:3])
            raise PolicyError(
                f"the verification settings of commit {commit[:12]} cannot be read: {shown}"
            )
        return fleet.spec.verification
