"""The loader's output types: parsed documents, payload resources and the FleetSnapshot.

Renderers produce `SourceDoc`s; `gitfleet.load.snapshot.build_snapshot` turns them into a
`FleetSnapshot`, which is the input of the pure reconcile pass (`reconciler.pass_`).
Everything here is immutable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gitfleet.api import (
    ApprovalRequest,
    ClusterApprovalRequest,
    ClusterResourceOverride,
    ClusterResourcePlacement,
    ClusterResourcePlacementDisruptionBudget,
    ClusterResourcePlacementEviction,
    ClusterStagedUpdateRun,
    ClusterStagedUpdateStrategy,
    Fleet,
    MemberCluster,
    ResourceOverride,
    ResourcePlacement,
    StagedUpdateRun,
    StagedUpdateStrategy,
)
from gitfleet.api.cgu import ClusterGroupUpgrade
from gitfleet.api.distribution import ReplicaDistribution
from gitfleet.api.errors import FleetError
from gitfleet.api.tenant import DeletionApproval, Tenant
from gitfleet.load.sealedvalues import SealedValues


@dataclass(frozen=True)
class SourceDoc:
    """One YAML document as a renderer produced it."""

    file: str
    """Repository-relative source path (the template file, or the kustomization directory)."""
    doc: int
    """0-based document index within the file's (rendered) text."""
    line: int
    """1-based line where the document starts in that text."""
    body: dict[str, Any]
    """The parsed document: plain dicts, lists, str, int, float, bool, None only."""
    renderer: str = "plain"
    """Name of the renderer that produced it (plain, jinja, kustomize)."""
    text: str = field(default="", compare=False, repr=False)
    """The whole (rendered) text the document came from; used only to locate errors."""
    path: str = ""
    """Where `body` sits inside the document: '' for the document itself, `items[3]` for an
    item of a `kind: List` document (`gitfleet.load.lists`); error field paths start with it."""


@dataclass(frozen=True)
class Origin:
    """Where an object was declared."""

    file: str
    doc: int
    line: int


@dataclass(frozen=True)
class Resource:
    """A payload object from `resources/` (the hub's staging area), identity precomputed."""

    origin: Origin
    obj: Mapping[str, Any]
    group: str
    version: str
    kind: str
    namespace: str
    """'' for cluster-scoped objects (or objects written without a namespace)."""
    name: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass(frozen=True)
class PathCommit:
    """The source commit that last changed a file on the source branch's first-parent history
    (for a merged pull request: the merge commit), with its author and committer as
    `Name <email>`. Filled in by the shell (`gitfleet.repo`); the pass only reads it."""

    commit: str
    author: str
    committer: str


ObjectKey = tuple[str, str]
"""(namespace, name); namespace is '' for cluster-scoped kinds."""


@dataclass(frozen=True)
class FleetSnapshot:
    """A validated fleet at one revision. Invalid objects are absent and listed in `errors`."""

    fleet: Fleet
    clusters: Mapping[str, MemberCluster]
    """Inventory by name: MemberClusters, plus ClusterProfiles converted to MemberClusters."""
    placements: Mapping[str, ClusterResourcePlacement]
    resource_placements: Mapping[ObjectKey, ResourcePlacement]
    cluster_overrides: Mapping[str, ClusterResourceOverride]
    resource_overrides: Mapping[ObjectKey, ResourceOverride]
    strategies: Mapping[str, ClusterStagedUpdateStrategy]
    update_runs: Mapping[str, ClusterStagedUpdateRun]
    approvals: Mapping[str, ClusterApprovalRequest]
    evictions: Mapping[str, ClusterResourcePlacementEviction]
    budgets: Mapping[str, ClusterResourcePlacementDisruptionBudget]
    resources: tuple[Resource, ...]
    """Payload objects, sorted by (file, doc)."""
    errors: tuple[FleetError, ...]
    origins: Mapping[tuple[str, str, str], Origin]
    """(kind, namespace, name) -> where each fleet object was declared."""
    group_upgrades: Mapping[ObjectKey, ClusterGroupUpgrade] = field(default_factory=dict)
    """ClusterGroupUpgrades by (namespace, name) (spec/cluster-group-upgrade.md)."""
    distributions: Mapping[ObjectKey, ReplicaDistribution] = field(default_factory=dict)
    """ReplicaDistributions by (namespace, name) (spec/replica-distribution.md)."""
    commit: str | None = None
    """Source commit the snapshot was read from (None for a working directory)."""
    error_files: frozenset[str] = frozenset()
    """Files that produced at least one error (the pass holds placements that used them)."""
    staged_strategies: Mapping[ObjectKey, StagedUpdateStrategy] = field(default_factory=dict)
    staged_update_runs: Mapping[ObjectKey, StagedUpdateRun] = field(default_factory=dict)
    staged_approvals: Mapping[ObjectKey, ApprovalRequest] = field(default_factory=dict)
    file_commits: Mapping[str, PathCommit] = field(default_factory=dict)
    """Source file -> the commit that last changed it; only approval files are looked up
    (who approved a stage). Empty when rendering a working directory."""
    warnings: tuple[FleetError, ...] = ()
    """Accepted input that probably does not do what was meant (`gitfleet.load.lint`); errors
    only under `gitfleet validate --strict`. Computed only when the loader is asked to lint."""
    notes: tuple[FleetError, ...] = ()
    """Information about how input was read (e.g. manifests found outside `resources/`), and
    warnings about accepted input (plaintext Secrets under `spec.secrets.allowPlaintext`)."""
    tenants: Mapping[str, Tenant] = field(default_factory=dict)
    """Tenants by name (governance: `reconciler.govern.tenancy`)."""
    deletion_approvals: Mapping[str, DeletionApproval] = field(default_factory=dict)
    """DeletionApprovals by name (`approvals/`)."""
    unloaded_tenants: Mapping[str, int | None] = field(default_factory=dict)
    """File -> line of a Tenant declared there that did not load (`gitfleet.load.unloaded`):
    the pass holds what no loaded Tenant owns (`reconciler.govern.tenancy`)."""
    allowed_deletions: frozenset[str] | None = None
    """Placement keys (or `*`) whose held deletion this source change approves: trailers
    `Gitfleet-Allow-Deletion` of its new commits plus the DeletionApprovals it adds or changes.
    Set by the shell (hub loop, `plan`); None (a working tree): every DeletionApproval counts."""
    sealed: SealedValues = field(default_factory=SealedValues, compare=False, repr=False)
    """The values of Secrets decrypted from SOPS files (their resources hold placeholders) and
    the hub's age key; only `reconciler.sealing` opens it."""

    def approval_files(self) -> list[tuple[str, list[str]]]:
        """(file, placement keys) of every DeletionApproval, for the shell to date."""
        out = []
        for name, approval in sorted(self.deletion_approvals.items()):
            origin = self.origins.get(("DeletionApproval", "", name))
            if origin is not None:
                out.append((origin.file, list(approval.spec.placements)))
        return out
