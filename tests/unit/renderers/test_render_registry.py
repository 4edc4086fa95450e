"""Registry ownership rules and the plain YAML renderer, on real temporary directories."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitfleet.api.limits import Limits
from renderers.base import RenderContext
from renderers.plain import PlainRenderer
from renderers.registry import plan_units
from tests.unit.renderers.render_helpers import make_tree, messages, one_error

KUSTOMIZATION = "resources:\n- cm.yaml\n"
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"


@pytest.mark.parametrize(
    ("files", "units", "ignored"),
    [
        pytest.param(
            {"clusters/a.yaml": CM, "placements/p.yml": CM, "README.md": "# hi", "CODEOWNERS": "*"},
            [("plain", "clusters/a.yaml"), ("plain", "placements/p.yml")],
            ["CODEOWNERS", "README.md"],
            id="plain-yaml-and-yml-others-ignored",
        ),
        pytest.param(
            {
                "resources/app/kustomization.yaml": KUSTOMIZATION,
                "resources/app/cm.yaml": CM,
                "resources/app/sub/extra.yaml": CM,
                "resources/app/notes.j2": "x: 1",
            },
            [("kustomize", "resources/app/kustomization.yaml")],
            [],
            id="kustomize-dir-swallows-its-files",
        ),
        pytest.param(
            {
                "resources/app/base/kustomization.yml": KUSTOMIZATION,
                "resources/app/base/cm.yaml": CM,
                "resources/app/overlays/a/Kustomization": "resources:\n- ../../base\n",
                "resources/app/overlays/b/kustomization.yaml": "bases:\n- ../../base/\n",
            },
            [
                ("kustomize", "resources/app/overlays/a/Kustomization"),
                ("kustomize", "resources/app/overlays/b/kustomization.yaml"),
            ],
            [],
            id="referenced-base-not-rendered-alone",
        ),
        pytest.param(
            {
                "templates/labels.j2": "a: 1",
                "templates/snippet.yaml": "a: 1",
                "placements/gen.yaml.j2": "{% include 'labels.j2' %}",
                "deep/templates/x.j2": "b: 2",
            },
            [("jinja", "deep/templates/x.j2"), ("jinja", "placements/gen.yaml.j2")],
            [],
            id="top-level-templates-are-partials",
        ),
        pytest.param(
            {
                "apps/outer/kustomization.yaml": KUSTOMIZATION,
                "apps/outer/cm.yaml": CM,
                "apps/outer/inner/kustomization.yaml": KUSTOMIZATION,
                "apps/outer/inner/cm.yaml": CM,
            },
            [("kustomize", "apps/outer/kustomization.yaml")],
            [],
            id="nested-kustomization-belongs-to-outer",
        ),
    ],
)
def test_plan_assigns_each_file_to_one_unit(
    tmp_path: Path,
    files: dict[str, str],
    units: list[tuple[str, str]],
    ignored: list[str],
) -> None:
    plan = plan_units(make_tree(tmp_path, files), Limits())
    assert [(u.renderer, u.path) for u in plan.units] == units
    assert list(plan.ignored) == ignored
    owned = [f for u in plan.units for f in u.files]
    assert len(owned) == len(set(owned))


def test_kustomize_unit_lists_every_file_under_it(tmp_path: Path) -> None:
    files = {"r/app/kustomization.yaml": KUSTOMIZATION, "r/app/cm.yaml": CM, "r/app/d/x.txt": "x"}
    (unit,) = plan_units(make_tree(tmp_path, files), Limits()).units
    assert unit.files == ("r/app/cm.yaml", "r/app/d/x.txt", "r/app/kustomization.yaml")


MULTI = "---\n" + CM + "---\n\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"


@pytest.mark.parametrize(
    ("content", "limits", "names", "error"),
    [
        pytest.param(MULTI, Limits(), ["a", "b"], None, id="multi-document-empty-skipped"),
        pytest.param(
            CM + "---\n- just\n- a list\n",
            Limits(),
            ["a"],
            "resources/bad.yaml:",
            id="non-mapping-document-fails-alone",
        ),
        pytest.param(
            b"a: \xff\n",
            Limits(),
            [],
            "byte",
            id="not-utf8-names-byte-offset",
        ),
        pytest.param(
            CM * 1,
            Limits(max_file_bytes=10),
            [],
            "limits.maxFileBytes",
            id="file-over-size-cap-not-read",
        ),
    ],
)
def test_plain_renderer(
    tmp_path: Path, content: str | bytes, limits: Limits, names: list[str], error: str | None
) -> None:
    tree = make_tree(tmp_path, {"resources/bad.yaml": content, "resources/good.yaml": CM})
    units = [u for u in plan_units(tree, limits).units if u.renderer == "plain"]
    docs, errors = PlainRenderer().render(units, RenderContext(tree, limits))
    got = [d.body["metadata"]["name"] for d in docs if d.file == "resources/bad.yaml"]
    assert got == names
    assert all(d.renderer == "plain" for d in docs)
    if limits.max_file_bytes >= len(CM):
        assert [d.file for d in docs if d.file == "resources/good.yaml"] == ["resources/good.yaml"]
    if error is None:
        assert errors == []
    else:
        found = one_error(errors, "resources/bad.yaml")
        assert error in str(found), messages(errors)
