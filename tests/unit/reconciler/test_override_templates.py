"""Results of overrides that read the cluster's name and labels, made from templates
(`manifests.OverrideRenderer`, `reconciler.nametemplate`): every cluster gets exactly what
applying its overrides with its own name and label values and serialising the result gives
(manifests byte for byte, failures and faults), for label values that need quotes, look like
numbers, dates or booleans, are empty, missing or no Kubernetes label value at all (a
MemberCluster's labels are not checked); and one template serves every cluster on
which the same rules apply."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconciler import manifests
from reconciler.manifests import ClusterManifests, OverrideRenderer
from reconciler.schedule.clusters import ClusterView
from reconciler.select import build_index, select_resources
from tests.unit.override.override_helpers import NS_SELECTOR, app_fleet, cro, index_of, rule, view

NAME = "${MEMBER-CLUSTER-NAME}"
REGION = "${MEMBER-CLUSTER-LABEL-KEY-region}"
TIER = "${MEMBER-CLUSTER-LABEL-KEY-tier}"
ARGS = "/spec/template/spec/containers/0/args"  # only the Deployment has a container
VALUES = ["eu", "1.5", "true", "no", "y", "null", "1_000", "0x1F", "2001-12-14", "A.b_c", ""]
VALUES += ["x" * 63, "on", "12", "1e3", "a-b", "Eu"]
VALUES += ["a: b #x", "x" * 70, "- a", "'q'", "größe", "a\nb", '"', "-a"]  # no label values
NAMES = ["eu-1", "no", "y", "a", "c-9"]


def _rules() -> list[dict[str, Any]]:
    notes = {"a": NAME, "b": f"x-{REGION}", "c": REGION, "d": f"{REGION}.{TIER}"}
    return [
        rule([{"op": "add", "path": "/metadata/annotations", "value": notes}]),
        rule(
            [{"op": "add", "path": "/metadata/labels", "value": {"tier": TIER, "at": f"{NAME}"}}],
            selector={"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"on": "x"}}}]},
        ),
        rule(
            [{"op": "add", "path": ARGS, "value": [REGION, f"{TIER}-{NAME}", NAME]}],
            selector={"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"on": "x"}}}]},
        ),
    ]


def _views() -> list[ClusterView]:
    out = []
    for i, value in enumerate(VALUES):
        name = NAMES[i % len(NAMES)] + f"-{i}" if i % 3 else NAMES[i % len(NAMES)]
        labels = {"region": value, "tier": VALUES[-1 - i]}
        if i % 4 == 1:
            labels["on"] = "x"
        if i == 5:
            del labels["tier"]  # a missing label: an error naming the cluster
        out.append(view(name, **labels))
    for i, name in enumerate(["on", "null", "n", "true", "eu-2", "off"]):  # names alone
        out.append(view(name, region="eu", tier="gold", **({"on": "x"} if i % 2 else {})))
    return out


def _render(tmp_path: Path, templates: bool, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    manifests._outcomes.clear()
    manifests._templates.clear()
    if not templates:
        monkeypatch.setattr(manifests, "template_part", lambda key: None)
    fleet = app_fleet(tmp_path, cro("ns", [NS_SELECTOR], _rules()))
    selection = select_resources(fleet.placements["app"], build_index(fleet.resources))
    placement = index_of(fleet).for_placement(fleet.placements["app"], selection.resources)
    renderer = OverrideRenderer(placement, build_index(fleet.resources), {})
    results: list[ClusterManifests] = [renderer.for_cluster(selection, v) for v in _views()]
    monkeypatch.undo()
    return [(r.manifests, r.failures, r.faults, r.cluster_overrides) for r in results]


def test_templated_results_equal_results_applied_per_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Any] = []
    real = manifests.template_of
    monkeypatch.setattr(manifests, "template_of", lambda obj: made.append(obj) or real(obj))
    templated = _render(tmp_path / "a", True, monkeypatch)
    assert 0 < len(made) <= 2 * 3  # one per rule set and object (Deployment, ConfigMap, Secret)
    direct = _render(tmp_path / "b", False, monkeypatch)
    assert templated == direct
    assert any(failures for _, failures, _, _ in direct)  # the missing label's error is there
    assert len({m.data for each, *_ in direct for m in each or ()}) > len(VALUES)


@pytest.mark.parametrize("named", [False, True])
def test_one_result_per_label_set_unless_the_name_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: bool
) -> None:
    """Clusters with equal labels share one result object (made once) when no rule reads the
    cluster's name; with `${MEMBER-CLUSTER-NAME}` each cluster gets its own, with its name."""
    manifests._outcomes.clear()
    notes = {"where": REGION, **({"who": NAME} if named else {})}
    rules = [rule([{"op": "add", "path": "/metadata/annotations", "value": notes}])]
    fleet = app_fleet(tmp_path, cro("ns", [NS_SELECTOR], rules))
    selection = select_resources(fleet.placements["app"], build_index(fleet.resources))
    placement = index_of(fleet).for_placement(fleet.placements["app"], selection.resources)
    renderer = OverrideRenderer(placement, build_index(fleet.resources), {})
    made: list[str] = []
    real = renderer._made_for
    monkeypatch.setattr(renderer, "_made_for", lambda s, v: made.append(v.name) or real(s, v))
    views = [view("a", region="eu"), view("b", region="eu"), view("c", region="us")]
    results = [renderer.for_cluster(selection, v) for v in views]
    assert made == (["a", "b", "c"] if named else ["a", "c"])
    assert (results[0] is results[1]) is not named and results[0] is not results[2]
    texts = [b"".join(m.data for m in r.manifests or ()) for r in results]
    assert (b"who: a" in texts[0] and b"who: b" in texts[1]) is named
    assert b"where: eu" in texts[1] and b"where: us" in texts[2]
