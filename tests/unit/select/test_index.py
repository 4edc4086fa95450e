"""The per-pass index: scope decisions, per-resource issues and their error records."""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.select import build_index
from reconciler.select.scope import guess_plural
from tests.unit.select.select_helpers import Term, crp, index_of, names, obj, res, select


def crd(
    kind: str, scope: Any, group: Any = "example.com", plural: str | None = None
) -> dict[str, Any]:
    names_ = {"kind": kind, **({"plural": plural} if plural else {})}
    return obj(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        f"{plural or kind.lower() + 's'}.{group}",
        spec={"group": group, "scope": scope, "names": names_},
    )


SCOPE_ISSUES = [
    (
        "namespaced kind without namespace",
        [obj("v1", "ConfigMap", "c")],
        [
            (
                "metadata.namespace",
                "v1 ConfigMap c: ConfigMap is namespaced and needs metadata.namespace "
                "(otherwise it would land in whatever namespace the agent defaults to)",
            )
        ],
    ),
    (
        "unknown kind of a known group is namespaced",
        [obj("apps/v1", "Widget", "w")],
        [
            (
                "metadata.namespace",
                "apps/v1 Widget w: Widget is namespaced and needs metadata.namespace "
                "(otherwise it would land in whatever namespace the agent defaults to)",
            )
        ],
    ),
    (
        "custom kind without namespaces is cluster-scoped",
        [obj("example.com/v1", "Widget", "w")],
        [],
    ),
    (
        "custom kind with a namespace somewhere is namespaced",
        [obj("example.com/v1", "Widget", "w"), obj("example.com/v1", "Widget", "v", "app")],
        [
            (
                "metadata.namespace",
                "example.com/v1 Widget w: Widget is namespaced and needs metadata.namespace "
                "(otherwise it would land in whatever namespace the agent defaults to)",
            )
        ],
    ),
    (
        "well-known add-on kind is cluster-scoped",
        [obj("kueue.x-k8s.io/v1beta1", "ClusterQueue", "q")],
        [],
    ),
    (
        "a CRD in resources/ decides over the objects",
        [
            obj(
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                "widgets.example.com",
                spec={
                    "group": "example.com",
                    "names": {"kind": "Widget", "plural": "widgets"},
                    "scope": "Namespaced",
                },
            ),
            obj("example.com/v1", "Widget", "w"),
        ],
        [
            (
                "metadata.namespace",
                "example.com/v1 Widget w: Widget is namespaced and needs metadata.namespace "
                "(otherwise it would land in whatever namespace the agent defaults to)",
            )
        ],
    ),
    (
        "cluster-scoped kind with namespace",
        [obj("storage.k8s.io/v1", "StorageClass", "fast", "app")],
        [
            (
                "metadata.namespace",
                "storage.k8s.io/v1 StorageClass app/fast: StorageClass is cluster-scoped "
                "and must not set metadata.namespace",
            )
        ],
    ),
    (
        "namespace with namespace",
        [obj("v1", "Namespace", "a", "b")],
        [
            (
                "metadata.namespace",
                "v1 Namespace b/a: Namespace is cluster-scoped and must not set metadata.namespace",
            )
        ],
    ),
    (
        "CRD makes a kind cluster-scoped",
        [crd("Widget", "Cluster"), obj("example.com/v1", "Widget", "w")],
        [],
    ),
    (
        "CRD makes a kind namespaced",
        [crd("Widget", "Namespaced"), obj("example.com/v1", "Widget", "w")],
        [
            (
                "metadata.namespace",
                "example.com/v1 Widget w: Widget is namespaced and needs metadata.namespace "
                "(otherwise it would land in whatever namespace the agent defaults to)",
            )
        ],
    ),
    (
        "CRD with bad scope",
        [crd("Widget", "Global")],
        [("spec.scope", "must be Namespaced or Cluster")],
    ),
    (
        "CRD without group",
        [crd("Widget", "Cluster", group="")],
        [("spec.group", "must be a non-empty string")],
    ),
    (
        "conflicting CRDs",
        [crd("Widget", "Cluster"), crd("Widget", "Namespaced", plural="widgetz")],
        [("spec.scope", "Widget.example.com is declared by another CRD with scope Cluster")],
    ),
    (
        "label value not a string",
        [obj("v1", "Namespace", "a", labels={"n": 1})],
        [("metadata.labels.n", "label keys and values must be strings")],
    ),
    (
        "labels not a map",
        [{**obj("v1", "Namespace", "a"), "metadata": {"name": "a", "labels": ["x"]}}],
        [("metadata.labels", "must be a map of strings")],
    ),
    (
        "not JSON-encodable",
        [obj("v1", "Namespace", "a", spec={"x": float("nan")})],
        [("", "object cannot be encoded as JSON (ValueError)")],
    ),
    (
        "duplicate object",
        [obj("v1", "Namespace", "a"), obj("v1", "Namespace", "a")],
        [
            (
                "metadata.name",
                "duplicate object: v1 Namespace a is also declared at resources/all.yaml:1",
            )
        ],
    ),
]


