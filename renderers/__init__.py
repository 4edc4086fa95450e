"""Renderers: turn a fleet repository's source files into a validated `FleetSnapshot`.

`load_fleet(tree)` is the one entry point the CLI and the reconciler call. Order: `fleet.yaml`
is read first (its `spec.limits` govern everything after it, so limits are only ever read from
`fleet.yaml`, parsed with the default limits); then plain YAML files and kustomize directories
are rendered; then Jinja2 templates and Helm charts, which see the Fleet values (templates also
the cluster inventory) declared by the plain and kustomize files. Clusters that templates generate are not visible to
other templates (there is one template pass, no fixed point). Everything ends in
`gitfleet.load.snapshot.build_snapshot`, with the tree's own listing errors. Templates see the
Fleet object wherever it is declared (outside templates), but only `fleet.yaml` sets limits.
Files whose documents carry SOPS metadata are taken from the plain results and decrypted by
`renderers.sops` with the hub's age key (their Secrets hold placeholders; values in `sealed`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gitfleet.api import Fleet
from gitfleet.api.errors import FleetError
from gitfleet.api.limits import DEFAULT_LIMITS
from gitfleet.load.lists import expand_lists
from gitfleet.load.model import FleetSnapshot, SourceDoc
from gitfleet.load.sealedvalues import SealedValues
from gitfleet.load.snapshot import build_snapshot, read_fleet_settings
from gitfleet.load.yamlio import parse_documents
from gitfleet.repo.tree import Tree
from renderers.base import RenderContext, TemplateContext, Unit, read_source
from renderers.registry import default_renderers, plan_units
from renderers.sops import SopsRenderer, is_sops_document

FLEET_FILE = "fleet.yaml"
INVENTORY_KINDS = ("MemberCluster", "ClusterProfile")
PAYLOAD_DIR = "resources/"

__all__ = ["FLEET_FILE", "build_template_context", "hub_key_file", "load_fleet", "read_settings"]


def read_settings(tree: Tree) -> tuple[list[SourceDoc], list[FleetError]]:
    """The documents of `fleet.yaml` (empty when absent), parsed with the default limits."""
    if FLEET_FILE not in tree.files():
        return [], []
    text, error = read_source(tree, FLEET_FILE, DEFAULT_LIMITS)
    if text is None:
        return [], [error] if error else []
    return parse_documents(FLEET_FILE, text, DEFAULT_LIMITS)


def _dump(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


def _cluster_entry(cluster: Any) -> dict[str, Any]:
    body = _dump(cluster)
    metadata, spec = body.get("metadata") or {}, body.get("spec") or {}
    properties = (body.get("status") or {}).get("properties") or {}
    return {
        "name": metadata.get("name", ""),
        "labels": dict(sorted((metadata.get("labels") or {}).items())),
        "taints": list(spec.get("taints") or []),
        "properties": {k: v.get("value") for k, v in sorted(properties.items())},
    }


def build_template_context(
    fleet: Fleet, docs: Sequence[SourceDoc], commit: str | None = None
) -> TemplateContext:
    """Template variables from the Fleet and the valid MemberClusters/ClusterProfiles in `docs`."""
    items, _ = expand_lists(docs)
    inventory = [
        d
        for d in items
        if d.body.get("kind") in INVENTORY_KINDS and not d.file.startswith(PAYLOAD_DIR)
    ]
    fleet_body = _dump(fleet)
    key = (tuple(inventory), fleet_body)  # documents of unchanged blobs are the same objects
    last = _last_context[0]
    if last is not None and last[0] == key:
        return last[1]
    clusters: Mapping[str, Any] = build_snapshot(inventory, [], commit=commit).clusters
    context = TemplateContext(
        values=dict((fleet_body.get("spec") or {}).get("values") or {}),
        clusters=tuple(_cluster_entry(clusters[name]) for name in sorted(clusters)),
        fleet=fleet_body,
    )
    _last_context[0] = (key, context)
    return context


_last_context: list[tuple[tuple[tuple[SourceDoc, ...], dict[str, Any]], TemplateContext] | None] = [
    None
]
"""The last template context with the inventory and Fleet it was built from (a hub's next pass
mostly sees the same ones)."""


def hub_key_file(given: Path | None = None) -> Path | None:
    """The hub's age key file: `given`, else `SOPS_AGE_KEY_FILE` from the environment."""
    if given is not None:
        return given
    configured = os.environ.get("SOPS_AGE_KEY_FILE")
    return Path(configured) if configured else None


def _sops_units(docs: list[SourceDoc]) -> tuple[list[SourceDoc], list[Unit]]:
    """Plain documents minus those of SOPS-encrypted files, and those files as sops units."""
    files = sorted({d.file for d in docs if is_sops_document(d.body)})
    if not files:
        return docs, []
    kept = [d for d in docs if d.file not in files]
    return kept, [Unit("sops", f, (f,)) for f in files]


def load_fleet(
    tree: Tree, *, lint: bool = False, age_key_file: Path | None = None
) -> FleetSnapshot:
    """Render every source file of `tree` and build the validated snapshot. SOPS files are
    decrypted with `age_key_file` (default: `SOPS_AGE_KEY_FILE`)."""
    settings, errors = read_settings(tree)
    fleet, _ = read_fleet_settings(settings)  # problems are reported by build_snapshot
    limits = fleet.limits()
    plan = plan_units(tree, limits)
    renderers = default_renderers()
    ctx = RenderContext(tree, limits)
    docs: list[SourceDoc] = []
    if any(u.path == FLEET_FILE for u in plan.of("plain")):
        docs.extend(settings)
    else:
        errors = []
    for name in ("plain", "kustomize"):
        units = [u for u in plan.of(name) if u.path != FLEET_FILE]
        found, problems = renderers[name].render(units, ctx)
        docs.extend(found)
        errors.extend(problems)
    docs, sops_units = _sops_units(docs)
    sealed = SealedValues()
    found, problems = SopsRenderer(hub_key_file(age_key_file), sealed).render(sops_units, ctx)
    docs.extend(found)
    errors.extend(problems)
    declared, _ = read_fleet_settings(docs)  # the Fleet may live outside fleet.yaml
    template = build_template_context(declared, docs, tree.commit)
    for name in ("jinja", "helm"):
        found, problems = renderers[name].render(
            plan.of(name), RenderContext(tree, limits, template)
        )
        docs.extend(found)
        errors.extend(problems)
    docs.sort(key=lambda d: (d.file, d.doc))
    return build_snapshot(
        docs, [*errors, *tree.errors], commit=tree.commit, lint=lint, sealed=sealed
    )
