"""The hub loop's settings and the outcome of one of its passes (`reconciler.loop.Hub`).

`HubConfig` says where the hub reads and writes and how (source and output branches, identity,
keys, whether a rewritten source history is accepted); `PassReport` is what one
`Hub.run_once` did (outcome, source and output commits, errors, timings), printed by
`gitfleet reconcile`. Plain frozen data; both are re-exported by `reconciler.loop`, which every
caller imports them from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gitfleet.api.errors import FleetError
from gitfleet.repo.gitwrite import Identity


@dataclass(frozen=True)
class HubConfig:
    """Where the hub reads and writes."""

    url: str
    cache_dir: Path
    source_branch: str = "main"
    output_branch: str = "gitfleet/rendered"
    identity: Identity = field(default_factory=lambda: Identity("gitfleet", "gitfleet@localhost"))
    accept_source_rewrite: bool = False
    """Continue after the source branch was rewritten (force-pushed)."""
    allowed_signers: Path | None = None
    """The operator's allowed signers file: replaces the keys of `spec.verification`, and
    turns verification on (README "Signed commits")."""
    sign_key: Path | None = None
    """SSH private key file the hub signs its output commits with."""
    manage_heap: bool = False
    """Keep the garbage collector off the hub's caches between passes (`reconciler.heap`;
    process-wide, so `gitfleet reconcile` turns it on, embedders and tests leave it off)."""


@dataclass(frozen=True)
class PassReport:
    """What one `run_once` did."""

    outcome: str
    """committed, unchanged, skipped, source-rewritten, source-verification-failed,
    source-unavailable, no-source, rejected or error (an unexpected exception; `run` retries it
    with backoff)."""
    source: str | None = None
    output: str | None = None
    errors: tuple[FleetError, ...] = ()
    message: str = ""
    attempts: int = 1
    timings: tuple[tuple[str, float], ...] = ()
    """Seconds per step of the last attempt, in order: fetch, load, prior (the last output's
    state, the agents' reports and older snapshots read), pass, diff, commit, push, maintain (the
    steps it reached)."""
    cpu_timings: tuple[tuple[str, float], ...] = ()
    """CPU seconds of the same steps: the hub process and the git processes it waited for
    (`reconciler.steptimer`)."""
    stage_timings: tuple[tuple[str, float], ...] = ()
    """Seconds per stage of the pass step (`reconciler.pass_.STAGES`), when the attempt ran one."""
    stage_cpu_timings: tuple[tuple[str, float], ...] = ()
    """CPU seconds of the same stages."""
