"""The hub loop (DESIGN.md §3): fetch, run the pure pass, commit the output tree, push.

`Hub.run_once` is one level-triggered pass against a Git remote: fetch the source branch, the
output branch and the agents' status branches into a private bare mirror; skip when the source
commit and the reports are those the output tip already records; refuse a rewritten source
history until an operator accepts it and hold a source tip whose signatures do not verify (both
recorded on the output branch, `reconciler.sourcehold`); otherwise render with
`reconciler.pass_.reconcile`, commit only when the tree changed, and push fast-forward only. A
rejected push means another writer moved: fetch, recompute, retry with capped backoff and jitter.
`Hub.run` repeats passes on a timer or when triggered, coalescing triggers that arrive during a
pass into one more pass. Its settings (`HubConfig`) and what a pass did (`PassReport`) are
`reconciler.hubconfig`'s, re-exported here.
A new source commit's history (is the last reconciled one its ancestor, which commits are new)
is walked through the mirror's long-running `cat-file` (`gitfleet.repo.commitwalk`), which also
reads the source files and the reports: most passes start no git process to read.
Agents' reports are read only from status commits the hub has not read yet; a report that differs from the cluster's last only
in its heartbeat reads that line alone (`gitfleet.load.report.reread_agent_report`). A pass also runs, without new input, when a rollout timer it recorded
(`Gitfleet-Wakeup`, e.g. unavailablePeriodSeconds) is due; it commits only what changed.
Called by `gitfleet reconcile`.
"""

from __future__ import annotations

import hashlib
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime

from gitfleet.api.conditions import format_time, parse_time
from gitfleet.api.errors import FleetError, describe_exception
from gitfleet.api.report import AgentReport
from gitfleet.load.report import ReadReport, read_status_report
from gitfleet.repo.commitwalk import learn_history
from gitfleet.repo.gitcmd import GitError, remember_written, remembered_peels
from gitfleet.repo.gitread import GitTree
from gitfleet.repo.gitwrite import commit_files
from gitfleet.repo.mirror import Mirror
from gitfleet.repo.signatures import CommitFiles
from gitfleet.repo.trailers import compose_message, parse_trailers
from gitfleet.repo.treefiles import TreeFiles, WrittenOutput
from reconciler.commitmsg import add_driver_trailers, describe_changes
from reconciler.heap import HeapKeeper
from reconciler.hubconfig import HubConfig as HubConfig
from reconciler.hubconfig import PassReport as PassReport
from reconciler.hubinputs import OlderFleets, SourceFleets, SourceGate
from reconciler.lastpass import LastPass
from reconciler.pass_ import reconcile
from reconciler.sourcehold import Refusal, Writer, record_refusal
from reconciler.state import read_state
from reconciler.steptimer import StepTimer

SOURCE_TRAILER = "Gitfleet-Source"
REPORTS_TRAILER = "Gitfleet-Reports"
WAKEUP_TRAILER = "Gitfleet-Wakeup"
"""When a rollout timer of this output is due (the hub passes again then, even without input)."""
_TRACKING = "refs/remotes/origin/"
"""Where the hub's mirror keeps the remote's branches (`_refspecs`)."""
STATUS_PREFIX = f"{_TRACKING}gitfleet/status/"
MAX_PUSH_ATTEMPTS = 64
"""Push attempts per pass. A rejection means another writer moved the output branch (it only
moves forward), so the fleet is progressing: the pass recomputes from the new state and retries
with capped backoff and jitter until it commits or finds its inputs already rendered. Under a
busy author and a second hub, 8 attempts were lost in a row now and then (issue 14)."""
_ReadReport = tuple[str, "ReadReport | None"]
"""(status branch commit, its report file as read: None when it has none)."""


def _last(trailers: Mapping[str, list[str]], key: str) -> str | None:
    values = trailers.get(key)
    return values[-1] if values else None


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


