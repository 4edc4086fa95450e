"""`load_fleet` end to end: settings first, plain + kustomize, then templates over the inventory."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitfleet.load.model import FleetSnapshot
from renderers import load_fleet
from tests.unit.renderers.render_helpers import make_git_tree, make_tree, messages, needs_kubectl

FLEET = """\
apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: fleet
spec:
  values:
    app: web
    namespace: web-system
"""


def member(name: str, region: str) -> str:
    return (
        "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n"
        f"metadata:\n  name: {name}\n  labels:\n    region: {region}\n"
    )


PER_CLUSTER = """\
{% for c in clusters %}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: {{ values.app }}-{{ c.name }}
spec:
  resourceSelectors:
    - group: ""
      version: v1
      kind: Namespace
      name: {{ values.namespace }}
  policy:
    placementType: PickFixed
    clusterNames: [{{ c.name | tojson }}]
{% endfor %}
"""

GENERATED_CLUSTER = """\
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata:
  name: generated-{{ clusters | length }}
"""

COUNTER = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: seen-{{ clusters | map(attribute='name') | join('-') }}
"""

FILES = {
    "fleet.yaml": FLEET,
    "clusters/east-1.yaml": member("east-1", "east"),
    "clusters/west-1.yml": member("west-1", "west"),
    "clusters/generated.yaml.j2": GENERATED_CLUSTER,
    "placements/per-cluster.yaml.j2": PER_CLUSTER,
    "resources/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web-system\n",
    "resources/seen.yaml.j2": COUNTER,
    "README.md": "# fleet\n",
    "templates/unused.j2": "{{ broken",
}


def check_snapshot(snapshot: FleetSnapshot) -> None:
    assert list(snapshot.errors) == [], messages(snapshot.errors)
    assert sorted(snapshot.clusters) == ["east-1", "generated-2", "west-1"]
    assert sorted(snapshot.placements) == ["web-east-1", "web-west-1"]
    names = sorted(r.name for r in snapshot.resources)
    assert names == ["seen-east-1-west-1", "web-system"]


def test_templates_see_plain_inventory_but_not_generated_clusters(tmp_path: Path) -> None:
    snapshot = load_fleet(make_tree(tmp_path, FILES))
    check_snapshot(snapshot)
    assert snapshot.commit is None


def test_git_commit_renders_like_the_working_directory(tmp_path: Path) -> None:
    tree = make_git_tree(tmp_path, FILES)
    try:
        snapshot = load_fleet(tree)
    finally:
        tree.close()
    check_snapshot(snapshot)
    assert snapshot.commit is not None and len(snapshot.commit) == 40


@pytest.mark.parametrize(
    ("extra", "bad_file", "expected"),
    [
        pytest.param(
            {"resources/big.yaml": "a: " + "x" * 5000 + "\n"},
            "resources/big.yaml",
            "limits.maxFileBytes (4096)",
            id="fleet-limits-apply-to-other-files",
        ),
        pytest.param(
            {
                "resources/slow.yaml.j2": "{% for i in range(100000) %}{% for j in range(100000) %}"
                "{% endfor %}{% endfor %}"
            },
            "resources/slow.yaml.j2",
            "limits.templateTimeoutSeconds (0.5s)",
            id="fleet-template-timeout",
        ),
        pytest.param(
            {"placements/bad.yaml.j2": "name: {{ values.missing }}\n"},
            "placements/bad.yaml.j2",
            "undefined value",
            id="template-error-fails-alone",
        ),
    ],
)
def test_errors_fail_alone(
    tmp_path: Path, extra: dict[str, str], bad_file: str, expected: str
) -> None:
    limits = "  limits:\n    maxFileBytes: 4096\n    templateTimeoutSeconds: 0.5\n"
    files = {**FILES, "fleet.yaml": FLEET + limits, **extra}
    snapshot = load_fleet(make_tree(tmp_path, files))
    bad = [e for e in snapshot.errors if e.file == bad_file]
    assert len(bad) == 1 and expected in bad[0].message, messages(snapshot.errors)
    assert sorted(snapshot.placements) == ["web-east-1", "web-west-1"]
    assert bad_file in snapshot.error_files


@needs_kubectl
def test_kustomize_outputs_payload_and_fleet_objects(tmp_path: Path) -> None:
    files = {
        **FILES,
        "resources/app/kustomization.yaml": "resources:\n- cm.yaml\nnamePrefix: k-\n",
        "resources/app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
        "clusters/extra/kustomization.yaml": "resources:\n- south.yaml\n",
        "clusters/extra/south.yaml": member("south-1", "south"),
    }
    snapshot = load_fleet(make_tree(tmp_path, files))
    assert list(snapshot.errors) == [], messages(snapshot.errors)
    assert "k-cm" in {r.name for r in snapshot.resources}
    assert "web-south-1" in snapshot.placements


def test_fleet_outside_fleet_yaml_gives_template_values(tmp_path: Path) -> None:
    files = {k: v for k, v in FILES.items() if k != "fleet.yaml"}
    files["settings/fleet.yml"] = FLEET.replace("app: web", "app: shop")
    snapshot = load_fleet(make_tree(tmp_path, files))
    assert list(snapshot.errors) == [], messages(snapshot.errors)
    assert sorted(snapshot.placements) == ["shop-east-1", "shop-west-1"]


def test_invalid_fleet_yaml_is_reported_once_and_defaults_apply(tmp_path: Path) -> None:
    files = {**FILES, "fleet.yaml": FLEET.replace("  values:", "  bogus: 1\n  values:")}
    snapshot = load_fleet(make_tree(tmp_path, files))
    fleet_errors = [e for e in snapshot.errors if e.file == "fleet.yaml"]
    assert len(fleet_errors) == 1, messages(snapshot.errors)
    assert fleet_errors[0].field == "spec.bogus" and fleet_errors[0].line == 6
