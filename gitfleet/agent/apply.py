"""The per-object apply pipeline of §6.2: takeover, ReportDiff, drift checks, apply, availability.

`Applier.process(desired)` decides one object and returns an `ObjectResult` (KubeFleet's
manifest condition reasons). Strategy mapping: ServerSideApply = SSA with field manager
`gitfleet`, forced only when `serverSideApplyConfig.force` is set; **ClientSideApply = SSA forced
by `gitfleet`** (a three-way merge never reports conflicts either; no last-applied annotation is
written — field ownership does its job); ReportDiff never writes anything. Every applied object
carries the ownership labels and the `gitfleet.io/spec-hash` annotation (the index hash); an
object whose live state already contains the manifest with that hash is not written again.
Secret values are scrubbed from API error messages. Called by `gitfleet.agent.sync`.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gitfleet.agent.client import FIELD_MANAGER, ClusterClient, ClusterError, Invalid, Obj
from gitfleet.agent.desired import Desired
from gitfleet.agent.drift import as_stored, clean, diff_objects, missing_object_diff
from gitfleet.agent.fields import contains
from gitfleet.agent.health import State, availability
from gitfleet.agent.inventory import ANNOTATION_HASH, LABEL_CLUSTER, LABEL_PLACEMENT, is_owned
from gitfleet.agent.managed import ownership
from gitfleet.api import PatchDetail
from gitfleet.api.reserved import refused_object

APPLIED_REASONS = frozenset({"Applied", "AppliedWithFailedDriftDetection"})
DIFF_REASONS = frozenset({"NoDiffFound", "FoundDiff", "FoundDiffInDegradedMode"})
_REDACTED = "(redacted)"


@dataclass(frozen=True)
class ObjectResult:
    """What happened to one object this pass."""

    desired: Desired
    reason: str
    """Applied-condition reason (§6.4), or the DiffReported reason in ReportDiff mode."""
    message: str = ""
    availability: State | None = None
    availability_message: str = ""
    drifts: tuple[PatchDetail, ...] = ()
    diffs: tuple[PatchDetail, ...] = ()
    generation: int | None = None
    wrote: bool = False

    @property
    def applied(self) -> bool:
        """Whether the object counts as applied."""
        return self.reason in APPLIED_REASONS

    @property
    def report_diff(self) -> bool:
        """Whether the object belongs to a ReportDiff placement."""
        return self.desired.placement.apply_strategy.type == "ReportDiff"


class Applier:
    """Applies objects of one cluster directory through `client`."""

    def __init__(self, client: ClusterClient, cluster: str) -> None:
        self.client = client
        self.cluster = cluster

    def process(self, desired: Desired) -> ObjectResult:
        """Run the pipeline for one object; API failures become failed results. Objects no
        placement may reach (`gitfleet.api.reserved`) are refused before any API call."""
        refused = refused_object(*desired.identity)
        if refused is not None:
            return ObjectResult(desired, "ManifestApplyFailed", f"refused by the agent: {refused}")
        if desired.manifest is None:
            reason = "Duplicated" if "listed twice" in desired.error else "DecodingErred"
            return ObjectResult(desired, reason, desired.error)
        try:
            return self._process(desired, desired.manifest)
        except ClusterError as exc:
            fail = "FailedToReportDiff" if _is_report_diff(desired) else "ManifestApplyFailed"
            return ObjectResult(desired, fail, scrub(exc.message, desired.manifest))

    def _process(self, desired: Desired, manifest: Mapping[str, Any]) -> ObjectResult:
        strategy = desired.placement.apply_strategy
        api_version, kind, namespace, name = desired.identity
        self.client.discover(api_version, kind)
        live = self.client.get(api_version, kind, namespace or None, name)
        generation = _generation(live)
        if live is not None and not is_owned(live, self.cluster, desired.placement.key):
            refused = self._takeover(desired, manifest, live)
            if refused is not None:
                return refused
        if strategy.type == "ReportDiff":
            return self._report_diff(desired, manifest, live)
        if (
            strategy.when_to_apply == "IfNotDrifted"
            and live is not None
            and _hash(live) == desired.hash
        ):
            drifts, degraded = self.compare(desired, manifest, live)
            if drifts:
                reason = "FoundDriftsInDegradedMode" if degraded else "FoundDrifts"
                message = "the object has drifted from the hub manifest; it is not overwritten (whenToApply IfNotDrifted)"
                return ObjectResult(
                    desired, reason, message, drifts=tuple(drifts), generation=generation
                )
        return self._apply(desired, manifest, live)

    def _takeover(
        self, desired: Desired, manifest: Mapping[str, Any], live: Obj
    ) -> ObjectResult | None:
        strategy = desired.placement.apply_strategy
        labels = (live.get("metadata") or {}).get("labels") or {}
        other = labels.get(LABEL_PLACEMENT)
        generation = _generation(live)
        if other and labels.get(LABEL_CLUSTER) == self.cluster:
            message = f"the object is already placed by placement {other}"
            return ObjectResult(desired, "FailedToTakeOver", message, generation=generation)
        if (live.get("metadata") or {}).get("ownerReferences") and not strategy.allow_co_ownership:
            message = "the object is already owned by some other sources(s) and co-ownership is disallowed"
            return ObjectResult(desired, "FailedToTakeOver", message, generation=generation)
        if strategy.type == "ReportDiff":
            return None
        if strategy.when_to_take_over == "Never":
            message = "no ownership of the object in the member cluster; takeover is needed"
            return ObjectResult(desired, "NotTakenOver", message, generation=generation)
        if strategy.when_to_take_over == "IfNoDiff":
            diffs, _ = self.compare(desired, manifest, live)
            if diffs:
                message = "the object differs from the hub manifest; takeover refused (whenToTakeOver IfNoDiff)"
                return ObjectResult(
                    desired, "FailedToTakeOver", message, diffs=tuple(diffs), generation=generation
                )
        return None

    def _report_diff(
        self, desired: Desired, manifest: Mapping[str, Any], live: Obj | None
    ) -> ObjectResult:
        if live is None:
            return ObjectResult(
                desired,
                "FoundDiff",
                "the object is not in the member cluster",
                diffs=tuple(missing_object_diff()),
            )
        diffs, degraded = self.compare(desired, manifest, live)
        generation = _generation(live)
        if not diffs:
            return ObjectResult(
                desired, "NoDiffFound", "no difference found", generation=generation
            )
        reason = "FoundDiffInDegradedMode" if degraded else "FoundDiff"
        return ObjectResult(
            desired,
            reason,
            f"{len(diffs)} difference(s) found",
            diffs=tuple(diffs),
            generation=generation,
        )

    def _apply(
        self, desired: Desired, manifest: Mapping[str, Any], live: Obj | None
    ) -> ObjectResult:
        strategy = desired.placement.apply_strategy
        config = self.prepared(desired, manifest)
        wrote = not (live is not None and self._unchanged(desired, config, live))
        result = live
        if wrote:
            if strategy.when_to_apply == "IfNotDrifted" and live is not None:
                config["metadata"]["resourceVersion"] = live["metadata"].get("resourceVersion")
            force = (
                strategy.type == "ClientSideApply"
                or strategy.server_side_apply_config.force_conflicts
            )
            result = self.client.apply(
                config, field_manager=FIELD_MANAGER, force=force, dry_run=False
            )
        assert result is not None
        drifts: list[PatchDetail] = []
        if strategy.comparison_option == "FullComparison":
            drifts = diff_objects(
                clean(config), clean(result), secret=_is_secret(desired), owned=ownership(result)
            )
        state, message = availability(result)
        return ObjectResult(
            desired,
            "Applied",
            "the object is applied",
            state,
            message,
            tuple(drifts),
            (),
            _generation(result),
            wrote,
        )

    def prepared(self, desired: Desired, manifest: Mapping[str, Any]) -> Obj:
        """The manifest with this agent's ownership labels and spec-hash annotation."""
        config = copy.deepcopy(dict(manifest))
        meta = config.setdefault("metadata", {})
        meta["labels"] = {
            **(meta.get("labels") or {}),
            LABEL_PLACEMENT: desired.placement.key,
            LABEL_CLUSTER: self.cluster,
        }
        meta["annotations"] = {
            **(meta.get("annotations") or {}),
            ANNOTATION_HASH: desired.hash,
        }
        return config

    def _unchanged(self, desired: Desired, config: Obj, live: Obj) -> bool:
        meta = live.get("metadata") or {}
        if meta.get("deletionTimestamp") or _hash(live) != desired.hash:
            return False
        return contains(live, {k: v for k, v in as_stored(config).items() if k != "status"})

    def compare(
        self, desired: Desired, manifest: Mapping[str, Any], live: Obj
    ) -> tuple[list[PatchDetail], bool]:
        """(details, degraded): Full = manifest vs live (a field only the member has counts when
        a field manager set it, not when the server defaulted it); Partial = dry-run apply vs
        live."""
        secret = _is_secret(desired)
        if desired.placement.apply_strategy.comparison_option == "FullComparison":
            full = diff_objects(clean(manifest), clean(live), secret=secret, owned=ownership(live))
            return full, False
        try:
            config = self.prepared(desired, manifest)
            dry = self.client.apply(config, field_manager=FIELD_MANAGER, force=True, dry_run=True)
        except Invalid:
            full = diff_objects(clean(manifest), clean(live), secret=secret, owned=ownership(live))
            return full, True
        return diff_objects(clean(dry), clean(live), secret=secret), False


def _is_report_diff(desired: Desired) -> bool:
    return desired.placement.apply_strategy.type == "ReportDiff"


def _is_secret(desired: Desired) -> bool:
    return desired.entry.api_version == "v1" and desired.entry.kind == "Secret"


def _hash(live: Obj) -> str | None:
    annotations = (live.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(ANNOTATION_HASH)
    return str(value) if value is not None else None


def _generation(live: Obj | None) -> int | None:
    if live is None:
        return None
    value = (live.get("metadata") or {}).get("generation")
    return int(value) if value is not None else None


def scrub(message: str, manifest: Mapping[str, Any]) -> str:
    """`message` without any value of a Secret manifest's data/stringData (plain or base64)."""
    if manifest.get("kind") != "Secret":
        return message
    secrets: set[str] = set()
    for part in ("data", "stringData"):
        for value in (manifest.get(part) or {}).values():
            text = str(value)
            secrets.add(text)
            try:
                secrets.add(base64.b64decode(text, validate=True).decode())
            except ValueError:
                secrets.add(base64.b64encode(text.encode()).decode())
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        message = message.replace(secret, _REDACTED)
    return message
