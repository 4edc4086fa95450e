"""A placement's remembered work is keyed by only the cluster label keys it can read
(`placememo.label_keys`): which keys those are, and that relabelling any cluster with any key,
read or not, gives exactly what computing every placement afresh gives, on every golden fleet."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.api import MemberCluster
from gitfleet.load.model import FleetSnapshot
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo
from reconciler.govern.checks import NO_GOVERNANCE
from reconciler.pass_ import reconcile
from reconciler.placememo import label_keys
from reconciler.state import State, read_state
from renderers import load_fleet
from tests.golden.test_golden import CASES, case_spec
from tests.unit.reconciler.test_place_memo import _same

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
UNREAD = "gitfleet.test/never-read"


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    placememo.forget()
    yield
    placememo.forget()


def _relabel(fleet: FleetSnapshot, cluster: str, key: str, value: str | None) -> FleetSnapshot:
    """The fleet with one label of one cluster set (None: removed)."""
    old: MemberCluster = fleet.clusters[cluster]
    labels = dict(old.metadata.labels or {})
    if value is None:
        labels.pop(key, None)
    else:
        labels[key] = value
    meta = old.metadata.model_copy(update={"labels": labels})
    clusters = {**fleet.clusters, cluster: old.model_copy(update={"metadata": meta})}
    return dataclasses.replace(fleet, clusters=clusters)


def _edits(fleet: FleetSnapshot) -> list[tuple[str, str, str | None]]:
    """For the first three clusters: every label key in the fleet set to each value another
    cluster has for it (so a cluster comes to match a selector) and to a new value, then
    removed; and a key nothing reads added."""
    values: dict[str, set[str]] = {}
    for c in fleet.clusters.values():
        for key, value in (c.metadata.labels or {}).items():
            values.setdefault(key, set()).add(value)
    out: list[tuple[str, str, str | None]] = []
    for cluster in sorted(fleet.clusters)[:3]:
        for key, seen in sorted(values.items()):
            out += [(cluster, key, value) for value in [*sorted(seen), "relabelled", None]]
        out.append((cluster, UNREAD, "x"))
    return out


def _relabel_each(fleet: FleetSnapshot) -> None:
    result = reconcile(fleet, State(), None, NOW)
    for k, (cluster, key, value) in enumerate(_edits(fleet)):
        changed = _relabel(fleet, cluster, key, value)
        prior = read_state(result.files)[0]
        later = NOW + timedelta(minutes=k + 1)
        reconcile(fleet, prior, None, later)  # remembered under the old labels
        result = reconcile(changed, prior, None, later)
        placememo.forget()
        _same(result, reconcile(changed, prior, None, later))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_relabelling_any_key_gives_the_fresh_tree(case: Path) -> None:
    spec = case_spec(case)
    _relabel_each(load_fleet(WorkdirTree((case / spec.get("fleet", "fleet")).resolve())))


def test_relabelling_moves_placements_of_a_generated_fleet(tmp_path: Path) -> None:
    """PickAll with required affinity, PickN with topology spread, overrides reading labels:
    the golden fleets' scheduling does not move on these relabels (taints, sticky picks)."""
    write_fleet(build_fleet(FleetSize(12, 10, 40, 6), seed=3), tmp_path)
    _relabel_each(load_fleet(WorkdirTree(tmp_path)))


def _placement(policy: dict[str, Any]) -> Any:
    from gitfleet.api import ClusterResourcePlacement

    return ClusterResourcePlacement.model_validate(
        {
            "apiVersion": "placement.kubernetes-fleet.io/v1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "p"},
            "spec": {
                "resourceSelectors": [
                    {"group": "", "version": "v1", "kind": "Namespace", "name": "a"}
                ],
                "policy": policy,
            },
        }
    )


AFFINITY = {
    "placementType": "PickN",
    "numberOfClusters": 2,
    "affinity": {
        "clusterAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "clusterSelectorTerms": [
                    {
                        "labelSelector": {
                            "matchLabels": {"env": "prod"},
                            "matchExpressions": [{"key": "zone", "operator": "Exists"}],
                        }
                    }
                ]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "preference": {"labelSelector": {"matchLabels": {"tier": "gold"}}}}
            ],
        }
    },
    "topologySpreadConstraints": [{"topologyKey": "region", "maxSkew": 1}],
}


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ({"placementType": "PickAll"}, set()),
        ({"placementType": "PickFixed", "clusterNames": ["a"]}, set()),
        (AFFINITY, {"env", "zone", "tier", "region"}),
    ],
)
def test_label_keys_of_the_policy(policy: dict[str, Any], expected: set[str]) -> None:
    assert label_keys(_placement(policy), (), NO_GOVERNANCE) == frozenset(expected)
