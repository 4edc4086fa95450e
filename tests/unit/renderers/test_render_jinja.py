"""Jinja2 renderer: generation from the inventory, sandboxing, limits and data-not-text rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gitfleet.api.limits import Limits
from gitfleet.load.yamlio import parse_documents
from renderers.base import RenderContext, TemplateContext, Unit
from renderers.jinja import JinjaRenderer, build_environment, to_yaml
from tests.unit.renderers.render_helpers import make_tree, messages, one_error

CLUSTERS = (
    {"name": "east-1", "labels": {"region": "east", "env": "prod"}, "taints": [], "properties": {}},
    {"name": "east-2", "labels": {"region": "east", "env": "dev"}, "taints": [], "properties": {}},
    {"name": "west-1", "labels": {"region": "west", "env": "prod"}, "taints": [], "properties": {}},
)
VALUES = {"team": "web", "multiline": "a\nb", "settings": {"replicas": 3, "flags": ["x", "y: z"]}}
FAST = Limits(template_timeout_seconds=1.0, template_max_output_bytes=64 * 1024)

PLACEMENT_PER_REGION = """\
{% for region in clusters | map(attribute='labels.region') | unique | sort %}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: {{ values.team }}-{{ region }}
spec:
  policy:
    placementType: PickAll
    affinity:
      clusterAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          clusterSelectorTerms:
            - labelSelector:
                matchLabels:
                  region: {{ region }}
{% endfor %}
"""

CONFIGMAP_PER_CLUSTER = """\
{% from 'macros.j2' import labels %}
{% for c in clusters %}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings-{{ c.name }}
  labels: {{ labels(c) }}
