"""Cross-object validation, content hashes and override snapshots (kubefleet.md §3.1, §3.5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconciler.override import (
    build_override_index,
    next_override_snapshots,
    snapshot_name,
)
from reconciler.override.patch import PointerError, describe_failure, parse_pointer
from reconciler.override.variables import VariableError, scan_variables, substitute
from reconciler.state import Snapshot
from tests.unit.override.override_helpers import (
    DEPLOY,
    NS_SELECTOR,
    app_fleet,
    cro,
    dump,
    load,
    ro,
    rule,
)

PATCH = [{"op": "add", "path": "/metadata/annotations", "value": {"o": "1"}}]


def errors_of(tmp_path: Path, *overrides: dict[str, Any]) -> tuple[list[str], list[str]]:
    fleet = app_fleet(tmp_path, *overrides)
    assert not fleet.errors, [str(e) for e in fleet.errors]
    index, errors = build_override_index(fleet)
    return [str(e) for e in errors], sorted(index.hashes())


@pytest.mark.parametrize(
    ("overrides", "errors", "kept"),
    [
        (
            [cro("b", [NS_SELECTOR], [rule(PATCH)]), cro("a", [NS_SELECTOR], [rule(PATCH)])],
            [
                "overrides/main.yaml:1: spec.clusterResourceSelectors[0]: invalid resource selector "
                "{Group: Version:v1 Kind:Namespace Name:app}: the resource has been selected by both "
                "b and a, which is not supported"
            ],
            ["ClusterResourceOverride/a"],
        ),
        (
            [ro("z", "app", [DEPLOY], [rule(PATCH)]), ro("x", "app", [DEPLOY], [rule(PATCH)])],
            [
                "overrides/main.yaml:1: spec.resourceSelectors[0]: invalid resource selector "
                "{Group:apps Version:v1 Kind:Deployment Name:web}: the resource has been selected by "
                "both z and x, which is not supported"
            ],
            ["ResourceOverride/app/x"],
        ),
        # A CRO on the namespace and an RO on an object inside it may coexist.
        (
            [cro("a", [NS_SELECTOR], [rule(PATCH)]), ro("x", "app", [DEPLOY], [rule(PATCH)])],
            [],
            ["ClusterResourceOverride/a", "ResourceOverride/app/x"],
        ),
        # ROs in different namespaces never conflict.
        (
            [ro("x", "app", [DEPLOY], [rule(PATCH)]), ro("x", "other", [DEPLOY], [rule(PATCH)])],
            [],
            ["ResourceOverride/app/x", "ResourceOverride/other/x"],
        ),
    ],
)
def test_one_override_per_resource(
    tmp_path: Path, overrides: list[dict[str, Any]], errors: list[str], kept: list[str]
) -> None:
    assert errors_of(tmp_path, *overrides) == (errors, kept)


@pytest.mark.parametrize("kind", ["cro", "ro"])
def test_at_most_100_overrides_of_each_kind(tmp_path: Path, kind: str) -> None:
    def make(i: int) -> dict[str, Any]:
        if kind == "cro":
            return cro(f"o{i:03d}", [{**NS_SELECTOR, "name": f"ns{i}"}], [rule(PATCH)])
        return ro(f"o{i:03d}", "app", [{**DEPLOY, "name": f"d{i}"}], [rule(PATCH)])

    # Declared in reverse order, in two files: which ones are kept depends on names only.
    files = {
        "overrides/a.yaml": dump(*[make(i) for i in range(101, 50, -1)]),
        "overrides/b.yaml": dump(*[make(i) for i in range(50, -1, -1)]),
    }
    fleet = load(tmp_path, files)
    index, errors = build_override_index(fleet)
    assert len(index.hashes()) == 100
    assert max(index.hashes()).endswith("o099")
    noun = "cluster resource overrides" if kind == "cro" else "resource overrides"
    assert [(e.file, e.field) for e in errors] == [("overrides/a.yaml", "metadata.name")] * 2
    assert all(e.message.startswith(f"at most 100 {noun} can be created") for e in errors)
    assert {e.doc for e in errors} == {0, 1}  # o101 and o100 are the first two documents


def test_hash_follows_spec_content(tmp_path: Path) -> None:
    def hashes(sub: str, value: Any, **meta: Any) -> dict[str, str]:
        body = ro(
            "x",
            "app",
            [DEPLOY],
            [rule([{"op": "add", "path": "/metadata/labels/a", "value": value}])],
        )
        body["metadata"].update(meta)
        fleet = load(tmp_path / sub, {"overrides/o.yaml": dump(body)})
        return build_override_index(fleet)[0].hashes()

    base = hashes("1", "v")
    assert base == hashes("2", "v")
    assert base == hashes("3", "v", labels={"team": "a"})  # metadata is not content
    assert base != hashes("4", "w")
    assert len(base["ResourceOverride/app/x"]) == 64


def snap(index: int, digest: str) -> Snapshot:
    return Snapshot(index=index, hash=digest)


@pytest.mark.parametrize(
    ("prior", "hashes", "limit", "want"),
    [
        ({}, {"K/a": "h1"}, 10, {"K/a": (snap(0, "h1"),)}),
        ({"K/a": (snap(0, "h1"),)}, {"K/a": "h1"}, 10, {"K/a": (snap(0, "h1"),)}),
        ({"K/a": (snap(0, "h1"),)}, {"K/a": "h2"}, 10, {"K/a": (snap(0, "h1"), snap(1, "h2"))}),
        (
            {"K/a": (snap(3, "h1"), snap(4, "h2"))},
            {"K/a": "h3"},
            2,
            {"K/a": (snap(4, "h2"), snap(5, "h3"))},
        ),
        ({"K/a": (snap(0, "h1"),)}, {"K/b": "h1"}, 10, {"K/b": (snap(0, "h1"),)}),  # a is gone
        # Going back to an older content is still a new snapshot (as KubeFleet).
        (
            {"K/a": (snap(0, "h1"), snap(1, "h2"))},
            {"K/a": "h1"},
            10,
            {"K/a": (snap(0, "h1"), snap(1, "h2"), snap(2, "h1"))},
        ),
    ],
)
def test_next_override_snapshots(prior: Any, hashes: Any, limit: int, want: Any) -> None:
    assert next_override_snapshots(prior, hashes, limit) == want


@pytest.mark.parametrize(
    ("key", "index", "want"),
    [
        ("ClusterResourceOverride/ns-labels", 0, "ns-labels-0"),
        ("ResourceOverride/app/web", 12, "web-12"),
    ],
)
def test_snapshot_name(key: str, index: int, want: str) -> None:
    assert snapshot_name(key, index) == want


def test_error_names_the_latest_snapshot(tmp_path: Path) -> None:
    from tests.unit.override.override_helpers import pick, selected, view

    fleet = app_fleet(
        tmp_path, ro("web", "app", [DEPLOY], [rule([{"op": "remove", "path": "/x"}])])
    )
    index, _ = build_override_index(fleet)
    snaps = next_override_snapshots({"ResourceOverride/app/web": (snap(6, "old"),)}, index.hashes())
    resources = selected(fleet, "app")
    po = index.with_snapshots(snaps).for_placement(fleet.placements["app"], resources)
    error = po.apply(pick(resources, "Deployment", "web"), view("c")).error
    assert error is not None and error.startswith(
        'ResourceOverrideSnapshot "web-7" failed to apply'
    )


@pytest.mark.parametrize(
    ("path", "want"),
    [
        ("/a/b", ["a", "b"]),
        ("/a~1b/c~0d", ["a/b", "c~d"]),
        ("/~01", ["~1"]),
        ("", []),
    ],
)
def test_parse_pointer(path: str, want: list[str]) -> None:
    assert parse_pointer(path) == want


@pytest.mark.parametrize("path", ["a/b", "/a~", "/a~2", "/~x"])
def test_parse_pointer_rejects(path: str) -> None:
    with pytest.raises(PointerError):
        parse_pointer(path)


@pytest.mark.parametrize(
    ("doc", "op", "path", "want"),
    [
        ({"a": "s3cret"}, "add", "/a/b", "/a is a string, not an object or array"),
        ({"a": None}, "replace", "/a/0", "/a is a null, not an object or array"),
        ({"a": [1]}, "add", "/a/x", "'x' is not a valid array index at /a"),
        ({"a": [1]}, "remove", "/a/1", "index 1 is out of range at /a (array length 1)"),
        ({"a/b": {}}, "remove", "/a~1b/c", "path /a~1b/c does not exist"),
    ],
)
def test_describe_failure_never_quotes_the_document(
    doc: Any, op: str, path: str, want: str
) -> None:
    assert describe_failure(doc, op, path) == want


@pytest.mark.parametrize(
    ("value", "name", "labels", "everything", "problem"),
    [
        ("plain", False, set(), False, None),
        ("${MEMBER-CLUSTER-NAME}", True, set(), False, None),
        (
            {"${MEMBER-CLUSTER-LABEL-KEY-a.io/b_c}": ["${MEMBER-CLUSTER-LABEL-KEY-x}"]},
            False,
            {"a.io/b_c", "x"},
            False,
            None,
        ),
        ("${MEMBER-CLUSTER-LABEL-KEY-${MEMBER-CLUSTER-NAME}}", True, set(), True, None),
        ("${MEMBER-CLUSTER-LABEL-KEY-x", False, set(), False, "missing the closing bracket"),
        (7, False, set(), False, None),
    ],
)
def test_scan_variables(
    value: Any, name: bool, labels: set[str], everything: bool, problem: str | None
) -> None:
    use = scan_variables(value)
    assert (use.name, set(use.labels), use.all_labels) == (name, labels, everything)
    assert (use.problem is None) if problem is None else (problem in (use.problem or ""))


def test_substitute_copies_and_replaces_keys() -> None:
    value = {"${MEMBER-CLUSTER-NAME}": {"l": ["${MEMBER-CLUSTER-LABEL-KEY-r}"]}}
    out = substitute(value, "c1", {"r": "eu"})
    assert out == {"c1": {"l": ["eu"]}}
    assert value == {"${MEMBER-CLUSTER-NAME}": {"l": ["${MEMBER-CLUSTER-LABEL-KEY-r}"]}}
    with pytest.raises(VariableError, match="label key q not found on cluster c1"):
        substitute("${MEMBER-CLUSTER-LABEL-KEY-q}", "c1", {})
