"""The agent against a real kube-apiserver: drift detection (Full and Partial comparison),
ReportDiff (never writes), and takeover of existing objects (Always / IfNoDiff / Never)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.kube.conftest import Counting, Names
from tests.kube.helpers import agent_pass, failures, other_manager_apply, placement
from tests.unit.agent.conftest import COMMIT2, cm, deployment, ns


def paths(details: Any) -> dict[str, tuple[str | None, str | None]]:
    return {d.path: (d.value_in_hub, d.value_in_member) for d in details}


@pytest.mark.parametrize("comparison", ["PartialComparison", "FullComparison"])
def test_report_diff_never_writes(kube: Counting, names: Names, comparison: str) -> None:
    n = names.namespace
    other_manager_apply(kube, ns(n), "kubectl")
    other_manager_apply(kube, cm("x", n, k="other"), "kubectl")
    kube.writes.clear()
    strategy = {"type": "ReportDiff", "comparisonOption": comparison}
    objs = [ns(n), cm("x", n, k="v"), cm("missing", n)]
    report = agent_pass(kube, names.cluster, {names.key: objs}, strategy=strategy)
    assert kube.writes == []
    assert kube.get("v1", "ConfigMap", n, "missing") is None
    live = kube.get("v1", "ConfigMap", n, "x")
    assert live is not None and live["data"] == {"k": "other"}
    diffed = {
        d.name: paths(d.observed_diffs) for d in placement(report, names.key).diffed_placements
    }
    assert diffed["x"] == {"/data/k": ("v", "other")}
    assert diffed["missing"] == {"/": ("(the whole object)", None)}
    assert n not in diffed  # the server's defaults (spec.finalizers, labels) are not diffs


@pytest.mark.parametrize(
    ("comparison", "change", "drifts"),
    [
        ("PartialComparison", {"k": "changed"}, {"/data/k": ("v", "changed")}),
        ("FullComparison", {"k": "changed"}, {"/data/k": ("v", "changed")}),
        ("PartialComparison", {"extra": "1"}, {}),
        ("FullComparison", {"extra": "1"}, {"/data/extra": (None, "1")}),
    ],
    ids=["partial-changed", "full-changed", "partial-added-field", "full-added-field"],
)
def test_drift_detected_and_not_overwritten_if_not_drifted(
    kube: Counting,
    names: Names,
    comparison: str,
    change: dict[str, str],
    drifts: dict[str, tuple[str | None, str | None]],
) -> None:
    n = names.namespace
    strategy = {
        "type": "ServerSideApply",
        "comparisonOption": comparison,
        "whenToApply": "IfNotDrifted",
    }
    objs = [ns(n), cm("x", n, k="v")]
    first = agent_pass(kube, names.cluster, {names.key: objs}, strategy=strategy)
    assert failures(first, names.key) == []
    edit = cm("x", n, **change)
    other_manager_apply(kube, edit, "kubectl-edit")
    kube.writes.clear()
    second = agent_pass(kube, names.cluster, {names.key: objs}, first, strategy=strategy)
    drifted = {
        d.name: paths(d.observed_drifts) for d in placement(second, names.key).drifted_placements
    }
    if drifts:
        assert drifted == {"x": drifts}
        assert [(f[0], f[1]) for f in failures(second, names.key)] == [("x", "FoundDrifts")]
        assert kube.writes == []
        live = kube.get("v1", "ConfigMap", n, "x")
        assert live is not None and live["data"] == {"k": "v", **change}
    else:
        assert drifted == {} and failures(second, names.key) == []


@pytest.mark.parametrize(
    ("when", "live_value", "reason", "taken"),
    [
        ("Never", "v", "NotTakenOver", False),
        ("IfNoDiff", "other", "FailedToTakeOver", False),
        ("IfNoDiff", "v", "", True),
        ("Always", "other", "", True),
    ],
    ids=["never", "if-no-diff-differs", "if-no-diff-same", "always"],
)
def test_takeover_of_an_existing_object(
    kube: Counting, names: Names, when: str, live_value: str, reason: str, taken: bool
) -> None:
    n = names.namespace
    other_manager_apply(kube, ns(n), "kubectl")
    other_manager_apply(kube, cm("x", n, k=live_value), "kubectl")
    strategy = {"type": "ClientSideApply", "whenToTakeOver": when}
    report = agent_pass(
        kube, names.cluster, {names.key: [ns(n), cm("x", n, k="v")]}, strategy=strategy
    )
    live = kube.get("v1", "ConfigMap", n, "x")
    assert live is not None
    labels = live["metadata"].get("labels") or {}
    assert (labels.get("gitfleet.io/placement") == names.key) == taken
    got = {(f[0], f[1]) for f in failures(report, names.key)}
    if taken:
        assert ("x", reason) not in got and live["data"] == {"k": "v"}
        assert not any(name == "x" for name, _ in got)
    else:
        assert ("x", reason) in got and live["data"] == {"k": live_value}
    if when == "IfNoDiff" and not taken:
        diffed = {
            d.name: paths(d.observed_diffs) for d in placement(report, names.key).diffed_placements
        }
        assert diffed["x"] == {"/data/k": ("v", "other")}


def test_drift_with_always_is_corrected_by_the_next_pass(kube: Counting, names: Names) -> None:
    n = names.namespace
    objs = [ns(n), cm("x", n, k="v")]
    first = agent_pass(kube, names.cluster, {names.key: objs})
    other_manager_apply(kube, cm("x", n, k="changed"), "kubectl-edit")
    agent_pass(kube, names.cluster, {names.key: objs}, first, commit=COMMIT2)
    live = kube.get("v1", "ConfigMap", n, "x")
    assert live is not None and live["data"] == {"k": "v"}


def test_full_comparison_ignores_server_defaults_but_reports_member_edits(
    kube: Counting, names: Names
) -> None:
    n = names.namespace
    strategy = {"type": "ServerSideApply", "comparisonOption": "FullComparison"}
    web = deployment("web", n)
    first = agent_pass(kube, names.cluster, {names.key: [ns(n), web]}, strategy=strategy)
    assert (
        placement(first, names.key).drifted_placements == []
    )  # strategy, revisionHistoryLimit, ...
    live = kube.get("apps/v1", "Deployment", n, "web")
    assert live is not None and live["spec"]["revisionHistoryLimit"] == 10  # a server default
    edit = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": n, "labels": {"team": "ops"}},
        "spec": {
            "template": {"spec": {"containers": [{"name": "c", "imagePullPolicy": "Always"}]}}
        },
    }
    other_manager_apply(kube, edit, "kubectl-edit")
    second = agent_pass(kube, names.cluster, {names.key: [ns(n), web]}, first, strategy=strategy)
    drifted = {
        d.name: paths(d.observed_drifts) for d in placement(second, names.key).drifted_placements
    }
    assert drifted == {
        "web": {
            "/metadata/labels": (None, "map[team:ops]"),
            "/spec/template/spec/containers/0/imagePullPolicy": (None, "Always"),
        }
    }
