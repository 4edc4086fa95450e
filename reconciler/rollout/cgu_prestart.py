"""ClusterGroupUpgrade before its start (spec/cluster-group-upgrade.md §5-§8): cluster selection,
managed placements, the remediation plan, `enable`, blocking CRs (explicit and implicit) and
partial-mode cluster filtering, as `PreStart.pre_start`. Used by `reconciler.rollout.cgu_run`.
"""

from __future__ import annotations

from collections.abc import Sequence

from gitfleet.api.cgu import (
    BLOCKING_MODE_ANNOTATION,
    CLUSTER_FILTERING_ANNOTATION,
)
from reconciler.rollout.cgu_base import (
    NO_CLUSTERS,
    RunnerBase,
    set_cond,
)
from reconciler.rollout.cgu_select import (
    NON_COMPLIANT,
    build_plan,
    compliance,
    computed_max_concurrency,
    go_list,
    is_report_diff,
    placement_key_of,
    select_clusters,
)
from reconciler.rollout.cgu_state import Target


class PreStart(RunnerBase):
    """§8.1 steps 1-9."""

    def pre_start(self) -> bool:
        """§8.1 steps 1-9; True when the CGU starts in this pass."""
        run, now, spec = self.run, self.ctx.now, self.inp.spec
        if self.inp.invalid is not None:
            run.conditions = {k: v for k, v in run.conditions.items() if k == "Validated"}
            set_cond(run, "Validated", "False", *self.inp.invalid, now)
            return False
        selection = select_clusters(spec, self.ctx.labels)
        for entry in selection.warnings:
            self.event("CguInvalidSelector", "", f"ignoring malformed cluster selector: {entry}")
        if selection.error is not None:
            for t in ("Validated", "Progressing"):
                run.conditions.pop(t, None)
            message = f"Unable to select clusters: {selection.error}"
            self.failure_event("ClustersSelected", message)
            set_cond(run, "ClustersSelected", "False", "ClusterNotFound", message, now)
            return False
        set_cond(
            run,
            "ClustersSelected",
            "True",
            "ClusterSelectionCompleted",
            "All selected clusters are valid",
            now,
        )
        clusters = list(selection.clusters)
        run.computed_max = computed_max_concurrency(
            spec.remediation_strategy.max_concurrency, len(clusters)
        )
        if not self.managed(clusters):
            run.conditions.pop("Progressing", None)
            return False
        set_cond(run, "Validated", "True", "ValidationCompleted", "Completed validation", now)
        self.make_plan(clusters)
        if not spec.enable:
            set_cond(run, "Progressing", "False", "NotEnabled", "Not enabled", now)
            return False
        if run.started_at is None:
            run.started_at = now
        if self.blocked():
            return False
        return self.filter_clusters(clusters)

    def failure_event(self, type_: str, message: str) -> None:
        old = self.run.conditions.get(type_)
        if old is None or old.message != message:
            self.event(
                "CguValidationFailure",
                "RemediationOnHoldDueToValidationFailure",
                f"ClusterGroupUpgrade {self.name}: validation failure: {message}",
            )

    def managed(self, clusters: Sequence[str]) -> bool:
        """§6: missing / invalid placements, compliant-before and for-upgrade lists."""
        run, views = self.run, self.ctx.views
        missing, invalid, targets, before = [], [], [], []
        for entry in dict.fromkeys(self.inp.spec.managed_policies or []):
            view = views.get(placement_key_of(entry))
            if view is None:
                missing.append(entry)
            elif view.strategy_type != "External":
                invalid.append(entry)
            else:
                index = view.latest_resource_index or 0
                report_diff = is_report_diff(view)
                if any(compliance(view, c, index, report_diff) == NON_COMPLIANT for c in clusters):
                    targets.append(
                        Target(entry, view.key, view.kind, view.name, view.namespace, index)
                    )
                else:
                    before.append(entry)
        if missing or invalid:
            message = (
                f"Invalid managed policies: {go_list(invalid)} "
                if invalid
                else f"Missing managed policies: {go_list(missing)} "
            )
            self.failure_event("Validated", message)
            set_cond(run, "Validated", "False", "NotAllManagedPoliciesExist", message, self.ctx.now)
            return False
        run.targets, run.compliant_before = targets, before
        return True

    def make_plan(self, clusters: Sequence[str]) -> None:
        spec, run = self.inp.spec, self.run
        done = {c for c in clusters if self.compliant(c)}
        plan = build_plan(
            clusters, spec.remediation_strategy.canaries or [], run.computed_max or 0, done
        )
        run.plan = [list(b) for b in plan.batches]
        run.canary_batches = plan.canary_batches
        self.compliant_clusters = list(plan.compliant)

    def blocked(self) -> bool:
        """§8.2: explicit blockers (missing / not completed), then implicit ones."""
        missing, incomplete = [], []
        partial = self.inp.annotations.get(BLOCKING_MODE_ANNOTATION) == "partial"
        for cr in self.inp.spec.blocking_c_rs or []:
            blocker = self.ctx.blockers.get((cr.namespace or self.inp.namespace, cr.name))
            if blocker is None:
                missing.append(cr.name)
            elif not blocker.completed(partial):
                incomplete.append(cr.name)
        incomplete += self.implicit_blockers()
        now = self.ctx.now
        if missing:
            set_cond(
                self.run,
                "Progressing",
                "False",
                "MissingBlockingCR",
                f"Missing blocking CRs: {go_list(missing)}",
                now,
            )
        elif incomplete:
            message = f"Blocking CRs that are not completed: {go_list(incomplete)}"
            set_cond(self.run, "Progressing", "False", "IncompleteBlockingCR", message, now)
        return bool(missing or incomplete)

    def implicit_blockers(self) -> list[str]:
        mine = {(t.key, c) for t in self.run.targets for batch in self.run.plan for c in batch}
        out = []
        for (ns, name), blocker in sorted(self.ctx.blockers.items()):
            if (ns, name) == (self.inp.namespace, self.inp.name) or not blocker.in_progress:
                continue
            if mine & blocker.claims:
                staged = ns == "\x00staged"
                out.append(name if staged or ns == self.inp.namespace else f"{ns}/{name}")
        return out

    def filter_clusters(self, clusters: list[str]) -> bool:
        """§8.2 partial-mode filtering; rebuild the plan; False when the CGU ended Failed."""
        ann = self.inp.annotations
        if (
            ann.get(BLOCKING_MODE_ANNOTATION) != "partial"
            or ann.get(CLUSTER_FILTERING_ANNOTATION) != "true"
        ):
            return True
        blockers = [
            self.ctx.blockers[(cr.namespace or self.inp.namespace, cr.name)]
            for cr in self.inp.spec.blocking_c_rs or []
        ]
        kept = [c for c in clusters if all(c in b.complete_clusters for b in blockers)]
        if not kept:
            set_cond(self.run, "Progressing", "False", "Completed", NO_CLUSTERS, self.ctx.now)
            set_cond(self.run, "Succeeded", "False", "Failed", NO_CLUSTERS, self.ctx.now)
            self.finish(False)
            return False
        self.make_plan(kept)
        return True

    # -- start and batches ----------------------------------------------------------------
