"""Every targeted cluster's override results at once (`RememberedRenderer.all_clusters`): with
the same inputs and clusters as the last run, none of which failed, only the clusters whose
labels are other objects are looked at again and the others keep last run's very results;
other inputs, a failed cluster or a run that raised part way look at every cluster again."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from reconciler import manifestmemo
from reconciler.manifests import ClusterManifests
from reconciler.stagememo import forget_stages


@dataclass(frozen=True)
class _View:
    name: str
    labels: Mapping[str, str]


class _Renderer:
    """Stands in for `OverrideRenderer`: the result names the version and the cluster's tier."""

    version = "v1"
    looked: list[str] = []
    fail_on: str | None = None
    raise_on: str | None = None

    def __init__(self, *_: Any) -> None:
        pass

    def for_cluster(self, _selection: Any, view: _View) -> ClusterManifests:
        _Renderer.looked.append(view.name)
        if view.name == _Renderer.raise_on:
            raise RuntimeError("boom")
        failures = (("x.yaml", "failed"),) if view.name == _Renderer.fail_on else ()
        tier = view.labels.get("tier", "")
        names = (f"{_Renderer.version}-{tier}",) if tier else ()
        return ClusterManifests(cluster_overrides=names, failures=failures)


@pytest.fixture(autouse=True)
def _stubbed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(manifestmemo, "OverrideRenderer", _Renderer)
    monkeypatch.setattr(manifestmemo, "_inputs", lambda *_: (_Renderer.version,))
    _Renderer.version, _Renderer.fail_on, _Renderer.raise_on = "v1", None, None
    forget_stages()
    yield
    forget_stages()


VIEWS = {f"c{i}": _View(f"c{i}", {"tier": "gold" if i % 2 else ""}) for i in range(8)}
TARGETED = [*sorted(VIEWS), "gone"]  # a targeted cluster without a view is left out


def _run(views: Mapping[str, _View] = VIEWS) -> tuple[dict[str, ClusterManifests], list[Any]]:
    _Renderer.looked = []
    renderer = manifestmemo.RememberedRenderer("web", *([None] * 4))  # type: ignore[arg-type]
    return renderer.all_clusters(None, views, TARGETED)  # type: ignore[arg-type]


def test_only_clusters_with_other_labels_are_looked_at() -> None:
    first, failing = _run()
    assert list(first) == ["c1", "c3", "c5", "c7"] and not failing
    assert _Renderer.looked == sorted(VIEWS)
    again, _ = _run()
    assert _Renderer.looked == [] and again is first
    relabelled = {**VIEWS, "c2": _View("c2", {"tier": "silver"})}
    third, _ = _run(relabelled)
    assert _Renderer.looked == ["c2"]
    assert list(third) == ["c1", "c2", "c3", "c5", "c7"]  # in the targeted order
    assert third["c2"].cluster_overrides == ("v1-silver",) and third["c1"] is first["c1"]


def test_other_inputs_look_at_every_cluster() -> None:
    _run()
    _Renderer.version = "v2"
    made, _ = _run()
    assert _Renderer.looked == sorted(VIEWS) and made["c1"].cluster_overrides == ("v2-gold",)


def test_a_failed_cluster_is_reported_again_next_run() -> None:
    """A run with a failure is not remembered whole: the next one goes cluster by cluster (the
    failed result itself is reused) and reports the failure again."""
    _Renderer.fail_on = "c3"
    _, failing = _run()
    assert [c for c, _ in failing] == ["c3"]
    _, again = _run()
    assert _Renderer.looked == [] and [c for c, _ in again] == ["c3"]


def test_a_run_that_raised_is_not_taken_for_a_whole_one() -> None:
    _run()  # v1, whole
    _Renderer.version, _Renderer.raise_on = "v2", "c4"
    with pytest.raises(RuntimeError):
        _run()  # v2: c0..c3 remembered, then it raised
    _Renderer.raise_on = None
    made, _ = _run()
    assert made["c5"].cluster_overrides == ("v2-gold",)  # not v1's result
