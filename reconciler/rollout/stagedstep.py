"""One staged update run's pass in progress: its working status and what the pass asks for.

A `Step` carries the run (`stagedstatus.RunRef`), its status document being advanced, the
placement's view, the approvals and the pass's `now`, and collects what the pass asks of the
placement (clusters to move to the run's snapshot, bindings to delete), approval request
documents, commit trailers, wakeups and errors. Made by `reconciler.rollout.staged`, advanced by
`reconciler.rollout.stagedexec`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reconciler.rollout import stagedapproval as ap
from reconciler.rollout import stagedstatus as st
from reconciler.rollout.model import BindingView, PlacementView
from reconciler.rollout.stagedstatus import set_cond


@dataclass
class Step:
    """One run's pass: its working status and what the pass asks for."""

    ref: st.RunRef
    status: dict[str, Any]
    view: PlacementView
    generation: int
    now: datetime
    approvals: ap.Approvals
    prior: Mapping[str, bytes]
    moves: dict[str, int] = field(default_factory=dict)
    deletes: set[str] = field(default_factory=set)
    requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    trailers: list[tuple[str, str]] = field(default_factory=list)
    wakeups: list[datetime] = field(default_factory=list)
    errors: list[tuple[str, int | None, str, str]] = field(default_factory=list)

    @property
    def stopping(self) -> bool:
        return self.ref.run.spec.state == "Stop"

    @property
    def target(self) -> int:
        return int(self.status["resourceSnapshotIndexUsed"])

    def cond(self, holder: dict[str, Any], type_: str, status: str, reason: str, msg: str) -> None:
        set_cond(holder, type_, status, reason, msg, self.generation, self.now)

    def run_cond(self, type_: str, status: str, reason: str, msg: str) -> None:
        self.cond(self.status, type_, status, reason, msg)

    def binding(self, cluster: str) -> BindingView | None:
        return next((b for b in self.view.bindings if b.cluster == cluster), None)
