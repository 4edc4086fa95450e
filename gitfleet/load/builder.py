"""Index validated documents into the slots of a `FleetSnapshot`; one bad document fails alone.

`SnapshotBuilder` validates each fleet document (memoised per document object by `_parse_once`)
and files it under its kind's `SLOTS` entry, and checks each payload document (identity, size,
plaintext Secrets) before it becomes a `Resource`. A duplicate is an error naming the first
declaration's `file:line`; ClusterProfiles join the cluster inventory as MemberClusters.
Called by `gitfleet.load.snapshot.build_snapshot`, which classifies the documents and decides
their order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gitfleet.api import Fleet, to_member_cluster
from gitfleet.api.cluster import ClusterProfile
from gitfleet.api.errors import FieldIssue, FleetError
from gitfleet.api.meta import KubeObject
from gitfleet.api.registry import parse_object
from gitfleet.load.identitycache import IdentityCache
from gitfleet.load.model import FleetSnapshot, Origin, Resource, SourceDoc
from gitfleet.load.payload import PayloadIdentity, payload_identity
from gitfleet.load.sealedvalues import plaintext_fields, recipient_issue
from gitfleet.load.unloaded import unloaded_files
from gitfleet.load.yamlio import error_at

PLAINTEXT_RULE = (
    "plaintext Secret refused: encrypt it with SOPS and age (a file whose documents carry "
    "SOPS metadata, e.g. <name>.sops.yaml), or set Fleet spec.secrets.allowPlaintext: true"
)

SLOTS: dict[str, str] = {
    "MemberCluster": "clusters",
    "ClusterProfile": "clusters",
    "ClusterResourcePlacement": "placements",
    "ResourcePlacement": "resource_placements",
    "ClusterResourceOverride": "cluster_overrides",
    "ResourceOverride": "resource_overrides",
    "ClusterStagedUpdateStrategy": "strategies",
    "ClusterStagedUpdateRun": "update_runs",
    "ClusterApprovalRequest": "approvals",
    "StagedUpdateStrategy": "staged_strategies",
    "StagedUpdateRun": "staged_update_runs",
    "ApprovalRequest": "staged_approvals",
    "ClusterResourcePlacementEviction": "evictions",
    "ClusterResourcePlacementDisruptionBudget": "budgets",
    "ClusterGroupUpgrade": "group_upgrades",
    "ReplicaDistribution": "distributions",
    "Tenant": "tenants",
    "DeletionApproval": "deletion_approvals",
}
"""Fleet kind -> FleetSnapshot field. ResourcePlacement/ResourceOverride are keyed by
(namespace, name); every other slot by name."""

_NAMESPACED_SLOTS = frozenset(
    {
        "resource_placements",
        "resource_overrides",
        "group_upgrades",
        "distributions",
        "staged_strategies",
        "staged_update_runs",
        "staged_approvals",
    }
)
MAX_VALIDATED = 100_000
"""Validated documents remembered (`_parse_once`); each entry holds its document alive, so its
id cannot be reused while the entry exists."""
_validated: IdentityCache[tuple[KubeObject | None, list[FieldIssue]]] = IdentityCache(MAX_VALIDATED)


def _parse_once(body: dict[str, Any]) -> tuple[KubeObject | None, list[FieldIssue]]:
    """`parse_object`, memoised per document object: a renderer that hands back the same
    documents for an unchanged file (the plain renderer on a Git tree) gets the same validated
    model without validating again. Models and issues are shared: read them only."""
    return _validated.made(body, parse_object)


class SnapshotBuilder:
    """Collects validated fleet objects and payload resources, then builds the FleetSnapshot."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.limits = fleet.limits()
        self.errors: list[FleetError] = []
        self.slots: dict[str, dict[Any, Any]] = {slot: {} for slot in set(SLOTS.values())}
        self.origins: dict[tuple[str, str, str], Origin] = {}
        self.resources: list[Resource] = []
        self.payload_keys: dict[tuple[str, str, str, str], Origin] = {}
        self.notes: list[FleetError] = []
        self.attempted: list[tuple[str, ...]] = []
        """Every key a document tried to claim (origin keys, payload keys), taken or not:
        `gitfleet.load.parts` proves with them that files do not contend for a name."""

    def plaintext_refused(self, doc: SourceDoc) -> bool:
        """A Secret with values in clear is an error (naming file, line and field, never the
        value) unless `spec.secrets.allowPlaintext`, which makes it a warning."""
        found = plaintext_fields(doc.body)
        if not found:
            return False
        if self.fleet.spec.secrets.allow_plaintext:
            message = (
                "plaintext Secret accepted because Fleet spec.secrets.allowPlaintext is true: "
                "its values reach the output branch in clear"
            )
            self.notes.append(error_at(doc, FieldIssue(found[0], message)))
            return False
        self.errors.append(error_at(doc, FieldIssue(found[0], PLAINTEXT_RULE)))
        return True

    def add_fleet(self, doc: SourceDoc) -> None:
        model, issues = _parse_once(doc.body)
        if model is None:
            self.errors += [error_at(doc, issue) for issue in issues]
            return
        slot = SLOTS.get(model.kind)
        if slot is None:
            message = f"{model.kind} is not supported by gitfleet yet"
            if model.kind == "AgentReport":
                message = "an AgentReport belongs on its agent's branch gitfleet/status/<cluster>, not in the fleet repository"
            issue = FieldIssue("kind", message)
            self.errors.append(error_at(doc, issue))
            return
        origin = Origin(doc.file, doc.doc, doc.line)
        if not self._claim(doc, model, origin):
            return
        namespace = _namespace_of(model)
        key = (namespace, model.name) if slot in _NAMESPACED_SLOTS else model.name
        value = to_member_cluster(model) if isinstance(model, ClusterProfile) else model
        self.slots[slot][key] = value
        bad_key = recipient_issue(model.metadata.annotations) if slot == "clusters" else None
        if bad_key is not None:  # a note, not an error: the cluster stays in the fleet
            self.notes.append(error_at(doc, FieldIssue(*bad_key)))

    def _claim(self, doc: SourceDoc, model: KubeObject, origin: Origin) -> bool:
        """Record the object's origin; False (and an error) when it is declared already."""
        keys = _origin_keys(model)
        self.attempted += keys
        for key in keys:
            first = self.origins.get(key)
            if first is not None:
                what = "cluster" if key[0] == "MemberCluster" else model.kind
                message = (
                    f"duplicate {what} {_show(key[1], key[2])}: already declared at "
                    f"{first.file}:{first.line}"
                )
                self.errors.append(error_at(doc, FieldIssue("metadata.name", message)))
                return False
        for key in keys:
            self.origins[key] = origin
        return True

    def add_payload(self, doc: SourceDoc) -> None:
        refused = self.plaintext_refused(doc)
        identity = payload_identity(doc.body, self.limits)
        if not isinstance(identity, PayloadIdentity):
            self.errors += [error_at(doc, issue) for issue in identity]
            return
        if refused:
            return
        self.attempted.append(identity.key())
        first = self.payload_keys.get(identity.key())
        if first is not None:
            message = (
                f"duplicate object {identity.group or 'core'}/{identity.kind} "
                f"{_show(identity.namespace, identity.name)}: already declared at "
                f"{first.file}:{first.line}"
            )
            self.errors.append(error_at(doc, FieldIssue("metadata.name", message)))
            return
        origin = Origin(doc.file, doc.doc, doc.line)
        self.payload_keys[identity.key()] = origin
        self.resources.append(
            Resource(
                origin,
                doc.body,
                identity.group,
                identity.version,
                identity.kind,
                identity.namespace,
                identity.name,
            )
        )

    def snapshot(self, commit: str | None) -> FleetSnapshot:
        slots = {slot: dict(sorted(values.items())) for slot, values in self.slots.items()}
        origins = dict(sorted(self.origins.items()))
        return freeze(self.fleet, slots, tuple(self.resources), self.errors, origins, commit)


