"""The template context is remembered with the inventory documents and Fleet it was built
from: the same documents give the very same context, and a changed cluster document (even an
equal one in a new object, or a new cluster) or changed Fleet values give a new, right one."""

from __future__ import annotations

from typing import Any

from gitfleet.api import Fleet
from gitfleet.load.model import SourceDoc
from renderers import build_template_context


def _cluster(name: str, env: str) -> SourceDoc:
    body: dict[str, Any] = {
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": {"env": env}},
        "spec": {},
    }
    return SourceDoc(f"clusters/{name}.yaml", 0, 1, body)


def _fleet(values: dict[str, Any]) -> Fleet:
    return Fleet.model_validate(
        {
            "apiVersion": "gitfleet.io/v1alpha1",
            "kind": "Fleet",
            "metadata": {"name": "fleet"},
            "spec": {"values": values},
        }
    )


def _labels(ctx: Any) -> dict[str, str]:
    return {c["name"]: c["labels"]["env"] for c in ctx.clusters}


def test_the_same_inputs_give_the_same_context_and_changes_a_new_one() -> None:
    docs = [_cluster("a", "prod"), _cluster("b", "dev")]
    first = build_template_context(_fleet({"x": 1}), docs)
    assert _labels(first) == {"a": "prod", "b": "dev"} and first.values == {"x": 1}
    assert build_template_context(_fleet({"x": 1}), list(docs)) is first
    relabeled = build_template_context(_fleet({"x": 1}), [docs[0], _cluster("b", "prod")])
    assert _labels(relabeled) == {"a": "prod", "b": "prod"}
    grown = build_template_context(_fleet({"x": 1}), [*docs, _cluster("c", "qa")])
    assert _labels(grown) == {"a": "prod", "b": "dev", "c": "qa"}
    valued = build_template_context(_fleet({"x": 2}), [*docs, _cluster("c", "qa")])
    assert valued.values == {"x": 2} and _labels(valued) == _labels(grown)
