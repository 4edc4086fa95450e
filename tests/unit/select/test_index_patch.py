"""The patched resource index (`reconciler.select.indexpatch`): a pass whose resources differ
from the last one's in a few objects gets exactly the index a full build makes of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gitfleet.load.model import Resource
from reconciler.select import ResourceIndex, build_index
from reconciler.select.indexpatch import MAX_CHANGED
from reconciler.stagememo import forget_stages
from tests.unit.select.select_helpers import obj, res

CRD = obj(
    "apiextensions.k8s.io/v1",
    "CustomResourceDefinition",
    "widgets.example.com",
    spec={"group": "example.com", "scope": "Namespaced", "names": {"kind": "Widget"}},
)


def base() -> list[Resource]:
    manifests = [
        CRD,
        obj("v1", "Namespace", "app"),
        obj("v1", "ConfigMap", "c1", "app", labels={"tier": "a"}),
        obj("v1", "ConfigMap", "c2", "app", labels={"tier": "a"}),
        obj("v1", "Service", "s", "app"),
        obj("v1", "ServiceAccount", "s", "app"),
        obj("example.com/v1", "Widget", "w", "app"),
        obj("v1", "Secret", "x", "other", labels={"tier": "b"}),
    ]
    return [res(m, doc=i) for i, m in enumerate(manifests)]


def at(name: str, kind: str, change: Callable[[dict[str, Any]], None]) -> Edit:
    def edit(resources: list[Resource]) -> None:
        for i, r in enumerate(resources):
            if (r.kind, r.name) == (kind, name):
                manifest = {**r.obj, "metadata": dict(r.obj["metadata"])}
                change(manifest)
                resources[i] = res(manifest, doc=r.origin.doc)
                return
        raise AssertionError(name)

    return edit


Edit = Callable[[list[Resource]], None]


def shape(index: ResourceIndex) -> Any:
    """Everything selection reads of an index, by value."""

    def entry(e: Any) -> Any:
        sel = e.selected.raw if e.selected is not None else None
        issues = [(i.field, i.message) for i in e.issues]
        return (
            e.resource,
            sel,
            e.labels,
            e.cluster_scoped,
            e.namespace,
            e.disabled,
            e.skipped,
            issues,
        )

    return (
        index.scopes.content,
        [entry(e) for e in index.entries],
        [(i.field, i.message) for i in index.issues],
        {k: entry(e) for k, e in index.by_key.items()},
        {k: [entry(e) for e in v] for k, v in index.by_kind.items()},
        {k: [entry(e) for e in v] for k, v in index.by_namespace.items()},
    )


def relabel(m: dict[str, Any]) -> None:
    m["metadata"]["labels"] = {"tier": "z"}


def rescope(m: dict[str, Any]) -> None:
    m["spec"] = {**m["spec"], "scope": "Cluster"}


def unnamespace(m: dict[str, Any]) -> None:
    del m["metadata"]["namespace"]


def move(m: dict[str, Any]) -> None:
    m["metadata"]["namespace"] = "other"


def bad_label(m: dict[str, Any]) -> None:
    m["metadata"]["labels"] = {"tier": 3}


def rename_service(m: dict[str, Any]) -> None:
    m["metadata"]["name"] = "t"


def retype(m: dict[str, Any]) -> None:
    m["data"] = {"k": "v"}


EDITS: list[tuple[str, list[Edit]]] = [
    ("labels of one object", [at("c1", "ConfigMap", relabel)]),
    ("labels of two objects", [at("c1", "ConfigMap", relabel), at("x", "Secret", relabel)]),
    ("data only", [at("c2", "ConfigMap", retype)]),
    ("a CRD's scope", [at("widgets.example.com", "CustomResourceDefinition", rescope)]),
    ("an object loses its namespace", [at("w", "Widget", unnamespace)]),
    ("an object moves to another namespace", [at("c1", "ConfigMap", move)]),
    ("a label breaks a rule", [at("c2", "ConfigMap", bad_label)]),
    ("a Service renamed", [at("s", "Service", rename_service)]),
    ("an object added", [lambda rs: rs.append(res(obj("v1", "ConfigMap", "c3", "app")))]),
    ("an object removed", [lambda rs: rs.__delitem__(2)]),
    ("a duplicate added", [lambda rs: rs.append(res(obj("v1", "ConfigMap", "c1", "app")))]),
]


@pytest.mark.parametrize("edits", [e for _, e in EDITS], ids=[n for n, _ in EDITS])
def test_patched_index_is_the_full_build(edits: list[Edit]) -> None:
    forget_stages()
    resources = base()
    first = build_index(resources)
    for edit in edits:
        edit(resources)
    patched = build_index(resources)
    forget_stages()
    full = build_index(list(resources))
    assert patched is not first
    assert shape(patched) == shape(full)
    # and back again: the next pass patches from the patched index
    again = build_index(base())
    forget_stages()
    assert shape(again) == shape(build_index(base()))


def test_an_edit_after_a_broken_index_is_a_full_build() -> None:
    forget_stages()
    resources = base()
    at("c2", "ConfigMap", bad_label)(resources)
    build_index(resources)
    at("c2", "ConfigMap", relabel)(resources)  # fixes it: the issue must go
    patched = build_index(resources)
    forget_stages()
    assert shape(patched) == shape(build_index(resources)) and not patched.issues


def test_same_objects_give_the_same_index() -> None:
    forget_stages()
    resources = base()
    first = build_index(resources)
    assert build_index(tuple(resources)) is first
    remade = [res(r.obj, doc=r.origin.doc) for r in resources]  # new Resources, equal values
    assert build_index(remade) is first
    local = list(resources)
    local[2] = res(local[2].obj, doc=2)  # one of them: the patch reuses its entry
    assert build_index(local) is first


def test_only_the_changed_entries_are_new() -> None:
    forget_stages()
    resources = base()
    first = build_index(resources)
    at("c1", "ConfigMap", relabel)(resources)
    patched = build_index(resources)
    changed = [
        i for i, (a, b) in enumerate(zip(first.entries, patched.entries, strict=True)) if a is not b
    ]
    assert changed == [2] and patched.entries[2].labels == {"tier": "z"}
    assert patched.get("", "ConfigMap", "app", "c1") is patched.entries[2]


def test_other_arguments_are_a_full_build() -> None:
    forget_stages()
    resources = base()
    build_index(resources)
    at("w", "Widget", relabel)(resources)
    skipped = build_index(resources, skipped_namespaces=["app"])
    assert skipped.skipped_namespaces == frozenset({"app"})


def test_many_changes_are_a_full_build() -> None:
    forget_stages()
    many = [res(obj("v1", "ConfigMap", f"c{i}", "app"), doc=i) for i in range(MAX_CHANGED + 1)]
    build_index(many)
    edited = [res({**r.obj, "data": {"a": "b"}}, doc=r.origin.doc) for r in many]
    out = build_index(edited)
    forget_stages()
    assert shape(out) == shape(build_index(edited))


def test_patches_give_way_to_a_full_build_once_they_made_an_entry_per_object(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Entries patches make stay in the entry memo until a full build starts a round."""
    import reconciler.select.index as index_module

    forget_stages()
    resources = base()
    build_index(resources)
    rounds: list[int] = []
    real = index_module._entries.next_round

    def counted() -> None:
        rounds.append(1)
        real()

    monkeypatch.setattr(index_module._entries, "next_round", counted)
    for k in range(len(resources) + 1):

        def data(m: dict[str, Any], k: int = k) -> None:
            m["data"] = {"k": str(k)}

        at("c1", "ConfigMap", data)(resources)
        build_index(resources)
    assert len(rounds) == 1
