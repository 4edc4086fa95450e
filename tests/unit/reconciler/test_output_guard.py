"""No path reaches a reserved namespace or the agent's own objects, and the caps on paper are
enforced: object size, ConfigMap/Secret data, rendered bytes per cluster, one file per object."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gitfleet.api.reserved import refused_object
from gitfleet.repo.workdir import WorkdirTree
from reconciler.pass_ import PassResult, reconcile
from reconciler.state import State
from renderers import load_fleet

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
CRP = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: {name}
spec:
  resourceSelectors:
    - group: "{group}"
      version: v1
      kind: {kind}
      name: {target}
  policy:
    placementType: PickAll
"""
RP_IN_KUBE_SYSTEM = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourcePlacement
metadata:
  name: sneaky
  namespace: kube-system
spec:
  resourceSelectors:
    - group: ""
      version: v1
      kind: ConfigMap
      name: coredns
  policy:
    placementType: PickAll
"""


@pytest.fixture()
def fleet(tmp_path: Path) -> Path:
    path = tmp_path / "fleet"
    shutil.copytree(ROOT / "examples/quickstart", path)
    return path


def render(path: Path, prior: State | None = None) -> PassResult:
    return reconcile(load_fleet(WorkdirTree(path)), prior or State(), None, NOW)


def cluster_files(result: PassResult, cluster: str = "eu-1") -> dict[str, bytes]:
    return {p: d for p, d in result.files.items() if p.startswith(f"clusters/{cluster}/")}


@pytest.mark.parametrize(
    ("ident", "fragment"),
    [
        (("v1", "ConfigMap", "kube-system", "x"), "namespace kube-system is reserved"),
        (("v1", "ConfigMap", "fleet-system", "x"), "namespace fleet-system is reserved"),
        (("v1", "ConfigMap", "gitfleet-system", "gitfleet-inventory"), "gitfleet-system"),
        (("v1", "Namespace", "", "gitfleet-system"), "namespace gitfleet-system is reserved"),
        (("v1", "Namespace", "", "kube-public"), "namespace kube-public is reserved"),
        (("rbac.authorization.k8s.io/v1", "ClusterRole", "", "gitfleet-agent"), "own RBAC"),
        (("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "gitfleet-agent-x"), "RBAC"),
    ],
)
def test_reserved_objects_are_refused(ident: tuple[str, str, str, str], fragment: str) -> None:
    reason = refused_object(*ident)
    assert reason is not None and fragment in reason


@pytest.mark.parametrize(
    "ident",
    [("v1", "ConfigMap", "web", "x"), ("v1", "Namespace", "", "kubeweb"), ("v1", "Pod", "", "y")],
)
def test_ordinary_objects_pass(ident: tuple[str, str, str, str]) -> None:
    assert refused_object(*ident) is None


def test_the_agents_namespace_cannot_be_selected(fleet: Path) -> None:
    (fleet / "resources/gs.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gitfleet-system\n"
    )
    crp = CRP.format(name="grab", group="", kind="Namespace", target="gitfleet-system")
    (fleet / "placements/grab.yaml").write_text(crp)
    result = render(fleet)
    assert not any("gitfleet-system" in p for p in result.files if p.startswith("clusters/"))
    assert any("gitfleet-system" in e.message for e in result.errors), result.errors


def test_the_agents_rbac_cannot_be_placed(fleet: Path) -> None:
    (fleet / "resources/rbac/agent.yaml").write_text(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n"
        "metadata:\n  name: gitfleet-agent\nrules: []\n"
    )
    group = "rbac.authorization.k8s.io"
    crp = CRP.format(name="grab", group=group, kind="ClusterRole", target="gitfleet-agent")
    (fleet / "placements/grab.yaml").write_text(crp)
    result = render(fleet)
    assert not any("gitfleet-agent" in p for p in result.files)
    errors = [e for e in result.errors if e.file == "placements/grab.yaml"]
    assert errors and "own RBAC" in errors[0].message


def test_a_placement_living_in_a_reserved_namespace_places_nothing(fleet: Path) -> None:
    (fleet / "resources/coredns.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: coredns\n  namespace: kube-system\n"
        "data:\n  Corefile: evil\n"
    )
    (fleet / "placements/sneaky.yaml").write_text(RP_IN_KUBE_SYSTEM)
    result = render(fleet)
    objects = [p for p in result.files if p.startswith("clusters/") and "_" in p.rsplit("/", 1)[1]]
    assert not any("kube-system" in p for p in objects)
    assert not any(b"Corefile" in d for p, d in result.files.items() if p.startswith("clusters/"))
    assert any(e.file == "placements/sneaky.yaml" for e in result.errors), result.errors


def test_configmap_data_over_one_mib_is_refused(fleet: Path) -> None:
    big = "x" * (1024 * 1024 + 10)
    (fleet / "resources/web/big.yaml").write_text(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  namespace: web\n"
        f"data:\n  blob: {big}\n"
    )
    result = render(fleet)
    assert not any("configmap_web_big" in p for p in result.files)
    errors = [e for e in result.errors if "ConfigMap web/big" in e.message]
    assert errors and "1 MiB" in errors[0].message and errors[0].file == "placements/web.yaml"
    assert any("deployment" in p for p in cluster_files(result))  # the rest of web renders


def test_rendered_bytes_per_cluster_are_capped_and_the_last_good_output_kept(
    fleet: Path,
) -> None:
    good = render(fleet)
    fleet_yaml = fleet / "fleet.yaml"
    fleet_yaml.write_text(
        fleet_yaml.read_text() + "  limits:\n    maxRenderedBytesPerCluster: 1000\n"
    )
    capped = render(fleet, good.state)
    assert cluster_files(capped) == cluster_files(good)
    errors = [e for e in capped.errors if "maxRenderedBytesPerCluster (1000)" in e.message]
    assert errors and "cluster eu-1" in " ".join(e.message for e in errors)
    # With no previous output there is nothing to keep, and nothing partial is written.
    assert cluster_files(render(fleet)) == {}


def test_two_objects_never_share_one_output_file(fleet: Path) -> None:
    crd_objects = "".join(
        f"---\napiVersion: example.com/v1\nkind: {kind}\nmetadata:\n  name: same\n"
        "  namespace: web\nspec: {}\n"
        for kind in ("Widget", "WIDGET")
    )
    (fleet / "resources/web/widgets.yaml").write_text(crd_objects)
    result = render(fleet)
    widget_files = [p for p in cluster_files(result) if "widget" in p]
    assert len(widget_files) == 1
    errors = [e for e in result.errors if "already used by" in e.message]
    assert errors and "Widget web/same" in errors[0].message


def test_cluster_bytes_counts_each_cluster_folder_alone() -> None:
    from reconciler.outputguard import cluster_bytes

    files = {
        "clusters/a/index.yaml": b"12345",
        "clusters/a/app/x_y.yaml": b"123",
        "clusters/ab/index.yaml": b"1",
        "status/clusters/a.yaml": b"1234567890",
    }
    assert cluster_bytes(files) == {"a": 8, "ab": 1}


@pytest.mark.parametrize(
    ("cap", "totals", "over"),
    [
        (10, {"a": 5, "b": 10}, []),
        (9, {"a": 5, "b": 10}, ["b"]),
        (4, {"a": 5, "b": 10}, ["a", "b"]),
        (-1, {"a": 5, "b": 10}, ["a", "b", "c"]),
        (-1, {}, ["a", "b", "c"]),
    ],
)
def test_clusters_over_the_cap_are_those_a_look_at_each_finds(
    cap: int, totals: dict[str, int], over: list[str]
) -> None:
    """Totals at the cap pass, one byte over fails; a cluster without files counts 0 bytes."""
    from dataclasses import replace

    from gitfleet.api.limits import DEFAULT_LIMITS
    from reconciler.outputguard import clusters_over_cap

    limits = replace(DEFAULT_LIMITS, max_rendered_bytes_per_cluster=cap)
    assert clusters_over_cap(["a", "b", "c"], totals, limits) == over
