"""The agent's Git side: pull `clusters/<me>/` from the output branch, apply, push the report.

`Agent.run_once` fetches the output branch and the agent's own status branch into a private bare
mirror, refuses an output commit that does not descend from the one it applied last (a replay or
a downgrade: it keeps enforcing the last applied commit), reads only `clusters/<me>/`, calls the
pure-ish `run.run_once` against the cluster, and pushes `report.yaml` to
`gitfleet/status/<me>` — fast-forward only, and only when the report changed or a heartbeat is
due; a rejected push is fetched, rebased onto the branch's new tip and retried. With
`require_signed_output`, an output commit whose signature git does not verify against the
operator's allowed signers file is not applied: the cluster stays as it is and the report says
why (`OutputVerificationFailed`). Called by `gitfleet agent`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gitfleet.agent.client import ClusterClient, ClusterError
from gitfleet.agent.inventory import read_applied_commit
from gitfleet.agent.report import report_changed
from gitfleet.agent.run import AgentOptions, report_without_output, run_once
from gitfleet.api import parse_time
from gitfleet.api.errors import describe_exception
from gitfleet.api.output import cluster_dir
from gitfleet.api.report import AgentReport
from gitfleet.load.report import REPORT_FILE, read_agent_report, report_text, status_branch
from gitfleet.repo.gitcmd import GitError
from gitfleet.repo.gitread import GitTree, list_paths
from gitfleet.repo.gitwrite import Identity, commit_files
from gitfleet.repo.mirror import Mirror
from gitfleet.repo.signatures import TrustPolicy, check_signatures, operator_policy
from gitfleet.repo.trailers import compose_message

PUSH_ATTEMPTS = 5
"""Report pushes tried per pass when the status branch keeps moving under the agent."""
PUSH_BACKOFF_CAP = 5.0
"""Longest wait (seconds) between two report push attempts."""


@dataclass(frozen=True)
class AgentConfig:
    """Where one member cluster's agent reads and writes."""

    url: str
    cluster: str
    cache_dir: Path
    output_branch: str = "gitfleet/rendered"
    heartbeat: timedelta = timedelta(seconds=60)
    identity: Identity = field(
        default_factory=lambda: Identity("gitfleet-agent", "agent@gitfleet.invalid")
    )
    require_signed_output: bool = False
    """Apply only output commits signed by a key of `allowed_signers`."""
    allowed_signers: Path | None = None
    """SSH allowed-signers file (or ASCII-armored GPG public keys) for the output commits."""


@dataclass(frozen=True)
class AgentPass:
    """What one pass did."""

    outcome: str
    """pushed, unchanged, refused-downgrade, refused-unsigned (the output commit's signature
    did not verify), no-output, unavailable, push-failed (the report could not be pushed:
    refused, or still rejected after retries; the next pass tries again) or error (an
    unexpected exception; `run` retries it with backoff)."""
    report: AgentReport | None
    message: str = ""


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


