"""Turn rendered documents into a validated `FleetSnapshot`; one bad document never stops others.

Documents under `resources/` are payload (Kubernetes objects to place, envelopes included);
everything else must be a fleet kind (`classify`). Documents are taken in (file, doc) order and
handed to `gitfleet.load.builder.SnapshotBuilder`, which validates and indexes them (the first of
two duplicates wins, the later one is an error naming the first's `file:line`). The singleton
`Fleet` is read by `read_fleet_settings`; its limits apply to the payload checks. Called by `renderers.load_fleet`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Literal

from gitfleet.api import Fleet
from gitfleet.api.errors import FieldIssue, FleetError
from gitfleet.api.registry import is_fleet_group, is_fleet_kind, is_payload_kind, parse_object
from gitfleet.load.builder import SnapshotBuilder
from gitfleet.load.lint import lint as lint_snapshot
from gitfleet.load.lists import expand_lists
from gitfleet.load.model import FleetSnapshot, Origin, Resource, SourceDoc
from gitfleet.load.sealedvalues import SealedValues
from gitfleet.load.unloaded import TENANT_NOT_LOADED, unloaded_tenant_docs
from gitfleet.load.yamlio import error_at

PAYLOAD_PREFIX = "resources/"
SETTINGS_FILE = "fleet.yaml"
"""Where the settings read before rendering live (limits, `spec.verification`)."""


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
    fleet, _, errors = read_fleet(docs)
    return fleet or default_fleet(), errors


def read_fleet(docs: Sequence[SourceDoc]) -> tuple[Fleet | None, Origin | None, list[FleetError]]:
    """The first Fleet of `docs` by (file, doc), where it is declared, and the errors of the
    Fleet documents (a second Fleet, an invalid one). Only `is_fleet_doc` documents count."""
    found = [d for d in sorted(docs, key=_order) if is_fleet_doc(d)]
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
    fleet, fleet_origin, fleet_errors = read_fleet(ordered)
    builder = SnapshotBuilder(fleet or default_fleet())
    builder.errors += list(errors) + list_errors + fleet_errors
    if fleet is not None and fleet_origin is not None:
        builder.origins[("Fleet", "", fleet.name)] = fleet_origin
    index_documents(builder, ordered)
    snapshot = builder.snapshot(commit)
    warnings = lint_snapshot(snapshot, ordered) if lint else ()
    notes = (*mixed_notes(snapshot.resources), *builder.notes)
    return replace(snapshot, notes=notes, warnings=warnings, sealed=sealed or SealedValues())


def index_documents(builder: SnapshotBuilder, ordered: Sequence[SourceDoc]) -> None:
    """Classify each document of `ordered` (Lists expanded, in (file, doc) order) and add it to
    `builder` (the Fleet itself is read apart, by `read_fleet`), then fail the Tenants it left
    out closed. The one loop of `build_snapshot` and of `gitfleet.load.parts.file_part`."""
    mixed = mixed_files(ordered)
    for doc in ordered:
        kind = classify(doc, mixed)
        if isinstance(kind, FleetError):
            builder.errors.append(kind)
        elif kind == "payload":
            builder.add_payload(doc)
        elif not is_fleet_doc(doc):
            builder.add_fleet(doc)
    unloaded = unloaded_tenant_docs(ordered, builder.origins)  # they must fail closed
    builder.errors += [error_at(d, FieldIssue("kind", TENANT_NOT_LOADED)) for d in unloaded]


def mixed_files(docs: Sequence[SourceDoc]) -> frozenset[str]:
    """Files outside `resources/` with at least one fleet object."""
    return frozenset(d.file for d in docs if not d.file.startswith(PAYLOAD_PREFIX) and _fleet(d))


def _fleet(doc: SourceDoc) -> bool:
    api_version, kind = doc.body.get("apiVersion"), doc.body.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return False
    return is_fleet_kind(api_version, kind) or is_fleet_group(api_version)


def mixed_notes(resources: Iterable[Resource]) -> tuple[FleetError, ...]:
    """One note per file outside `resources/` whose ordinary manifests became payload."""
    counts: dict[str, tuple[int, int]] = {}
    for res in resources:
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


def is_fleet_doc(doc: SourceDoc) -> bool:
    """A Fleet (of a fleet apiVersion) outside `resources/`: read by `read_fleet`, not indexed."""
    api_version, kind = doc.body.get("apiVersion"), doc.body.get("kind")
    return (
        kind == "Fleet"
        and not doc.file.startswith(PAYLOAD_PREFIX)
        and isinstance(api_version, str)
        and is_fleet_kind(api_version, kind)
    )


def _order(doc: SourceDoc) -> tuple[str, int]:
    return (doc.file, doc.doc)
