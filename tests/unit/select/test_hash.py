"""Selection hash (kubefleet.md §7.4): canonical JSON of the stripped, ordered selection."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from tests.unit.select.select_helpers import Term, crp, index_of, ns_term, obj, select

PLACEMENT = crp("p", ns_term("app"), Term("rbac.authorization.k8s.io", "v1", "ClusterRole"))


def fleet() -> list[dict[str, Any]]:
    return [
        obj("v1", "Namespace", "app"),
        obj("v1", "ConfigMap", "a", "app", data={"k": "v", "ü": "ß"}),
        obj("apps/v1", "Deployment", "web", "app", spec={"replicas": 2}),
        obj("rbac.authorization.k8s.io/v1", "ClusterRole", "r", rules=[]),
    ]


def hash_of(manifests: list[dict[str, Any]]) -> str:
    selection = select(PLACEMENT, index_of(*manifests))
    assert selection.error is None
    return selection.hash


def test_hash_is_sha256_of_canonical_json() -> None:
    selection = select(PLACEMENT, index_of(*fleet()))
    body = {"selectedResources": [r.obj for r in selection.resources]}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert selection.hash == hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("order", [[3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1]])
def test_hash_independent_of_input_order(order: list[int]) -> None:
    base = fleet()
    assert hash_of([base[i] for i in order]) == hash_of(base)


def test_hash_independent_of_key_order() -> None:
    base = fleet()
    base[2] = {
        "spec": {"replicas": 2},
        "metadata": {"namespace": "app", "name": "web"},
        "kind": "Deployment",
        "apiVersion": "apps/v1",
    }
    assert hash_of(base) == hash_of(fleet())


def test_hash_ignores_stripped_fields() -> None:
    base = fleet()
    base[1]["metadata"]["resourceVersion"] = "99"
    base[1]["status"] = {"x": 1}
    assert hash_of(base) == hash_of(fleet())


@pytest.mark.parametrize(
    ("where", "change"),
    [
        ("configmap value", lambda f: f[1]["data"].update(k="w")),
        ("replicas", lambda f: f[2]["spec"].update(replicas=3)),
        ("label", lambda f: f[3]["metadata"].update(labels={"a": "b"})),
        ("new object", lambda f: f.append(obj("v1", "Secret", "s", "app"))),
    ],
)
def test_hash_changes_with_content(where: str, change: Any) -> None:
    changed = fleet()
    change(changed)
    assert hash_of(changed) != hash_of(fleet())