class Agent:
    """The agent loop of one member cluster."""

    def __init__(
        self,
        config: AgentConfig,
        client: ClusterClient,
        *,
        clock: Callable[[], datetime] = _now,
        options: AgentOptions | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.client = client
        self.mirror = Mirror.open(config.cache_dir, config.url)
        self._clock = clock
        self._options = options
        self._sleep = sleep
        self._random = rng or random.Random()
        self._policy: TrustPolicy | None = None
        if config.require_signed_output:
            if config.allowed_signers is None:
                raise ValueError("require_signed_output needs an allowed signers file")
            self._policy = operator_policy(config.allowed_signers)
        self._verified: tuple[str, str] | None = None
        """(output commit, "" when its signature is good, else why not)."""

    @property
    def _status_branch(self) -> str:
        return status_branch(self.config.cluster)

    def _previous(self) -> tuple[str | None, AgentReport | None]:
        commit = self.mirror.resolve(f"refs/remotes/origin/{self._status_branch}")
        if commit is None:
            return None, None
        with GitTree.open(self.mirror.path, commit) as tree:
            if REPORT_FILE not in tree.files():
                return commit, None
            report, _errors = read_agent_report(
                tree.read(REPORT_FILE), self.config.cluster, branch=self._status_branch
            )
        return commit, report

    def _files(self, commit: str) -> dict[str, bytes]:
        """This cluster's folder of the output commit: only that folder is listed (the whole
        tree holds every cluster's files: ~470k entries at 1,000 clusters)."""
        listing = list_paths(self.mirror.path, commit, [cluster_dir(self.config.cluster)])
        with GitTree.listed(self.mirror.path, commit, listing) as tree:
            return {p: tree.read(p) for p in sorted(listing)}

    def _applied(self, previous: AgentReport | None) -> str:
        """The last applied output commit: as recorded on the cluster (it survives a restart
        with an empty cache and a rewritten status branch), else as the last report says."""
        try:
            recorded = read_applied_commit(self.client)
        except ClusterError:
            recorded = None
        return recorded or (previous.output_commit if previous else "")

    def _target(self, output: str, previous: AgentReport | None) -> tuple[str | None, str]:
        """The commit to enforce and a note: the new output, or the last applied one when the
        new one does not descend from it (None: that one is not even in the fetched history,
        so nothing is applied at all)."""
        applied = self._applied(previous)
        if not applied or applied == output:
            return output, ""
        if self.mirror.resolve(applied) is not None and self.mirror.is_ancestor(applied, output):
            return output, ""
        if self.mirror.resolve(applied) is None:
            return None, (
                f"refused output {output[:12]}: the applied commit {applied[:12]} is not in its "
                "history (replay or rewritten branch); the cluster keeps its applied state"
            )
        return applied, (
            f"refused output {output[:12]}: it does not descend from the applied {applied[:12]} "
            "(replay or downgrade); still enforcing the applied commit"
        )

    def run_once(self) -> AgentPass:
        out = self.config.output_branch
        try:
            self.mirror.fetch(
                [
                    f"+refs/heads/{out}:refs/remotes/origin/{out}",
                    f"+refs/heads/{self._status_branch}:refs/remotes/origin/{self._status_branch}",
                ]
            )
        except GitError as exc:
            return AgentPass(
                "unavailable",
                None,
                f"Git remote unreachable, keeping the last applied state: {exc}",
            )
        status_commit, previous = self._previous()
        output = self.mirror.resolve(f"refs/remotes/origin/{out}")
        now = self._clock()
        if output is None:
            note = f"output branch {out} does not exist yet"
            report = report_without_output(
                self.client, self.config.cluster, previous, now, note, self._options
            )
            failed = self._push(report, status_commit) if self._due(previous, report, now) else ""
            if failed:
                return AgentPass("push-failed", report, f"{note}; {failed}")
            return AgentPass("no-output", report, note)
        unsigned = self._signature_problem(output)
        if unsigned:
            report = report_without_output(
                self.client,
                self.config.cluster,
                previous,
                now,
                unsigned,
                self._options,
                reason="OutputVerificationFailed",
            )
            failed = self._push(report, status_commit) if self._due(previous, report, now) else ""
            return AgentPass("refused-unsigned", report, f"{unsigned}; {failed}".rstrip("; "))
        target, note = self._target(output, previous)
        if target is None:
            return AgentPass("refused-downgrade", previous, note)
        report = run_once(
            self.client,
            self.config.cluster,
            self._files(target),
            target,
            previous,
            now,
            self._options,
        )
        outcome = "refused-downgrade" if target != output else "pushed"
        if not self._due(previous, report, now):
            return AgentPass(
                "unchanged" if not note else outcome, report, note or "report unchanged"
            )
        failed = self._push(report, status_commit)
        if failed:
            return AgentPass("push-failed", report, f"{note}; {failed}" if note else failed)
        return AgentPass(outcome, report, note)

    def _signature_problem(self, output: str) -> str:
        """Why the output commit must not be applied ("" when it may, or nothing is required)."""
        if self._policy is None:
            return ""
        if self._verified is None or self._verified[0] != output:
            try:
                found = check_signatures(self.mirror.path, output, (), self._policy)
            except GitError as exc:  # not remembered: tried again next pass
                return f"cannot verify output {output[:12]}; the cluster keeps its state: {exc}"
            bad = [s.describe() for s in found if not s.good]
            self._verified = (output, bad[0] if bad else "")
        why = self._verified[1]
        if not why:
            return ""
        return (
            f"refused output {why}; keys from {self._policy.origin}. The cluster keeps its "
            "applied state"
        )

    def _due(self, previous: AgentReport | None, report: AgentReport, now: datetime) -> bool:
        if previous is None or report_changed(previous, report):
            return True
        return now - parse_time(previous.heartbeat_time) >= self.config.heartbeat

    def _push(self, report: AgentReport, parent: str | None) -> str:
        """Push the report fast-forward to the agent's own branch; "" when done, else why not.

        A rejected push means the branch moved (a restarted or duplicate agent, an operator):
        fetch it, put the report on top of its new tip (rebase) and retry with capped, jittered
        backoff. A refused push (permissions, a hook) is reported, never raised.
        """
        branch = self._status_branch
        message = compose_message(
            f"gitfleet-agent: report of {self.config.cluster}",
            trailers={"Gitfleet-Output": report.output_commit or "-"},
        )
        data = report_text(report)
        why = ""
        for attempt in range(PUSH_ATTEMPTS):
            written = commit_files(
                self.mirror.path, parent, {REPORT_FILE: data}, message, self.config.identity
            )
            if not written.changed:
                return ""
            try:
                pushed = self.mirror.push_fast_forward(written.commit, branch, parent)
            except GitError as exc:
                return f"the report push to {branch} was refused: {exc}"
            if pushed.ok:
                return ""
            why = pushed.message
            self._sleep(min(PUSH_BACKOFF_CAP, 0.2 * 2**attempt) * self._random.uniform(0.5, 1))
            try:
                self.mirror.fetch([f"+refs/heads/{branch}:refs/remotes/origin/{branch}"])
            except GitError as exc:
                return f"the report push to {branch} was rejected and refetching failed: {exc}"
            parent = self.mirror.resolve(f"refs/remotes/origin/{branch}")
        return f"the report push to {branch} was still rejected after {PUSH_ATTEMPTS} tries: {why}"

    def run(
        self, interval: float, stop: Callable[[], bool], on_pass: Callable[[AgentPass], None]
    ) -> None:
        """Passes every `interval` seconds until `stop()` is true. An unexpected exception never
        ends the loop: it is reported (outcome `error`) and the pass is retried with capped
        exponential backoff, as is an unreachable remote."""
        failures = 0
        while not stop():
            try:
                result = self.run_once()
            except Exception as exc:  # report, back off, retry; never exit
                message = f"unexpected error, retrying with backoff: {describe_exception(exc)}"
                result = AgentPass("error", None, message)
            on_pass(result)
            failures = failures + 1 if result.outcome in ("error", "unavailable") else 0
            wait = interval if failures == 0 else min(interval * 2**failures, 300.0)
            deadline = time.monotonic() + wait
            while not stop() and time.monotonic() < deadline:
                time.sleep(min(1.0, interval))
