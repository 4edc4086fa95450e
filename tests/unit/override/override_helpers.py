"""Builders shared by the override tests: real fleet repositories in tmp_path, loaded end to end.

`load(tmp_path, files)` writes the files, renders and validates them with `renderers.load_fleet`
and returns the FleetSnapshot; `selected` runs real resource selection for one placement;
`view` builds the ClusterView the override engine reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from gitfleet.api import MemberCluster
from gitfleet.load.model import FleetSnapshot
from gitfleet.repo import WorkdirTree
from reconciler.override import Applied, OverrideIndex, build_override_index
from reconciler.schedule.clusters import ClusterView
from reconciler.select import SelectedResource, build_index, select_resources

PLACEMENT_API = "placement.kubernetes-fleet.io/v1beta1"


def dump(*docs: Mapping[str, Any]) -> str:
    return yaml.safe_dump_all([dict(d) for d in docs], sort_keys=False)


def load(tmp_path: Path, files: Mapping[str, str]) -> FleetSnapshot:
    """Write `files` under tmp_path/fleet and load them like `gitfleet render` does."""
    from renderers import load_fleet

    root = tmp_path / "fleet"
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return load_fleet(WorkdirTree(root))


def view(name: str, **labels: str) -> ClusterView:
    """A joined member cluster with `labels`."""
    cluster = MemberCluster.model_validate(
        {
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": {"name": name, "labels": dict(labels)},
            "spec": {},
        }
    )
    return ClusterView(name=name, cluster=cluster, ineligible_reason=None)


def crp(name: str, *selectors: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": PLACEMENT_API,
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": name},
        "spec": {"resourceSelectors": [dict(s) for s in selectors]},
    }


def rp(name: str, namespace: str, *selectors: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": PLACEMENT_API,
        "kind": "ResourcePlacement",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"resourceSelectors": [dict(s) for s in selectors]},
    }


NS_SELECTOR = {"group": "", "version": "v1", "kind": "Namespace", "name": "app"}


def rule(
    ops: Sequence[Any] | None = None,
    selector: Mapping[str, Any] | None = None,
    delete: bool = False,
    no_selector: bool = False,
) -> dict[str, Any]:
    """An override rule; the cluster selector defaults to `{}` (every cluster)."""
    out: dict[str, Any] = {}
    if not no_selector:
        out["clusterSelector"] = dict(selector) if selector is not None else {}
    if delete:
        out["overrideType"] = "Delete"
    else:
        out["jsonPatchOverrides"] = [dict(o) for o in ops or []]
    return out


def region(*values: str) -> dict[str, Any]:
    """A cluster selector matching clusters whose `region` label is one of `values`."""
    return {
        "clusterSelectorTerms": [
            {
                "labelSelector": {
                    "matchExpressions": [
                        {"key": "region", "operator": "In", "values": list(values)}
                    ]
                }
            }
        ]
    }


def cro(name: str, selectors: Sequence[Any], rules: Sequence[Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": PLACEMENT_API,
        "kind": "ClusterResourceOverride",
        "metadata": {"name": name},
        "spec": {
            **spec,
            "clusterResourceSelectors": [dict(s) for s in selectors],
            "policy": {"overrideRules": [dict(r) for r in rules]},
        },
    }


def ro(
    name: str,
    namespace: str,
    selectors: Sequence[Any],
    rules: Sequence[Any],
    **spec: Any,
) -> dict[str, Any]:
    return {
        "apiVersion": PLACEMENT_API,
        "kind": "ResourceOverride",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            **spec,
            "resourceSelectors": [dict(s) for s in selectors],
            "policy": {"overrideRules": [dict(r) for r in rules]},
        },
    }


DEPLOY = {"group": "apps", "version": "v1", "kind": "Deployment", "name": "web"}

APP_RESOURCES = dump(
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app"}},
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "app", "labels": {"app": "web"}},
        "spec": {
            "replicas": 1,
            "template": {"spec": {"containers": [{"name": "web", "image": "web:1"}]}},
        },
    },
    {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "app"},
        "data": {"mode": "hub"},
    },
    {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "creds", "namespace": "app"},
        "stringData": {"password": "hunter2-SECRET"},
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "reader"},
        "rules": [],
    },
)


PLAINTEXT_FLEET = """apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: fleet
spec:
  secrets:
    allowPlaintext: true
"""


def app_fleet(tmp_path: Path, *overrides: Mapping[str, Any], extra: str = "") -> FleetSnapshot:
    """Namespace `app` (Deployment web, ConfigMap settings, Secret creds), ClusterRole reader,
    placement `app` (namespace app + reader), and `overrides` in overrides/main.yaml."""
    files = {
        # The Secret is plaintext on purpose (override tests on Secrets): the fleet opts in.
        "fleet.yaml": PLAINTEXT_FLEET,
        "resources/app.yaml": APP_RESOURCES,
        "placements/app.yaml": dump(
            crp(
                "app",
                NS_SELECTOR,
                {
                    "group": "rbac.authorization.k8s.io",
                    "version": "v1",
                    "kind": "ClusterRole",
                    "name": "reader",
                },
            )
        ),
    }
    if overrides:
        files["overrides/main.yaml"] = dump(*overrides)
    if extra:
        files["placements/extra.yaml"] = extra
    return load(tmp_path, files)


def selected(
    fleet: FleetSnapshot, placement: str, namespace: str = ""
) -> tuple[SelectedResource, ...]:
    """Real resource selection of one placement."""
    target = (
        fleet.resource_placements[(namespace, placement)]
        if namespace
        else fleet.placements[placement]
    )
    selection = select_resources(target, build_index(fleet.resources))
    assert selection.error is None, selection.error
    return selection.resources


def pick(resources: tuple[SelectedResource, ...], kind: str, name: str) -> SelectedResource:
    return next(r for r in resources if r.kind == kind and r.name == name)


def index_of(fleet: FleetSnapshot, **kwargs: Any) -> OverrideIndex:
    """The override index; fails the test when the fleet has load or cross-object errors."""
    assert not fleet.errors, [str(e) for e in fleet.errors]
    index, errors = build_override_index(fleet, **kwargs)
    assert not errors, [str(e) for e in errors]
    return index


# Default clusters of the apply tests.
EU = view("eu-1", region="eu", tier="gold")
US = view("us-1", region="us")


def apply_on(
    tmp_path: Path, overrides: list[dict[str, Any]], kind: str, name: str, cluster: Any = EU
) -> Applied:
    """Load app_fleet with `overrides` and apply them to one object of placement `app`."""
    fleet = app_fleet(tmp_path, *overrides)
    resources = selected(fleet, "app")
    placement = index_of(fleet).for_placement(fleet.placements["app"], resources)
    return placement.apply(pick(resources, kind, name), cluster)


def replicas(value: Any, sel: dict[str, Any] | None = None) -> dict[str, Any]:
    return rule([{"op": "replace", "path": "/spec/replicas", "value": value}], selector=sel)
