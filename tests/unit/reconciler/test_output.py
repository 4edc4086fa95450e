"""Output naming: file names come from validated names only; anything else becomes a hash."""

from __future__ import annotations

from typing import Any

import pytest

from gitfleet.api.canonical import content_hash
from reconciler.output import object_file_name, placement_key


def obj(api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


@pytest.mark.parametrize(
    ("o", "expected"),
    [
        (obj("v1", "Namespace", "web"), "namespace_web.yaml"),
        (obj("apps/v1", "Deployment", "frontend", "web"), "deployment.apps_web_frontend.yaml"),
        (
            obj("rbac.authorization.k8s.io/v1", "ClusterRole", "view.x"),
            "clusterrole.rbac.authorization.k8s.io_view.x.yaml",
        ),
    ],
)
def test_file_names(o: dict[str, Any], expected: str) -> None:
    assert object_file_name(o) == expected


@pytest.mark.parametrize(
    "o",
    [
        obj("v1", "ConfigMap", "../../etc/passwd", "web"),
        obj("v1", "ConfigMap", "system:aggregate", "web"),
        obj("v1", "ConfigMap", "a/b", "web"),
        obj("v1", "ConfigMap", "ok", "../x"),
        obj("../v1", "Config/Map", "ok"),
    ],
)
def test_unsafe_parts_become_hash_tokens(o: dict[str, Any]) -> None:
    name = object_file_name(o)
    assert "/" not in name and ".." not in name.replace(".yaml", "") and ":" not in name
    assert "h-" in name


def test_placement_keys() -> None:
    assert placement_key("web") == "web"
    assert placement_key("web", "team-a") == "team-a.web"
    assert placement_key("../evil").startswith("h-")


def test_content_hash_ignores_key_order() -> None:
    assert content_hash({"a": 1, "b": [1, 2]}) == content_hash({"b": [1, 2], "a": 1})
    assert content_hash({"a": 1}) != content_hash({"a": 2})


def test_a_hashed_stand_in_never_equals_a_real_name() -> None:
    """File names are collision-free by construction: a name that needs hashing can never get
    the file of an object whose (valid) name happens to spell the stand-in."""
    import hashlib

    odd = "system:aggregate-to-admin"
    spelled = "h-" + hashlib.sha256(odd.encode()).hexdigest()[:20]
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole"}
    first = object_file_name({**role, "metadata": {"name": odd}})
    second = object_file_name({**role, "metadata": {"name": spelled}})
    assert first != second
