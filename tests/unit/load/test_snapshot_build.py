"""build_snapshot: classification, validation, duplicates, inventory and error bookkeeping."""

from __future__ import annotations

import pytest

from gitfleet.api.errors import FleetError
from gitfleet.api.limits import Limits
from gitfleet.load.model import FleetSnapshot, SourceDoc
from gitfleet.load.snapshot import build_snapshot, classify, read_fleet_settings
from gitfleet.load.yamlio import parse_documents

MC = "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata:\n  name: {}\n"
CP = (
    "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ClusterProfile\nmetadata:\n"
    "  name: {}\n  namespace: inventory\nspec:\n  clusterManager:\n    name: ocm\n"
)
CRP = (
    "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacement\n"
    "metadata:\n  name: {}\nspec:\n  resourceSelectors:\n  - group: ''\n    version: v1\n"
    "    kind: Namespace\n    name: web\n"
)
CRP_V1 = CRP.replace("v1beta1", "v1")
NS = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {}\n"
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n  namespace: web\ndata:\n  k: v\n"
FLEET = "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: {}\nspec:\n  values:\n    a: 1\n"


def load(files: dict[str, str], limits: Limits | None = None) -> FleetSnapshot:
    docs: list[SourceDoc] = []
    errors: list[FleetError] = []
    for path, text in files.items():
        found, problems = parse_documents(path, text, limits or Limits())
        docs += found
        errors += problems
    return build_snapshot(docs, errors, commit="c0ffee")


# (id, files, expected errors as (file, line, doc, field, fragment), loaded names)
CASES = [
    (
        "missing-kind",
        {"placements/a.yaml": CRP.format("a") + "---\napiVersion: v1\nmetadata: {name: b}\n"},
        [("placements/a.yaml", 12, 1, "kind", "required field is missing")],
        {"placements": ["a"]},
    ),
    (
        "blank-apiversion",
        {"placements/a.yaml": "apiVersion: ''\nkind: X\n---\n" + CRP.format("a")},
        [("placements/a.yaml", 1, 0, "apiVersion", "must be a non-empty string")],
        {"placements": ["a"]},
    ),
    (
        "payload-beside-fleet-objects-outside-resources",
        {"placements/a.yaml": NS.format("web") + "---\n" + CRP.format("a")},
        [],
        {"placements": ["a"], "resources": ["web"]},
    ),
    (
        "payload-alone-outside-resources",
        {"placements/a.yaml": NS.format("web"), "placements/b.yaml": CRP.format("a")},
        [("placements/a.yaml", 2, 0, "kind", "v1/Namespace is not a fleet kind; Kubernetes")],
        {"placements": ["a"], "resources": []},
    ),
    (
        "fleet-object-under-resources",
        {"resources/web.yaml": CRP.format("a") + "---\n" + NS.format("web")},
        [("resources/web.yaml", 2, 0, "kind", "is a fleet object, not payload")],
        {"placements": [], "resources": ["web"]},
    ),
    (
        "envelope-is-payload",
        {
            "resources/env.yaml": "apiVersion: placement.kubernetes-fleet.io/v1beta1\n"
            "kind: ResourceEnvelope\nmetadata: {name: env, namespace: web}\ndata: {}\n"
        },
        [],
        {"resources": ["env"]},
    ),
    (
        "unknown-fleet-kind",
        {
            "placements/a.yaml": "apiVersion: placement.kubernetes-fleet.io/v1beta1\n"
            "kind: ClusterResourcePlacment\nmetadata: {name: x}\n---\n" + CRP.format("a")
        },
        [("placements/a.yaml", 2, 0, "kind", "unknown kind")],
        {"placements": ["a"]},
    ),
    (
        "invalid-field",
        {"placements/a.yaml": CRP.format("a") + "  bogus: 1\n---\n" + CRP.format("b")},
        [("placements/a.yaml", 11, 0, "spec.bogus", "")],
        {"placements": ["b"]},
    ),
    (
        "duplicate-across-versions",
        {"placements/a.yaml": CRP.format("a"), "placements/b.yaml": CRP_V1.format("a")},
        [("placements/b.yaml", 4, 0, "metadata.name", "already declared at placements/a.yaml:1")],
        {"placements": ["a"]},
    ),
    (
        "profile-clashes-with-member-cluster",
        {"clusters/a.yaml": MC.format("east"), "clusters/b.yaml": CP.format("east")},
        [("clusters/b.yaml", 4, 0, "metadata.name", "duplicate cluster east")],
        {"clusters": ["east"]},
    ),
    (
        "profiles-join-inventory",
        {"clusters/a.yaml": MC.format("east"), "clusters/b.yaml": CP.format("west")},
        [],
        {"clusters": ["east", "west"]},
    ),
    (
        "payload-missing-name",
        {"resources/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: web\n"},
        [("resources/a.yaml", 3, 0, "metadata.name", "required field is missing")],
        {"resources": []},
    ),
    (
        "payload-bad-names",
        {
            "resources/a.yaml": CM.format("a/b")
            + "---\n"
            + CM.format("ok").replace("namespace: web", "namespace: Web")
            + "---\n"
            + CM.format("system:controller")
        },
        [
            ("resources/a.yaml", 4, 0, "metadata.name", "must be a valid object name"),
            ("resources/a.yaml", 13, 1, "metadata.namespace", "RFC 1123 label"),
        ],
        {"resources": ["system:controller"]},
    ),
    (
        "payload-bad-apiversion",
        {"resources/a.yaml": "apiVersion: a/b/c\nkind: X\nmetadata: {name: x}\n"},
        [("resources/a.yaml", 1, 0, "apiVersion", "<group>/<version>")],
        {"resources": []},
    ),
    (
        "payload-duplicate",
        {"resources/a.yaml": CM.format("x"), "resources/b.yaml": CM.format("x")},
        [("resources/b.yaml", 4, 0, "metadata.name", "already declared at resources/a.yaml:1")],
        {"resources": ["x"]},
    ),
    (
        "two-fleets",
        {"fleet.yaml": FLEET.format("one"), "more/fleet.yaml": FLEET.format("two")},
        [("more/fleet.yaml", 2, 0, "kind", "another is declared at fleet.yaml:1")],
        {},
    ),
]


