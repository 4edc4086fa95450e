"""KubeFleet YAML as users copy it: `kind: List` exports, mixed files, exported metadata/status,
numeric quantities, and the warnings `gitfleet validate` prints instead of ignoring input."""

from __future__ import annotations

import textwrap

import pytest

from gitfleet.api.errors import FleetError
from gitfleet.api.limits import Limits
from gitfleet.api.quantity import canonical_number
from gitfleet.load.model import FleetSnapshot, SourceDoc
from gitfleet.load.snapshot import build_snapshot
from gitfleet.load.yamlio import parse_documents

NS = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {}\n"
MC = "apiVersion: cluster.kubernetes-fleet.io/v1\nkind: MemberCluster\nmetadata:\n  name: {}\n"


def load(files: dict[str, str]) -> FleetSnapshot:
    docs: list[SourceDoc] = []
    errors: list[FleetError] = []
    for path, text in files.items():
        found, problems = parse_documents(path, textwrap.dedent(text), Limits())
        docs += found
        errors += problems
    return build_snapshot(docs, errors, lint=True)


def shown(errors: tuple[FleetError, ...]) -> list[str]:
    return [str(e) for e in errors]


LIST = """\
apiVersion: v1
kind: List
metadata:
  resourceVersion: ""
items:
- apiVersion: placement.kubernetes-fleet.io/v1
  kind: ClusterResourcePlacement
  metadata:
    name: good
    uid: 3f1c
    resourceVersion: "1234"
    generation: 3
    creationTimestamp: "2025-01-01T00:00:00Z"
    finalizers: [kubernetes-fleet.io/crp-cleanup]
    annotations:
      kubectl.kubernetes.io/last-applied-configuration: |
        {"apiVersion":"placement.kubernetes-fleet.io/v1"}
    managedFields:
    - manager: kubectl
      operation: Update
  spec:
    resourceSelectors:
    - {group: "", version: v1, kind: Namespace, name: web}
  status:
    observedResourceIndex: "0"
    conditions:
    - {type: ClusterResourcePlacementScheduled, status: "True", reason: Scheduled}
- apiVersion: placement.kubernetes-fleet.io/v1
  kind: ClusterResourcePlacement
  metadata:
    name: bad
  spec:
    resourceSelectors:
    - {group: "", version: v1, kind: Namespace, name: web}
    policy:
      placementType: PickSome
- 42
"""


def test_list_items_load_one_by_one_and_errors_name_the_item() -> None:
    snap = load({"placements/crps.yaml": LIST, "resources/ns.yaml": NS.format("web")})
    assert sorted(snap.placements) == ["good"]
    assert shown(snap.errors) == [
        "placements/crps.yaml:36: items[1].spec.policy.placementType: "
        "must be one of: PickAll, PickN, PickFixed",
        "placements/crps.yaml:37: items[2]: must be a mapping",
    ]
    assert snap.origins[("ClusterResourcePlacement", "", "good")].line == 6


def test_typed_list_and_list_of_payload_under_resources() -> None:
    typed = (
        "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacementList\n"
        "items: []\n"
    )
    payload = "apiVersion: v1\nkind: List\nitems:\n- " + NS.format("a").replace("\n", "\n  ")
    snap = load({"placements/empty.yaml": typed, "resources/all.yaml": payload})
    assert snap.errors == ()
    assert [r.name for r in snap.resources] == ["a"]


def test_mixed_file_loads_manifests_as_resources_with_one_note() -> None:
    mixed = (
        NS.format("web")
        + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: web}\n---\n"
        + MC.format("eu-1")
    )
    snap = load({"examples/all.yaml": mixed})
    assert snap.errors == ()
    assert sorted((r.kind, r.name) for r in snap.resources) == [
        ("ConfigMap", "c"),
        ("Namespace", "web"),
    ]
    assert shown(snap.notes) == [
        "examples/all.yaml:1: 2 ordinary manifest(s) in this file are loaded as resources to "
        "place, as if they were under resources/ (the file also holds fleet objects)"
    ]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (32, "32"),
        (1000, "1k"),
        (1500, "1500"),
        (0.5, "500m"),
        (1.25, "1250m"),
        (2.5e9, "2500M"),
        (0, "0"),
        (1e-12, "1n"),
        (-2000, "-2k"),
    ],
)
def test_numbers_become_canonical_quantities(value: float, text: str) -> None:
    assert canonical_number(value) == text


