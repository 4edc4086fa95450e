"""Conformance: everything the project ships as an example loads unchanged.

- every fleet under `examples/` and the `fleet-repo-template/` validates with no error and no
  warning (`gitfleet validate --strict`);
- every ```yaml block in `docs/`, `README.md` and the examples' READMEs parses, and each
  document in it that is a fleet kind validates (`parse_object`); AgentReport is skipped (agents
  write it, users never do, and its documentation elides values with `...`).
Plus the `validate` contract for warnings: exit 0 with `warning:` lines, exit 1 with --strict.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gitfleet.api.limits import Limits
from gitfleet.api.registry import is_fleet_kind, parse_object
from gitfleet.load.yamlio import parse_documents
from tests.integration.fleet_helpers import NOW, ROOT, run_cli, write_files

FLEETS = sorted(
    [p for p in (ROOT / "examples").iterdir() if p.is_dir()] + [ROOT / "fleet-repo-template"]
)
MARKDOWN = sorted(
    [*(ROOT / "docs").rglob("*.md"), ROOT / "README.md", *(ROOT / "examples").rglob("*.md")]
)
_BLOCK = re.compile(r"^```ya?ml\n(.*?)^```", re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("fleet", FLEETS, ids=lambda p: p.name)
def test_shipped_fleets_validate_strictly(tmp_path: Path, fleet: Path) -> None:
    result = run_cli(tmp_path, "validate", fleet, "--strict", "--now", NOW)
    assert result.code == 0, result.output
    assert "warning:" not in result.output and "error:" not in result.output


def _blocks() -> list[tuple[str, int, str]]:
    out = []
    for path in MARKDOWN:
        text = path.read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            line = text[: match.start()].count("\n") + 2
            out.append((path.relative_to(ROOT).as_posix(), line, match.group(1)))
    return out


BLOCKS = _blocks()


@pytest.mark.parametrize(("file", "line", "block"), BLOCKS, ids=[f"{f}:{n}" for f, n, _ in BLOCKS])
def test_documented_yaml_loads(file: str, line: int, block: str) -> None:
    docs, errors = parse_documents(f"{file}:{line}", block, Limits())
    assert not errors, errors
    for doc in docs:
        api_version, kind = doc.body.get("apiVersion"), doc.body.get("kind")
        if (
            isinstance(api_version, str)
            and isinstance(kind, str)
            and is_fleet_kind(api_version, kind)
            and kind != "AgentReport"
        ):
            model, issues = parse_object(doc.body)
            assert model is not None, (file, line + doc.line - 1, issues)


def test_there_is_something_to_check() -> None:
    assert FLEETS and MARKDOWN


WARNED = {
    "clusters/a.yaml": "apiVersion: cluster.kubernetes-fleet.io/v1\nkind: MemberCluster\nmetadata:\n  name: a\n",
    "resources/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n",
    "placements/p.yaml": (
        "apiVersion: placement.kubernetes-fleet.io/v1\nkind: ClusterResourcePlacement\n"
        "metadata:\n  name: p\nspec:\n  resourceSelectors:\n"
        "  - {group: '', version: v1, kind: Namespace, name: web}\n"
        "  policy:\n    placementType: PickFixed\n    clusterNames: [a, b]\n"
    ),
}


def test_validate_warns_and_strict_fails(tmp_path: Path) -> None:
    fleet = tmp_path / "fleet"
    write_files(fleet, dict(WARNED))
    plain = run_cli(tmp_path, "validate", fleet, "--now", NOW)
    line = (
        'warning: placements/p.yaml:10: spec.policy.clusterNames[1]: cluster "b" is not a member '
        "of the fleet (no MemberCluster or ClusterProfile declares it): nothing is placed there"
    )
    assert plain.code == 0 and line in plain.stderr, plain.output
    strict = run_cli(tmp_path, "validate", fleet, "--strict", "--now", NOW)
    assert strict.code == 1 and line.replace("warning:", "error:", 1) in strict.stderr
    assert "errors found" in strict.stdout


def test_validate_json_lists_warnings_and_notes(tmp_path: Path) -> None:
    fleet = tmp_path / "fleet"
    files = dict(WARNED)
    files["placements/p.yaml"] += (
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: web}\n"
    )
    write_files(fleet, files)
    result = run_cli(tmp_path, "validate", fleet, "--output", "json", "--now", NOW)
    assert result.code == 0, result.output
    assert '"warnings": [' in result.stdout and "ordinary manifest(s)" in result.stdout


def test_an_empty_directory_warns(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_cli(tmp_path, "validate", empty, "--now", NOW)
    assert result.code == 0
    assert "warning: <fleet>: no fleet here" in result.stderr