@pytest.mark.parametrize(
    ("files", "errors", "loaded"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_snapshot_table(
    files: dict[str, str],
    errors: list[tuple[str, int, int, str, str]],
    loaded: dict[str, list[str]],
) -> None:
    snap = load(files)
    got = [(e.file, e.line, e.doc, e.field) for e in snap.errors]
    assert got == [error[:4] for error in errors], snap.errors
    for error, expected in zip(snap.errors, errors, strict=True):
        assert expected[4] in error.message
    assert snap.error_files == {e[0] for e in errors}
    for slot, names in loaded.items():
        if slot == "resources":
            assert [r.name for r in snap.resources] == names
        else:
            assert sorted(getattr(snap, slot)) == names


def test_object_too_large_uses_fleet_limits() -> None:
    fleet = FLEET.format("f") + "  limits:\n    maxObjectBytes: 150\n"
    big = CM.format("big").replace("k: v", "k: " + "x" * 200)
    snap = load({"fleet.yaml": fleet, "resources/a.yaml": big + "---\n" + CM.format("small")})
    assert [r.name for r in snap.resources] == ["small"]
    assert [(e.file, e.doc) for e in snap.errors] == [("resources/a.yaml", 0)]
    assert "limits.maxObjectBytes (150)" in snap.errors[0].message


def test_resources_keep_document_and_identity() -> None:
    snap = load({"resources/b.yaml": CM.format("b"), "resources/a.yaml": NS.format("web")})
    first, second = snap.resources
    assert (first.origin.file, first.group, first.version, first.kind, first.name) == (
        "resources/a.yaml",
        "",
        "v1",
        "Namespace",
        "web",
    )
    assert (second.namespace, second.api_version) == ("web", "v1")
    assert second.obj == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "b", "namespace": "web"},
        "data": {"k": "v"},
    }


def test_origins_commit_and_input_errors() -> None:
    tree_error = FleetError("link.yaml", None, "", "symbolic links are not allowed")
    docs, _ = parse_documents("fleet.yaml", FLEET.format("main"), Limits())
    more, _ = parse_documents("placements/p.yaml", "x: 1\n---\n" + CRP.format("web"), Limits())
    snap = build_snapshot(docs + more, [tree_error], commit="abc")
    assert snap.commit == "abc"
    assert snap.origins[("ClusterResourcePlacement", "", "web")].line == 3
    assert ("Fleet", "", "main") in snap.origins
    assert snap.fleet.spec.values == {"a": 1}
    assert "link.yaml" in snap.error_files and "placements/p.yaml" in snap.error_files


def test_read_fleet_settings_defaults() -> None:
    fleet, errors = read_fleet_settings([])
    assert errors == [] and fleet.spec.output_branch == "gitfleet/rendered"


def test_classify() -> None:
    docs, _ = parse_documents("resources/a.yaml", NS.format("x"), Limits())
    assert classify(docs[0]) == "payload"
    docs, _ = parse_documents("placements/a.yaml", CRP.format("x"), Limits())
    assert classify(docs[0]) == "fleet"
