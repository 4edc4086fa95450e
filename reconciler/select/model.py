"""Computed values of resource selection: selected resources, selections and resource issues.

`reconciler.select.index` builds one `SelectedResource` per valid payload object (stripped,
canonical JSON computed once); `reconciler.select.selector.select_resources` returns a
`Selection` per placement. The reconcile pass reads them to build resource snapshots, the
placement's `status.selectedResources`, and the per-cluster manifests. All frozen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import is_
from typing import TYPE_CHECKING, Any

from gitfleet.api.errors import FleetError

if TYPE_CHECKING:
    from gitfleet.load.model import Origin, Resource

ENVELOPE_GROUP = "placement.kubernetes-fleet.io"
ENVELOPE_KINDS = frozenset({"ResourceEnvelope", "ClusterResourceEnvelope"})
INVALID_RESOURCE_SELECTORS = "InvalidResourceSelectors"
"""Reason of the Scheduled condition when `Selection.error` is set."""


@dataclass(frozen=True)
class SelectedResource:
    """One object chosen by a placement, as stored in a KubeFleet resource snapshot."""

    group: str
    version: str
    kind: str
    namespace: str
    """'' for cluster-scoped objects."""
    name: str
    obj: dict[str, Any] = field(compare=False, repr=False)
    """The stripped manifest (KubeFleet §7.2). Shared between selections: treat as read-only."""
    origin: Origin = field(compare=False)
    raw: str = field(default="", repr=False)
    """Canonical JSON of `obj` (sorted keys, compact): hashed, and sized for snapshot splitting."""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def is_envelope(self) -> bool:
        return self.group == ENVELOPE_GROUP and self.kind in ENVELOPE_KINDS

    def identifier(self) -> dict[str, str]:
        """KubeFleet's ResourceIdentifier (`group`, `version`, `kind`, `name`, `namespace`),
        empty strings omitted."""
        full = {
            "group": self.group,
            "version": self.version,
            "kind": self.kind,
            "name": self.name,
            "namespace": self.namespace,
        }
        return {key: value for key, value in full.items() if value}


@dataclass(frozen=True)
class ResourceIssue:
    """A payload object that cannot be placed (wrong scope, bad envelope, bad labels, ...)."""

    resource: Resource = field(compare=False, repr=False)
    field: str
    """Dotted path inside the object ('' for the whole object)."""
    message: str
    """Never contains a Secret value."""
    origin: Origin

    def to_error(self) -> FleetError:
        """The issue located in its source file, for the pass's error list."""
        return FleetError(
            file=self.origin.file,
            line=self.origin.line,
            field=self.field,
            message=self.message,
            doc=self.origin.doc,
        )


@dataclass(frozen=True)
class Selection:
    """What one placement selects: sorted resources and their hash, or a user error."""

    resources: tuple[SelectedResource, ...]
    hash: str
    """sha256 hex of `{"selectedResources": [...]}` in canonical JSON; '' when `error` is set."""
    error: str | None = None
    """Message of the Scheduled=False / InvalidResourceSelectors condition; resources are
    then empty."""
    invalid: tuple[ResourceIssue, ...] = ()
    """Objects the selectors matched but that cannot be placed (see `ResourceIndex.issues`).
    They are not in `resources`; the pass should hold the placement on its last good snapshot
    rather than prune them."""

    @property
    def envelope_count(self) -> int:
        """Number of selected envelope objects (`number-of-enveloped-object`)."""
        return sum(1 for res in self.resources if res.is_envelope)

    def identifiers(self) -> list[dict[str, str]]:
        """`status.selectedResources`, in selection order."""
        return [res.identifier() for res in self.resources]

    def same_objects(self, other: Selection) -> bool:
        """The very same selected objects (and unplaceable matches) in the same order."""
        return (
            self.hash == other.hash
            and len(self.resources) == len(other.resources)
            and all(map(is_, self.resources, other.resources))
            and len(self.invalid) == len(other.invalid)
            and all(map(is_, self.invalid, other.invalid))
        )