def test_member_cluster_numeric_quantities() -> None:
    cluster = MC.format("eu-1") + textwrap.dedent("""\
        status:
          properties:
            kubernetes-fleet.io/node-count: {value: 3, observationTime: "2025-01-01T00:00:00Z"}
          resourceUsage:
            capacity: {cpu: 32, memory: 64Gi}
            available: {cpu: 0.5}
        """)
    snap = load({"clusters/eu-1.yaml": cluster})
    assert snap.errors == ()
    status = snap.clusters["eu-1"].status
    assert status is not None and status.resource_usage is not None
    assert status.resource_usage.capacity == {"cpu": "32", "memory": "64Gi"}
    assert status.resource_usage.available == {"cpu": "500m"}
    assert status.properties is not None
    assert status.properties["kubernetes-fleet.io/node-count"].value == "3"


WARN_FLEET = {
    "clusters/eu-1.yaml": MC.format("eu-1") + "spec:\n  heartbeatPeriodSeconds: 30\n",
    "resources/web.yaml": NS.format("web")
    + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: orphan}\n",
    "placements/p.yaml": """\
        apiVersion: placement.kubernetes-fleet.io/v1beta1
        kind: ClusterResourcePlacement
        metadata:
          name: p
        spec:
          resourceSelectors:
          - {group: "", version: v1, kind: Namespace, name: web}
          - {group: "", version: v1, kind: Namespace, name: missing}
          - group: rbac.authorization.k8s.io
            version: v1
            kind: ClusterRole
            labelSelector: {matchLabels: {team: a}}
          policy:
            placementType: PickFixed
            clusterNames: [eu-1, eu-9]
          strategy:
            deleteStrategy: {propagationPolicy: Abandon}
            resourceSnapshotIndex: "2"
        """,
}


def test_warnings_name_file_line_and_field() -> None:
    snap = load(WARN_FLEET)
    assert snap.errors == ()
    assert shown(snap.warnings) == [
        "clusters/eu-1.yaml:6: spec.heartbeatPeriodSeconds: is not used: an agent's heartbeat "
        "period is its --heartbeat option (default 60s) and the hub judges heartbeats by the "
        "Fleet's spec.heartbeatTimeout",
        "placements/p.yaml:8: spec.resourceSelectors[1]: selects nothing: resources/ holds no "
        'Namespace "missing"',
        "placements/p.yaml:9: spec.resourceSelectors[2]: selects nothing: resources/ holds no "
        "rbac.authorization.k8s.io/ClusterRole matching the label selector",
        'placements/p.yaml:15: spec.policy.clusterNames[1]: cluster "eu-9" is not a member of '
        "the fleet (no MemberCluster or ClusterProfile declares it): nothing is placed there",
        "placements/p.yaml:17: spec.strategy.deleteStrategy.propagationPolicy: Abandon is not "
        "implemented: removing a placement always deletes its resources from the member clusters",
        "placements/p.yaml:18: spec.strategy.resourceSnapshotIndex: this field is not "
        "implemented: the placement rolls out its latest resource snapshot; to roll back, "
        "annotate the placement with gitfleet.io/resource-snapshot-index (RollingUpdate) or set "
        "a staged update run's spec.resourceSnapshotIndex (External)",
        'resources/web.yaml:8: metadata.namespace: namespace "orphan" is not declared by any '
        "Namespace in resources/ (1 object(s) use it): a placement selecting the namespace finds "
        "nothing, and member clusters need it to exist already",
    ]


def test_defaults_written_out_do_not_warn() -> None:
    snap = load(
        {
            "clusters/eu-1.yaml": MC.format("eu-1") + "spec:\n  heartbeatPeriodSeconds: 60\n",
            "resources/web.yaml": NS.format("web"),
        }
    )
    assert snap.warnings == ()


def test_a_directory_without_a_fleet_warns() -> None:
    snap = load({})
    assert shown(snap.warnings) == [
        "<fleet>: no fleet here: no Fleet, MemberCluster, placement or resource was found "
        "(is this the root of a fleet repository?)"
    ]
