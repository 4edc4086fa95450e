"""Turn rendered documents into a validated `FleetSnapshot`; one bad document never stops others.

Documents under `resources/` are payload (Kubernetes objects to place, envelopes included);
everything else must be a fleet kind. Fleet documents are validated by
`gitfleet.api.registry.parse_object` (issues are located with `yamlio.locate`), payload
documents by `gitfleet.load.payload`. Duplicates are decided by (file, doc) order: the first
wins and the later one is an error naming the first's `file:line`. ClusterProfiles join the
cluster inventory as MemberClusters. The singleton `Fleet` is read by `read_fleet_settings`; its
limits apply to the payload checks. Called by `renderers.load_fleet`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import replace
from typing import Any, Literal

from gitfleet.api import Fleet, to_member_cluster
from gitfleet.api.cluster import ClusterProfile
from gitfleet.api.errors import FieldIssue, FleetError
from gitfleet.api.meta import KubeObject
from gitfleet.api.registry import is_fleet_group, is_fleet_kind, is_payload_kind, parse_object
from gitfleet.load.lint import lint as lint_snapshot
from gitfleet.load.lists import expand_lists
from gitfleet.load.model import FleetSnapshot, Origin, Resource, SourceDoc
from gitfleet.load.payload import PayloadIdentity, payload_identity
from gitfleet.load.sealedvalues import SealedValues, plaintext_fields, recipient_issue
from gitfleet.load.unloaded import TENANT_NOT_LOADED, unloaded_files, unloaded_tenant_docs
from gitfleet.load.yamlio import locate

PAYLOAD_PREFIX = "resources/"
SETTINGS_FILE = "fleet.yaml"
"""Where the settings read before rendering live (limits, `spec.verification`)."""
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
_validated: OrderedDict[int, tuple[Any, tuple[KubeObject | None, list[FieldIssue]]]] = OrderedDict()


def classify(
    doc: SourceDoc, mixed: frozenset[str] = frozenset()
) -> Literal["fleet", "payload"] | FleetError:
    """Whether a document is a fleet object or payload, or why it is neither. `mixed` names the
    files outside `resources/` that hold fleet objects: their ordinary manifests are payload
    (KubeFleet's examples put both in one file for `kubectl apply -f`)."""
    api_version, kind = doc.body.get("apiVersion"), doc.body.get("kind")
    for field, value in (("apiVersion", api_version), ("kind", kind)):
        if not isinstance(value, str) or not value.strip():
            what = "required field is missing" if value is None else "must be a non-empty string"
            return error_at(doc, FieldIssue(field, what))
    api_version, kind = str(api_version), str(kind)
    if doc.file.startswith(PAYLOAD_PREFIX):
        if is_payload_kind(api_version, kind):
            return "payload"
        message = (
            f"{api_version}/{kind} is a fleet object, not payload: fleet objects do not "
            f"belong under {PAYLOAD_PREFIX}"
        )
        return error_at(doc, FieldIssue("kind", message))
    if doc.file in mixed and is_payload_kind(api_version, kind):
        return "payload"
    if is_fleet_kind(api_version, kind) or is_fleet_group(api_version):
        return "fleet"
    message = (
        f"{api_version}/{kind} is not a fleet kind; Kubernetes objects to place belong "
        f"under {PAYLOAD_PREFIX}"
    )
    return error_at(doc, FieldIssue("kind", message))


def read_fleet_settings(docs: Sequence[SourceDoc]) -> tuple[Fleet, list[FleetError]]:
    """The singleton Fleet (first by file and document); the default Fleet when absent."""
    fleet, _, errors = _read_fleet(docs)
    return fleet or default_fleet(), errors


def _read_fleet(docs: Sequence[SourceDoc]) -> tuple[Fleet | None, Origin | None, list[FleetError]]:
    found = [d for d in sorted(docs, key=_order) if _is_fleet_doc(d)]
    if not found:
        return None, None, []
    first = found[0]
    message = (
        "only one Fleet object is allowed per repository; another is declared at "
        f"{first.file}:{first.line}"
    )
    errors = [error_at(doc, FieldIssue("kind", message)) for doc in found[1:]]
    model, issues = parse_object(first.body)
    errors += [error_at(first, issue) for issue in issues]
    if not isinstance(model, Fleet):
        return None, None, errors
    if model.spec.verification is not None and first.file != SETTINGS_FILE:
        message = (
            f"signed-commit verification is read from {SETTINGS_FILE} only (before anything "
            "is rendered): move the Fleet there, or this setting has no effect"
        )
        errors.append(error_at(first, FieldIssue("spec.verification", message)))
    return model, Origin(first.file, first.doc, first.line), errors


def default_fleet() -> Fleet:
    """The settings of a repository without a Fleet object (all defaults)."""
    return Fleet.model_validate(
        {"apiVersion": "gitfleet.io/v1alpha1", "kind": "Fleet", "metadata": {"name": "fleet"}}
    )


def build_snapshot(
    docs: Sequence[SourceDoc],
    errors: Sequence[FleetError],
    commit: str | None = None,
    *,
    lint: bool = False,
    sealed: SealedValues | None = None,
) -> FleetSnapshot:
    """Validate and index every document; invalid ones are left out and reported. With `lint`,
    also the warnings of `gitfleet.load.lint` (locating each one re-reads its file, so only
    `gitfleet validate` asks for them)."""
    ordered, list_errors = expand_lists(sorted(docs, key=_order))
    fleet, fleet_origin, fleet_errors = _read_fleet(ordered)
    builder = _Builder(fleet or default_fleet())
    builder.errors += list(errors) + list_errors + fleet_errors
    if fleet is not None and fleet_origin is not None:
        builder.origins[("Fleet", "", fleet.name)] = fleet_origin
    mixed = mixed_files(ordered)
    for doc in ordered:
        kind = classify(doc, mixed)
        if isinstance(kind, FleetError):
            builder.errors.append(kind)
        elif kind == "payload":
            builder.add_payload(doc)
        elif not _is_fleet_doc(doc):
            builder.add_fleet(doc)
    unloaded = unloaded_tenant_docs(ordered, builder.origins)  # they must fail closed
    builder.errors += [error_at(d, FieldIssue("kind", TENANT_NOT_LOADED)) for d in unloaded]
    snapshot = builder.snapshot(commit)
    warnings = lint_snapshot(snapshot, ordered) if lint else ()
    notes = (*mixed_notes(snapshot), *builder.notes)
    return replace(snapshot, notes=notes, warnings=warnings, sealed=sealed or SealedValues())


def mixed_files(docs: Sequence[SourceDoc]) -> frozenset[str]:
    """Files outside `resources/` with at least one fleet object."""
    return frozenset(d.file for d in docs if not d.file.startswith(PAYLOAD_PREFIX) and _fleet(d))


def _fleet(doc: SourceDoc) -> bool:
    api_version, kind = doc.body.get("apiVersion"), doc.body.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return False
    return is_fleet_kind(api_version, kind) or is_fleet_group(api_version)


def mixed_notes(snapshot: FleetSnapshot) -> tuple[FleetError, ...]:
    """One note per file outside `resources/` whose ordinary manifests became payload."""
    counts: dict[str, tuple[int, int]] = {}
    for res in snapshot.resources:
        if not res.origin.file.startswith(PAYLOAD_PREFIX):
            count, line = counts.get(res.origin.file, (0, res.origin.line))
            counts[res.origin.file] = (count + 1, line)
    return tuple(
        FleetError(
            file,
            line,
            "",
            f"{count} ordinary manifest(s) in this file are loaded as resources to place, "
            f"as if they were under {PAYLOAD_PREFIX} (the file also holds fleet objects)",
        )
        for file, (count, line) in sorted(counts.items())
    )


def _parse_once(body: dict[str, Any]) -> tuple[KubeObject | None, list[FieldIssue]]:
    """`parse_object`, memoised per document object: a renderer that hands back the same
    documents for an unchanged file (the plain renderer on a Git tree) gets the same validated
    model without validating again. Models and issues are shared: read them only."""
    hit = _validated.get(id(body))
    if hit is not None and hit[0] is body:
        with suppress(KeyError):  # another hub thread may have dropped it meanwhile
            _validated.move_to_end(id(body))
        return hit[1]
    result = parse_object(body)
    _validated[id(body)] = (body, result)
    with suppress(KeyError):
        if len(_validated) > MAX_VALIDATED:
            _validated.popitem(last=False)
    return result


def error_at(doc: SourceDoc, issue: FieldIssue) -> FleetError:
    """A FleetError for an issue of `doc`, on the line of the issue's field when found."""
    field = issue.field
    if doc.path:
        field = f"{doc.path}.{field}" if field and not field.startswith("[") else doc.path + field
    line = locate(doc.text, doc.doc, field) if doc.text else None
    return FleetError(doc.file, line or doc.line, field, issue.message, doc.doc)


class _Builder:
    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.limits = fleet.limits()
        self.errors: list[FleetError] = []
        self.slots: dict[str, dict[Any, Any]] = {slot: {} for slot in set(SLOTS.values())}
        self.origins: dict[tuple[str, str, str], Origin] = {}
        self.resources: list[Resource] = []
        self.payload_keys: dict[tuple[str, str, str, str], Origin] = {}
        self.notes: list[FleetError] = []

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
        errors = sorted(set(self.errors), key=_error_order)
        s = {slot: dict(sorted(values.items())) for slot, values in self.slots.items()}
        return FleetSnapshot(
            fleet=self.fleet,
            clusters=s["clusters"],
            placements=s["placements"],
            resource_placements=s["resource_placements"],
            cluster_overrides=s["cluster_overrides"],
            resource_overrides=s["resource_overrides"],
            strategies=s["strategies"],
            update_runs=s["update_runs"],
            approvals=s["approvals"],
            staged_strategies=s["staged_strategies"],
            staged_update_runs=s["staged_update_runs"],
            staged_approvals=s["staged_approvals"],
            evictions=s["evictions"],
            budgets=s["budgets"],
            group_upgrades=s["group_upgrades"],
            distributions=s["distributions"],
            tenants=s["tenants"],
            deletion_approvals=s["deletion_approvals"],
            resources=tuple(self.resources),
            errors=tuple(errors),
            origins=dict(sorted(self.origins.items())),
            commit=commit,
            error_files=frozenset(e.file for e in errors if e.file),
            unloaded_tenants=unloaded_files(errors),
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


def _is_fleet_doc(doc: SourceDoc) -> bool:
    api_version, kind = doc.body.get("apiVersion"), doc.body.get("kind")
    return (
        kind == "Fleet"
        and not doc.file.startswith(PAYLOAD_PREFIX)
        and isinstance(api_version, str)
        and is_fleet_kind(api_version, kind)
    )


def _order(doc: SourceDoc) -> tuple[str, int]:
    return (doc.file, doc.doc)


def _error_order(error: FleetError) -> tuple[str, int, int, str, str]:
    doc = -1 if error.doc is None else error.doc
    return (error.file, error.line or 0, doc, error.field, error.message)


def _show(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name
