"""Which renderer owns each repository file, and the renderers by name.

Rules, in order: (0) a Helm chart folder (with `Chart.yaml`, outside any kustomization directory)
is one unit owning every file under it, vendored subcharts included; (1) a kustomization directory (with `kustomization.yaml`, `kustomization.yml` or
`Kustomization`) is one unit owning every file under it; a kustomization another one references
as a local directory is a base and is not rendered alone. (2) `*.j2` files are Jinja2 templates,
except everything under the top-level `templates/` folder, which only `include`/`import`/`extends`
can reach. (3) `*.yaml` / `*.yml` are plain YAML. (4) Everything else is ignored. Called by
`load_fleet`; the CLI may show the plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gitfleet.api.limits import Limits
from gitfleet.repo.tree import Tree
from renderers import jinja, plain
from renderers.base import Renderer, Unit
from renderers.helm import HelmRenderer, find_charts
from renderers.helm_rules import chart_dir
from renderers.jinja import JinjaRenderer
from renderers.kustomize import KustomizeRenderer
from renderers.kustomize_rules import find_units, unit_dir
from renderers.plain import PlainRenderer


@dataclass(frozen=True)
class Plan:
    """Units per renderer, and the files no renderer reads."""

    units: tuple[Unit, ...]
    """Sorted by path."""
    ignored: tuple[str, ...]
    """Files no renderer reads (README.md, CODEOWNERS, ...). Files owned by a kustomize unit or
    a base, and partials under templates/, are not listed: they are read, just not alone."""

    def of(self, renderer: str) -> list[Unit]:
        """The units of one renderer, sorted by path."""
        return [u for u in self.units if u.renderer == renderer]


def plan_units(tree: Tree, limits: Limits) -> Plan:
    """Assign every file of the tree to at most one unit."""
    kustomize_units, owned = find_units(tree, limits)
    kustomize_dirs = [unit_dir(u) for u in kustomize_units]
    charts = [
        u for u in find_charts(tree.files()) if not any(_under(u.path, d) for d in kustomize_dirs)
    ]
    chart_dirs = [chart_dir(u) for u in charts]
    kustomize_units = [u for u in kustomize_units if not any(_under(u.path, d) for d in chart_dirs)]
    owned = frozenset(owned | {f for u in charts for f in u.files})
    units = [*kustomize_units, *charts]
    ignored: list[str] = []
    for path in tree.files():
        if path in owned or jinja.is_partial(path):
            continue
        if jinja.claims(path):
            units.append(Unit("jinja", path, (path,)))
        elif plain.claims(path):
            units.append(Unit("plain", path, (path,)))
        else:
            ignored.append(path)
    return Plan(tuple(sorted(units, key=lambda u: u.path)), tuple(ignored))


def _under(path: str, directory: str) -> bool:
    return directory == "" or path.startswith(directory + "/")


def default_renderers() -> Mapping[str, Renderer]:
    """The renderers by name, in the order `load_fleet` runs them."""
    return {
        "plain": PlainRenderer(),
        "kustomize": KustomizeRenderer(),
        "jinja": JinjaRenderer(),
        "helm": HelmRenderer(),
    }
