"""Override results worked out once per cluster label set (`manifests.OverrideRenderer._row`):
the objects whose result does not read the cluster's name are looked up once per label set,
only the others cluster by cluster, and every cluster still gets exactly what applying its
overrides object by object and serialising the results gives."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest

from reconciler import manifests
from reconciler.manifests import OverrideRenderer, manifest_of
from reconciler.select import build_index, select_resources
from tests.unit.override.override_helpers import (
    DEPLOY,
    NS_SELECTOR,
    app_fleet,
    cro,
    index_of,
    ro,
    rule,
    view,
)

NAME = "${MEMBER-CLUSTER-NAME}"
REGION = "${MEMBER-CLUSTER-LABEL-KEY-region}"


class _Counting(dict[Any, Any]):
    """A table of `manifests._outcomes`, counting the lookups of results that read no cluster
    name."""

    unnamed = 0

    def get(self, key: Any, default: Any = None) -> Any:
        if key is None:
            _Counting.unnamed += 1
        return super().get(key, default)


def _setup(tmp_path: Path) -> tuple[OverrideRenderer, Any, Any]:
    """Placement `app`: a CRO on the namespace reads the region label (every object), an RO
    on the Deployment alone reads the cluster's name."""
    region = rule([{"op": "add", "path": "/metadata/annotations", "value": {"at": REGION}}])
    named = rule([{"op": "add", "path": "/metadata/labels/who", "value": f"x-{NAME}"}])
    fleet = app_fleet(
        tmp_path, cro("ns", [NS_SELECTOR], [region]), ro("web", "app", [DEPLOY], [named])
    )
    index = build_index(fleet.resources)
    selection = select_resources(fleet.placements["app"], index)
    placement = index_of(fleet).for_placement(fleet.placements["app"], selection.resources)
    return OverrideRenderer(placement, index, {}), placement, selection


def test_unnamed_results_are_looked_up_once_per_label_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables: OrderedDict[int, _Counting] = OrderedDict()
    monkeypatch.setattr(manifests, "_outcomes", tables)
    monkeypatch.setattr(manifests, "_table", lambda token: tables.setdefault(token, _Counting()))
    monkeypatch.setattr(_Counting, "unnamed", 0)
    counting = _Counting
    renderer, _, selection = _setup(tmp_path)
    views = [view(n, region="eu") for n in ("a", "b", "c", "d")] + [view("e", region="us")]
    results = [renderer.for_cluster(selection, v) for v in views]
    unnamed = sum(1 for s in selection.resources if s.kind != "Deployment")
    assert unnamed >= 3
    assert counting.unnamed == 2 * unnamed  # two label sets, not five clusters
    assert all(len(r.resource_overrides) == len(r.cluster_overrides) == 1 for r in results)
    a, b = results[0].manifests or (), results[1].manifests or ()
    assert len([1 for x, y in zip(a, b, strict=True) if x is not y]) == 1  # the Deployment


def test_every_cluster_gets_what_applying_its_overrides_gives(tmp_path: Path) -> None:
    renderer, placement, selection = _setup(tmp_path)
    views = [view(n, region=r) for n, r in [("a", "eu"), ("b", "eu"), ("no", "us"), ("c", "x")]]
    views.append(view("d"))  # the region label missing: an error on every object
    for v in views:
        got = renderer.for_cluster(selection, v)
        want, failures = [], []
        for sel in selection.resources:
            applied = placement.apply(sel, v)
            if applied.error is not None:
                failures.append(applied.error)
            elif applied.obj is not None:
                want.append(manifest_of(applied.obj))
        assert [(m.file, m.data, m.hash) for m in got.manifests or ()] == [
            (m.file, m.data, m.hash) for m in want
        ]
        assert [error for _, error in got.failures] == failures
        assert bool(failures) is (v.name == "d")
        assert any(b"who: x-" + v.name.encode() in m.data for m in want) is (v.name != "d")


def test_outcome_tables_beyond_the_limit_drop_the_least_recently_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(manifests, "_outcomes", OrderedDict())
    monkeypatch.setattr(manifests, "_counted", 0)
    monkeypatch.setattr(manifests, "MAX_OUTCOMES", 6)
    first, second = manifests._table(1), manifests._table(2)
    for name in ("a", "b", "c"):
        manifests._remember(first, name, None)
    assert manifests._table(1) is first  # now the most recently used
    for name in ("a", "b", "c"):
        manifests._remember(second, name, None)
    assert list(manifests._outcomes) == [2, 1] and manifests._counted == 6
    manifests._remember(second, "d", None)  # 7: tables dropped until at most 3 are held
    assert list(manifests._outcomes) == [1] and manifests._counted == 3
    assert manifests._table(1) is first and manifests._table(2) == {}