data:
  settings: {{ values.settings | tojson | tojson }}
  config: |
    {{ values.settings | toyaml | indent(4) }}
{% endfor %}
"""

MACROS = "{% macro labels(c) %}{{ c.labels | tojson }}{% endmacro %}"
GOOD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: still-good\n"


def render(
    tmp_path: Path, files: dict[str, str], limits: Limits = FAST
) -> tuple[dict[str, list[dict[str, Any]]], list[Any]]:
    tree = make_tree(tmp_path, {"templates/macros.j2": MACROS, "good.j2": GOOD, **files})
    units = [Unit("jinja", p, (p,)) for p in sorted(files) if not p.startswith("templates/")]
    units.append(Unit("jinja", "good.j2", ("good.j2",)))
    ctx = RenderContext(tree, limits, TemplateContext(VALUES, CLUSTERS, {"kind": "Fleet"}))
    docs, errors = JinjaRenderer().render(units, ctx)
    by_file: dict[str, list[dict[str, Any]]] = {}
    for doc in docs:
        assert doc.renderer == "jinja"
        by_file.setdefault(doc.file, []).append(doc.body)
    assert [b["metadata"]["name"] for b in by_file["good.j2"]] == ["still-good"], messages(errors)
    return by_file, errors


def test_one_placement_per_label_value(tmp_path: Path) -> None:
    docs, errors = render(tmp_path, {"placements/regions.yaml.j2": PLACEMENT_PER_REGION})
    assert errors == []
    bodies = docs["placements/regions.yaml.j2"]
    assert [b["metadata"]["name"] for b in bodies] == ["web-east", "web-west"]
    terms = bodies[1]["spec"]["policy"]["affinity"]["clusterAffinity"]
    selector = terms["requiredDuringSchedulingIgnoredDuringExecution"]["clusterSelectorTerms"][0]
    assert selector["labelSelector"]["matchLabels"] == {"region": "west"}


def test_one_configmap_per_cluster_with_structured_data(tmp_path: Path) -> None:
    docs, errors = render(tmp_path, {"resources/settings.yaml.j2": CONFIGMAP_PER_CLUSTER})
    assert errors == []
    bodies = docs["resources/settings.yaml.j2"]
    assert [b["metadata"]["name"] for b in bodies] == [f"settings-{c['name']}" for c in CLUSTERS]
    assert bodies[0]["metadata"]["labels"] == {"env": "prod", "region": "east"}
    assert bodies[0]["data"]["settings"] == '{"flags": ["x", "y: z"], "replicas": 3}'
    assert bodies[0]["data"]["config"] == "flags:\n- x\n- 'y: z'\nreplicas: 3\n"


@pytest.mark.parametrize(
    ("source", "line", "expected"),
    [
        pytest.param("a: 1\nb: {{ values.nope }}\n", 2, "undefined value", id="strict-undefined"),
        pytest.param("a: {{ nothing }}\n", 1, "'nothing' is undefined", id="undefined-variable"),
        pytest.param(
            "a: 1\n{% include '../good.j2' %}\n",
            2,
            "only name files under templates/",
            id="include-up",
        ),
        pytest.param(
            "{% include '/etc/passwd' %}\n", 1, "only name files under templates/", id="include-abs"
        ),
        pytest.param(
            "{% import 'missing.j2' as m %}\n",
            1,
            "templates/missing.j2 not found",
            id="import-missing",
        ),
        pytest.param(
            "a: {{ ''.__class__.__mro__ }}\n", 1, "attribute '__class__' of 'str'", id="mro-escape"
        ),
        pytest.param(
            "a: {{ cycler.__init__.__globals__ }}\n", 1, "unsafe", id="cycler-globals-escape"
        ),
        pytest.param(
            "\n{{ self._TemplateReference__context }}\n", 2, "unsafe", id="template-reference"
        ),
        pytest.param("a: {{ os.system('id') }}\n", 1, "'os' is undefined", id="calling-os"),
        pytest.param("{% set x = [] %}{{ x.append(1) }}\n", 1, "sandbox", id="immutable-sandbox"),
        pytest.param(
            "name: x\nnote: {{ values.multiline }}\n", 2, "line break", id="newline-injection"
        ),
        pytest.param("a: {% if %}\n", 1, "template syntax error", id="syntax-error"),
        pytest.param(
            "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
            None,
            "recursion too deep",
            id="recursive-macro",
        ),
        pytest.param(
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
            None,
            "limits.templateTimeoutSeconds (1s)",
            id="silent-infinite-loop",
        ),
        pytest.param(
            "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}",
            None,
            "limits.templateMaxOutputBytes (65536 bytes)",
            id="output-cap",
        ),
        pytest.param("{{ 'x' * 10 ** 11 }}", None, "too much memory", id="memory-bomb"),
        pytest.param("- 1\n- 2\n", 1, "(line in the rendered output)", id="rendered-not-mapping"),
    ],
)
def test_template_errors_name_file_and_line(
    tmp_path: Path, source: str, line: int | None, expected: str
) -> None:
    _, errors = render(tmp_path, {"placements/bad.yaml.j2": source})
    error = one_error(errors, "placements/bad.yaml.j2")
    assert error.line == line, str(error)
    assert expected in error.message, str(error)
    assert "Traceback" not in error.message


@pytest.mark.parametrize(
    ("partial", "expected"),
    [
        ("x: 1\ny: {{ values.absent }}\n", "in templates/broken.j2:2: undefined value"),
        ("x: 1\ny: {% endfor %}\n", "in templates/broken.j2:2: template syntax error"),
    ],
)
def test_error_inside_partial_names_partial_and_include_line(
    tmp_path: Path, partial: str, expected: str
) -> None:
    files = {
        "templates/broken.j2": partial,
        "placements/p.yaml.j2": "a: 1\n{% include 'broken.j2' %}\n",
    }
    _, errors = render(tmp_path, files)
    error = one_error(errors, "placements/p.yaml.j2")
    assert error.line == 2
    assert error.message.startswith(expected), str(error)


def test_timeout_restarts_worker_for_next_template(tmp_path: Path) -> None:
    loop = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    files = {
        "a-loop.j2": loop,
        "b-ok.j2": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
    }
    docs, errors = render(tmp_path, files)
    assert [e.file for e in errors] == ["a-loop.j2"]
    assert [b["metadata"]["name"] for b in docs["b-ok.j2"]] == ["b"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"b": 1, "a": [1, "two"]}, "a:\n- 1\n- two\nb: 1"),
        ({}, "{}"),
        (["x"], "- x"),
        ({"text": "line 1\nline 2\n", "on": "yes"}, "'on': 'yes'\ntext: |\n  line 1\n  line 2"),
        ({"sep": "x\u2028y", "nel": "p\x85q"}, None),
    ],
)
def test_toyaml_inserts_data_that_round_trips(value: Any, expected: str | None) -> None:
    text = to_yaml(value)
    if expected is not None:
        assert text == expected
    env = build_environment({})
    rendered = env.from_string("k:\n  {{ v | toyaml | indent(2) }}\nj: {{ v | tojson }}\n")
    docs, errors = parse_documents("t.j2", rendered.render(v=value), Limits())
    assert errors == []
    assert docs[0].body == {"k": value, "j": value}