@pytest.mark.parametrize(
    ("case", "manifests", "expected"), SCOPE_ISSUES, ids=[c[0] for c in SCOPE_ISSUES]
)
def test_index_issues(
    case: str, manifests: list[dict[str, Any]], expected: list[tuple[str, str]]
) -> None:
    index = index_of(*manifests)
    assert [(i.field, i.message) for i in index.issues] == expected


def test_issue_to_error_names_file_and_line() -> None:
    index = index_of(obj("v1", "Namespace", "a"), obj("v1", "ConfigMap", "c"))
    (issue,) = index.issues
    assert str(issue.to_error()).startswith(
        "resources/all.yaml:11: metadata.namespace: v1 ConfigMap c"
    )


def test_extra_cluster_scoped_kinds() -> None:
    issuer = obj("cert-manager.io/v1", "ClusterIssuer", "le")
    index = index_of(issuer, extra_cluster_scoped=[("cert-manager.io", "ClusterIssuer")])
    assert index.issues == ()
    selection = select(crp("p", Term("cert-manager.io", "v1", "ClusterIssuer")), index)
    assert names(selection) == ["ClusterIssuer//le"]


def test_objects_in_error_are_never_selected() -> None:
    index = index_of(obj("v1", "Namespace", "a", labels={"n": 1}))
    selection = select(
        crp("p", Term("", "v1", "Namespace", selection_scope="NamespaceOnly")), index
    )
    assert selection.resources == ()
    assert len(selection.invalid) == 1


def test_index_shared_entries_are_not_copied_per_selection() -> None:
    index = index_of(obj("v1", "Namespace", "a"))
    term = Term("", "v1", "Namespace", "a", selection_scope="NamespaceOnly")
    first, second = select(crp("p", term), index), select(crp("q", term), index)
    assert first.resources[0] is second.resources[0]


def test_build_index_empty() -> None:
    index = build_index([])
    assert index.entries == () and index.issues == ()


@pytest.mark.parametrize(
    ("kind", "plural"),
    [
        ("ClusterRole", "clusterroles"),
        ("Ingress", "ingresses"),
        ("NetworkPolicy", "networkpolicies"),
        ("Endpoints", "endpoints"),
        ("StorageClass", "storageclasses"),
    ],
)
def test_guess_plural(kind: str, plural: str) -> None:
    assert guess_plural(kind) == plural


def _issues(index: Any) -> list[tuple[str, str]]:
    return [(i.resource.name, i.field) for i in index.issues]


def test_an_entry_is_reused_only_while_everything_it_was_made_from_is_equal() -> None:
    """A long-running hub hands unchanged objects over again: their entries are reused, but a
    duplicate declared elsewhere, a CRD changing the scope or a Service appearing beside it
    changes the entry (the same objects, indexed again, give the entries a fresh index gives)."""
    cm = obj("v1", "ConfigMap", "c", "app")
    widget = obj("example.com/v1", "Widget", "w", "app")
    twin = res(dict(cm), file="resources/a.yaml")
    service = res(obj("v1", "Service", "c", "app"), doc=2)
    first = build_index([res(cm), res(widget, doc=1)])
    again = build_index([res(cm), res(widget, doc=1)])
    assert [e is f for e, f in zip(first.entries, again.entries, strict=True)] == [True, True]
    doubled = build_index([twin, res(cm), res(widget, doc=1)])  # now `cm` is declared twice
    assert _issues(doubled) == [("c", "metadata.name")] and doubled.entries[1].issues
    single = build_index([res(cm), res(widget, doc=1)])
    assert _issues(single) == [] and not single.entries[0].issues
    scoped = build_index([res(cm), res(widget, doc=1), res(crd("Widget", "Cluster"), doc=2)])
    assert _issues(scoped) == [("w", "metadata.namespace")]
    served = build_index([res(cm), res(widget, doc=1), service])
    plain = build_index([res(cm), res(widget, doc=1)])
    assert served.entries[0] is not plain.entries[0]
    assert build_index([res(cm), res(widget, doc=1)]).entries[0] is plain.entries[0]


def test_an_unchanged_pass_gets_the_last_index_again() -> None:
    """The very same entries (unchanged objects), skipped namespaces and scope table give
    the last index itself; anything else a new one."""
    cm = obj("v1", "ConfigMap", "a", "ns")
    crd = obj(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "widgets.example.com",
        spec={"group": "example.com", "names": {"kind": "Widget"}, "scope": "Cluster"},
    )
    first = index_of(cm)
    assert index_of(cm) is first
    assert index_of(cm, skipped_namespaces=["x"]) is not first
    other = index_of(cm, obj("v1", "ConfigMap", "b", "ns"))
    assert other is not first and len(other.entries) == 2
    again = index_of(cm)
    assert again is not other and again.entries[0] is first.entries[0]
    assert index_of(cm, crd).scopes.content != again.scopes.content
    empty = index_of()
    widgets = index_of(extra_cluster_scoped=[("example.com", "Widget")])
    assert widgets.scopes.content != empty.scopes.content