class Hub:
    """The reconciler service for one fleet repository."""

    def __init__(
        self,
        config: HubConfig,
        *,
        clock: Callable[[], datetime] = _now,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.mirror = Mirror.open(config.cache_dir, config.url)
        self._clock, self._sleep = clock, sleep
        self._rng = rng or random.Random()
        self.unavailable_since: datetime | None = None
        self._last_inputs: tuple[str, str, str | None] | None = None
        self._steps = StepTimer()
        self._output = WrittenOutput()
        """The output commit this hub last wrote: its listing and files."""
        self._trailers: tuple[str, dict[str, list[str]]] | None = None
        """The last output commit read and its trailers."""
        self._pushed: tuple[str, str] | None = None
        """The commit this hub pushed last and its tree (reachable, so never pruned)."""
        self._reports: dict[str, _ReadReport] = {}
        """cluster -> (status commit, its report, problems): a report is read and parsed once."""
        self.next_wakeup: datetime | None = None
        """The earliest rollout timer of the last pass (None: none)."""
        self._wakeup_known = False
        self._gate = SourceGate(self.mirror.path, config.allowed_signers, self.mirror.objects)
        self._heap = HeapKeeper() if config.manage_heap else None
        self.older = OlderFleets(self.mirror.path)
        self._sources = SourceFleets()
        """The fleet at the source tip, loaded once (`reconciler.hubinputs`)."""
        self._last_pass: LastPass | None = None
        """What the last pass that ran was given (a new source commit that changes none of
        it, e.g. a README edit, makes no pass: `reconciler.lastpass`)."""

    def _refspecs(self) -> list[str]:
        src, out = self.config.source_branch, self.config.output_branch
        return [
            f"+refs/heads/{src}:refs/remotes/origin/{src}",
            f"+refs/heads/{out}:refs/remotes/origin/{out}",
            f"+refs/heads/gitfleet/status/*:{STATUS_PREFIX}*",
        ]

    @staticmethod
    def _status_refs(tips: Mapping[str, tuple[str, str]]) -> tuple[dict[str, str], str]:
        """The status branches' tips (from the pass's listing), and a digest of them."""
        refs = {name: oid for name, (oid, _) in tips.items() if name.startswith(STATUS_PREFIX)}
        text = "\n".join(f"{name} {oid}" for name, oid in refs.items())
        return refs, hashlib.sha256(text.encode()).hexdigest()[:16]

    def _recorded(self, output: str | None) -> dict[str, list[str]]:
        """The trailers of the output commit (a commit's message never changes: read once)."""
        if output is None:
            return {}
        if self._trailers is not None and self._trailers[0] == output:
            return self._trailers[1]
        entries = self.mirror.log(output, max_count=1)
        recorded = parse_trailers(entries[0].message) if entries else {}
        self._trailers = (output, recorded)
        return recorded

    def _read_reports(
        self, clusters: Mapping[str, object], refs: Mapping[str, str]
    ) -> tuple[dict[str, AgentReport], tuple[FleetError, ...]]:
        """The latest valid report of every declared cluster's status branch (the tips the
        pass listed, `refs`). Only new status commits are read, all through one
        `git cat-file --batch` process (a poll of a large fleet brings hundreds)."""
        reports: dict[str, AgentReport] = {}
        errors: list[FleetError] = []
        read: dict[str, _ReadReport] = {}
        with CommitFiles(self.mirror.path, self.mirror.objects) as files:
            for ref, commit in refs.items():
                cluster = ref.removeprefix(STATUS_PREFIX)
                if cluster not in clusters:
                    continue
                known = self._reports.get(cluster)
                if known is None or known[0] != commit:
                    last = known[1] if known is not None else None
                    known = (commit, read_status_report(files, cluster, commit, last))
                read[cluster] = known
                if known[1] is not None:
                    errors += known[1].problems
                    if known[1].report is not None:
                        reports[cluster] = known[1].report
        self._reports = read
        return reports, tuple(errors)

    def _check_history(self, source: str, recorded: Mapping[str, list[str]]) -> str | None:
        last = _last(recorded, SOURCE_TRAILER)
        if last is None or last == source or self.config.accept_source_rewrite:
            return None
        if self.mirror.resolve(last) is not None and self.mirror.is_ancestor(last, source):
            return None
        return (
            f"the source branch {self.config.source_branch} was rewritten: {source[:12]} does not "
            f"descend from {last[:12]}, the last reconciled source commit. The output keeps the "
            "last render; re-run with --accept-source-rewrite to render the new history."
        )

    def _attempt(self) -> PassReport:
        """Fetch, decide, render, commit and push once (object-id peels asked once; the
        commit this hub pushed last is known without asking)."""
        with remembered_peels():
            if self._pushed is not None:
                remember_written(self.mirror.path, *self._pushed, None)
            report = self._attempt_once()
            # After every fetch, not only after a commit: the fetch leaves `maintenance` to us.
            self.mirror.maintain()  # folds the packs fast-import leaves; `gc --auto` the rest
            self._steps.lap("maintain")
            return report

    def _attempt_once(self) -> PassReport:
        """Fetch, decide, render, commit and push once."""
        self._steps.start()
        self.mirror.fetch(self._refspecs(), maintenance=False)  # `maintain` runs after
        self._steps.lap("fetch")
        src, out = self.config.source_branch, self.config.output_branch
        tips = self.mirror.list_tips(_TRACKING)  # source, output and status tips in one call
        source = self.mirror.tip_commit(tips, f"{_TRACKING}{src}")
        if source is None:
            return PassReport("no-source", message=f"source branch {src} does not exist")
        output = self.mirror.tip_commit(tips, f"{_TRACKING}{out}")
        recorded = self._recorded(output)
        last = _last(recorded, SOURCE_TRAILER)
        if last is not None:  # one object read answers the history questions below, mostly
            learn_history(self.mirror.path, self.mirror.objects, source, last)
        problem = self._check_history(source, recorded)
        if problem is not None:
            rewritten = Refusal(source, last, "SourceRewritten", problem)
            return self._refuse(rewritten, output, "source-rewritten", problem)
        trusted = last if last and self.mirror.resolve(last) is not None else None
        verdict = self._gate.verify(source, trusted)
        if not verdict.ok:
            refusal = Refusal.of(source, last, verdict.message)
            return self._refuse(refusal, output, "source-verification-failed", verdict.message)
        refs, digest = self._status_refs(tips)
        recorded_inputs = (_last(recorded, SOURCE_TRAILER), _last(recorded, REPORTS_TRAILER))
        unchanged = (source, digest, output) == self._last_inputs or recorded_inputs == (
            source,
            digest,
        )
        if unchanged and not self._timer_due(recorded):
            return PassReport("skipped", source, output, message="inputs unchanged")
        report = self._render_and_push(source, output, refs, digest)
        self._last_inputs = (source, digest, report.output)
        if self._heap is not None:
            self._heap.after_pass()
        return report

    def _refuse(self, refusal: Refusal, output: str | None, outcome: str, why: str) -> PassReport:
        """Hold the source tip: the output keeps its render and records why (`sourcehold`)."""
        config = self.config
        writer = Writer(self.mirror, config.output_branch, config.identity, config.sign_key)
        held, note = record_refusal(writer, output, refusal, self._clock())
        return PassReport(outcome, refusal.refused, held or output, message=why + note)

    def _timer_due(self, recorded: Mapping[str, list[str]]) -> bool:
        """A rollout timer is due: the last pass's, or (after a restart) the output's trailer."""
        wakeup = self.next_wakeup
        if not self._wakeup_known:
            text = _last(recorded, WAKEUP_TRAILER)
            try:
                wakeup = parse_time(text) if text else None
            except ValueError:
                wakeup = None
        return wakeup is not None and wakeup <= self._clock()

    def _render_and_push(
        self, source: str, output: str | None, refs: Mapping[str, str], digest: str
    ) -> PassReport:
        recorded = self._recorded(output)
        since = _last(recorded, SOURCE_TRAILER)  # approvals come after it
        fleet = self._sources.fleet(self.mirror.path, source, since, self.mirror.objects)
        self._steps.lap("load")
        last = self._last_pass
        if last and last.repeated_by(fleet, digest, output) and not self._timer_due(recorded):
            return PassReport("unchanged", source, output, last.errors, "no pass input changed")
        prior_tree = self._open_output(output)
        try:
            mine = self._output.files(output)  # the files this hub wrote, from memory
            prior_files: Mapping[str, bytes] = (
                mine if mine is not None else TreeFiles(prior_tree) if prior_tree else {}
            )
            prior, _problems = read_state(prior_files)
            reports, report_errors = self._read_reports(fleet.clusters, refs)
            history = self.older.history(fleet, prior)
            self._steps.lap("prior")
            result = reconcile(fleet, prior, None, self._clock(), reports, history=history)
            self._steps.lap("pass")
            self._steps.stages = (result.stage_timings, result.stage_cpu_timings)
            listing, maybe = self._output.changes(output, result.files)
            summary = describe_changes(prior_tree, result.files, listing=listing, candidates=maybe)
            self._steps.lap("diff")
        finally:
            if prior_tree is not None:
                prior_tree.close()
        self.next_wakeup, self._wakeup_known = result.next_wakeup, True
        subject, body, trailers = summary.message_parts(source)
        trailers[REPORTS_TRAILER] = digest
        if result.next_wakeup is not None:
            trailers[WAKEUP_TRAILER] = format_time(result.next_wakeup)
        add_driver_trailers(trailers, result.trailers)
        author = self._sources.author(source, self._author_of)
        if author:
            trailers["Gitfleet-Source-Author"] = author
        message = compose_message(subject, body, trailers)
        written = commit_files(
            self.mirror.path,
            output,
            summary.changes,
            message,
            self.config.identity,
            sign_key=self.config.sign_key,
            known=self._output.listing(output),
            keep_pack=True,  # no unpack-objects; `maintain` folds the small packs
        )
        self._steps.lap("commit")
        self._output.wrote(written.commit, result.files, listing)
        errors = result.errors + report_errors
        if not written.changed:
            self._last_pass = LastPass(fleet, digest, output, errors)
            return PassReport("unchanged", source, output, errors, "nothing to commit")
        pushed = self.mirror.push_fast_forward(written.commit, self.config.output_branch, output)
        if pushed.rejected:
            raise _Rejected(pushed.message)
        if not pushed.ok:
            raise GitError(pushed.message)
        self._trailers = (written.commit, parse_trailers(message))  # the next pass's output
        self._pushed = (written.commit, written.tree)
        self._steps.lap("push")
        self._last_pass = LastPass(fleet, digest, written.commit, errors)
        return PassReport("committed", source, written.commit, errors, subject)

    def _author_of(self, source: str) -> str | None:
        entries = self.mirror.log(source, max_count=1)
        return f"{entries[0].author_name} <{entries[0].author_email}>" if entries else None

    def _open_output(self, output: str | None) -> GitTree | None:
        """The previous output commit; listed from memory when this hub wrote it."""
        if output is None:
            return None
        listed = self._output.listing(output)
        if listed is not None:
            return GitTree.listed(self.mirror.path, output, listed, self.mirror.objects)
        objects = self.mirror.objects
        return GitTree.open(self.mirror.path, output, sizes=False, objects=objects)  # never sized

    def run_once(self) -> PassReport:
        """One pass, retried (fetch, recompute) while another writer keeps moving the branch."""
        for attempt in range(1, MAX_PUSH_ATTEMPTS + 1):
            try:
                report = self._attempt()
            except _Rejected as exc:
                self._sleep(self._backoff(attempt))
                last = str(exc)
                continue
            except GitError as exc:
                if self.unavailable_since is None:
                    self.unavailable_since = self._clock()
                return PassReport(
                    "source-unavailable",
                    message=f"SourceUnavailable since {self.unavailable_since.isoformat()}: {exc}",
                )
            self.unavailable_since = None
            steps = self._steps
            return replace(
                report,
                attempts=attempt,
                timings=tuple(steps.timings),
                cpu_timings=tuple(steps.cpu_timings),
                stage_timings=steps.stages[0],
                stage_cpu_timings=steps.stages[1],
            )
        return PassReport(
            "rejected",
            message=f"push still rejected after {MAX_PUSH_ATTEMPTS} attempts: {last}",
            attempts=MAX_PUSH_ATTEMPTS,
        )

    def _backoff(self, attempt: int) -> float:
        """Capped exponential backoff with full jitter (seconds)."""
        return self._rng.uniform(0, min(5.0, 0.05 * 2**attempt))

    def run(
        self,
        interval: float,
        trigger: threading.Event,
        stop: threading.Event,
        on_report: Callable[[PassReport], None],
    ) -> None:
        """Passes until `stop` is set: one per `interval` seconds, or sooner when `trigger` is
        set. A trigger that arrives during a pass causes exactly one more pass. An unexpected
        exception never ends the loop: it is reported (outcome `error`) and retried with
        backoff, like an unreachable source."""
        failures = 0
        while not stop.is_set():
            trigger.clear()
            try:
                report = self.run_once()
            except Exception as exc:  # report, back off, retry; never exit
                message = f"unexpected error, retrying with backoff: {describe_exception(exc)}"
                report = PassReport("error", message=message)
            on_report(report)
            retried = ("source-unavailable", "rejected", "error")
            failures = failures + 1 if report.outcome in retried else 0
            wait = interval if failures == 0 else min(interval * 2**failures, 300.0)
            if self.next_wakeup is not None:  # wake up when a rollout timer is due
                due = (self.next_wakeup - self._clock()).total_seconds()
                wait = max(min(wait, due), 0.0)
            if trigger.is_set():
                continue
            trigger.wait(wait)


class _Rejected(Exception):
    """The output branch moved under us."""
