"""The hub's chain of trust over source commits: which new commits must verify, against what.

`verify_source(repo, trusted, tip, policy_of)` decides whether the hub may reconcile `tip`.
`trusted` is the last reconciled source commit (the hub verified it, or verification was off);
`policy_of(commit)` is the verification policy a commit declares (its `fleet.yaml` and allowed
signers file; None: verification off; the operator's `--allowed-signers` replaces it).

The first-parent chain from `trusted` to `tip` is walked oldest first; each commit on it, with
the commits it merges that are not reachable from `trusted` (unless the policy says
`FirstParent`), must carry a good signature under the policy of its predecessor on the chain,
starting with `trusted`'s own. So keys and settings come only from already-verified commits: a
commit that adds its author's key to the allowed file is checked against the file before it,
and a key removed by a verified commit stops counting for the commits after it. Runs of commits
under an unchanged policy are checked with one `git log`. Without a trusted commit (the first
pass, or a source history rewritten past it) only the tip is checked, under its own policy
(trust on first use; the operator's file avoids that). Called by the hub loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gitfleet.repo.signatures import Signature, TrustPolicy, check_signatures, first_parent_chain

PolicyOf = Callable[[str], TrustPolicy | None]


@dataclass(frozen=True)
class Verdict:
    """Whether the tip may be reconciled; when not, the first failing commit and why."""

    ok: bool
    checked: int = 0
    """Commits whose signature was checked."""
    failed: Signature | None = None
    message: str = ""


def verify_source(repo: Path, trusted: str | None, tip: str, policy_of: PolicyOf) -> Verdict:
    """May `tip` be reconciled, given the last trusted commit? (GitError when git fails.)"""
    if trusted == tip:
        return Verdict(True)
    if trusted is None:
        policy = policy_of(tip)
        if policy is None:
            return Verdict(True)
        return _judge(check_signatures(repo, tip, (), policy), policy, 0)
    chain = first_parent_chain(repo, tip, trusted)
    checked, start, base = 0, 0, trusted
    while start < len(chain):
        policy = policy_of(base)  # PolicyError: the settings of a trusted commit are unreadable
        end = start
        while end + 1 < len(chain) and _same(policy_of, chain[end], policy):
            end += 1  # chain[end + 1] is judged by chain[end]'s policy: the same one
        if policy is not None:
            exclude = (base,) if base == trusted else (base, trusted)
            found = check_signatures(repo, chain[end], exclude, policy)
            verdict = _judge(found, policy, checked)
            if not verdict.ok:
                return verdict
            checked = verdict.checked
        base, start = chain[end], end + 1
    return Verdict(True, checked)


def _same(policy_of: PolicyOf, commit: str, policy: TrustPolicy | None) -> bool:
    """`commit` declares `policy` (an unreadable declaration ends the run; it is reported
    when a commit is judged by it)."""
    try:
        return policy_of(commit) == policy
    except ValueError:
        return False


def _judge(signatures: list[Signature], policy: TrustPolicy, before: int) -> Verdict:
    """The oldest commit without a good signature fails the whole range."""
    bad = [s for s in signatures if not s.good]
    if not bad:
        return Verdict(True, before + len(signatures))
    first = bad[-1]
    more = f" ({len(bad)} commits fail)" if len(bad) > 1 else ""
    message = (
        f"SourceVerificationFailed: {first.describe()}{more}; {policy.mode} keys from "
        f"{policy.origin}. The output keeps the last render; replace the commit with a signed "
        "one (re-commit with -S and push; the branch may move back to the last reconciled commit)."
    )
    return Verdict(False, before + len(signatures), first, message)
