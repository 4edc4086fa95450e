"""Structural types for the placement objects that resource selection reads.

`select_resources` accepts any object shaped like a `ClusterResourcePlacement` or
`ResourcePlacement` from `gitfleet.api` (pydantic models, snake_case attributes); these
protocols name exactly the attributes it reads, so the selector does not depend on the
models' other fields. Used by `reconciler.select.selector` and by type checkers only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class LabelSelectorLike(Protocol):
    """A Kubernetes label selector (matchLabels / matchExpressions) that can test labels."""

    def matches(self, labels: dict[str, str], /) -> bool: ...


class SelectorTermLike(Protocol):
    """One `spec.resourceSelectors[]` term."""

    @property
    def group(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str | None: ...
    @property
    def label_selector(self) -> LabelSelectorLike | None: ...
    @property
    def selection_scope(self) -> str: ...


class MetadataLike(Protocol):
    """The part of `metadata` selection needs (namespace is read with getattr: CRPs have none)."""

    @property
    def name(self) -> str: ...


class PlacementSpecLike(Protocol):
    @property
    def resource_selectors(self) -> Sequence[SelectorTermLike]: ...


class PlacementLike(Protocol):
    """A ClusterResourcePlacement (no namespace) or a ResourcePlacement (namespaced)."""

    @property
    def metadata(self) -> MetadataLike: ...
    @property
    def spec(self) -> PlacementSpecLike: ...
