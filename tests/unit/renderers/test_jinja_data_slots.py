"""Template values from data are inserted as YAML scalars, never as YAML text: whatever the
value holds (flow syntax, a comment sign, a colon, an alias, a boolean word), it stays the one
value it was, in block and flow context, alone or inside a longer string."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gitfleet.api.limits import Limits
from renderers.base import RenderContext, TemplateContext, Unit
from renderers.jinja import JinjaRenderer
from tests.unit.renderers.render_helpers import make_tree, messages

FAST = Limits(template_timeout_seconds=5.0, template_max_output_bytes=64 * 1024)
NASTY = [
    "web, labels: {x: 1}",
    "web # not a comment",
    "a: b",
    "*alias",
    "[1, 2]",
    "true",
    "09",
    "'quoted'",
    '"double"',
    "}{",
    "",
]
TEMPLATE = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  labels: {team: {{ values.v }}, fixed: x}
data:
  block: {{ values.v }}
  prefixed: app-{{ values.v }}
  quoted: "{{ values.v }}"
  flow: [{{ values.v }}, second]
  replicas: {{ values.n }}
  dict: {{ values.d }}
  cluster: {{ clusters[0].name }}
"""


def render_one(tmp_path: Path, values: dict[str, Any]) -> tuple[list[dict[str, Any]], list[Any]]:
    tree = make_tree(tmp_path, {"t.yaml.j2": TEMPLATE})
    clusters = ({"name": "c1", "labels": {}, "taints": [], "properties": {}},)
    ctx = RenderContext(tree, FAST, TemplateContext(values, clusters, {"kind": "Fleet"}))
    docs, errors = JinjaRenderer().render([Unit("jinja", "t.yaml.j2", ("t.yaml.j2",))], ctx)
    return [d.body for d in docs], errors


@pytest.mark.parametrize("value", NASTY, ids=range(len(NASTY)))
def test_a_value_stays_one_string_wherever_it_lands(tmp_path: Path, value: str) -> None:
    docs, errors = render_one(tmp_path, {"v": value, "n": 3, "d": {"k": value}})
    assert errors == [], messages(errors)
    (body,) = docs
    assert body["metadata"]["labels"] == {"team": value, "fixed": "x"}
    assert body["data"]["block"] == value
    assert body["data"]["prefixed"] == f"app-{value}"
    assert body["data"]["quoted"] == value
    assert body["data"]["flow"] == [value, "second"]
    assert body["data"]["replicas"] == 3  # a number from data stays a number
    assert body["data"]["dict"] == {"k": value}
    assert body["data"]["cluster"] == "c1"