def freeze(
    fleet: Fleet,
    slots: Mapping[str, dict[Any, Any]],
    resources: tuple[Resource, ...],
    errors: Iterable[FleetError],
    origins: dict[tuple[str, str, str], Origin],
    commit: str | None,
) -> FleetSnapshot:
    """The snapshot of indexed values (`slots` and `origins` sorted by key, `resources` by
    file and document); errors are deduplicated and sorted. Also called by
    `gitfleet.load.patch`, which keeps the indexes between passes."""
    ordered = sorted(set(errors), key=_error_order)
    return FleetSnapshot(
        fleet=fleet,
        clusters=slots["clusters"],
        placements=slots["placements"],
        resource_placements=slots["resource_placements"],
        cluster_overrides=slots["cluster_overrides"],
        resource_overrides=slots["resource_overrides"],
        strategies=slots["strategies"],
        update_runs=slots["update_runs"],
        approvals=slots["approvals"],
        staged_strategies=slots["staged_strategies"],
        staged_update_runs=slots["staged_update_runs"],
        staged_approvals=slots["staged_approvals"],
        evictions=slots["evictions"],
        budgets=slots["budgets"],
        group_upgrades=slots["group_upgrades"],
        distributions=slots["distributions"],
        tenants=slots["tenants"],
        deletion_approvals=slots["deletion_approvals"],
        resources=resources,
        errors=tuple(ordered),
        origins=origins,
        commit=commit,
        error_files=frozenset(e.file for e in ordered if e.file),
        unloaded_tenants=unloaded_files(ordered),
    )


def _origin_keys(model: KubeObject) -> list[tuple[str, str, str]]:
    """The (kind, namespace, name) keys an object occupies; a ClusterProfile also occupies the
    MemberCluster of the same name (both end up in the cluster inventory)."""
    if model.kind == "ClusterProfile":
        return [(model.kind, model.namespace or "", model.name), ("MemberCluster", "", model.name)]
    namespaced = SLOTS[model.kind] in _NAMESPACED_SLOTS
    return [(model.kind, _namespace_of(model) if namespaced else "", model.name)]


def _namespace_of(model: KubeObject) -> str:
    """metadata.namespace; a ClusterGroupUpgrade without one is in `default` (as upstream)."""
    if model.kind == "ClusterGroupUpgrade":
        return model.namespace or "default"
    return model.namespace or ""


def _error_order(error: FleetError) -> tuple[str, int, int, str, str]:
    doc = -1 if error.doc is None else error.doc
    return (error.file, error.line or 0, doc, error.field, error.message)


def _show(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name
