"""The published JSON Schemas (`schemas/`) are generated from the models and up to date, and
they accept every fleet object in the repository's examples, template and golden inputs that
gitfleet itself accepts (the examples, template and plan inputs must all be accepted)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gitfleet.api.registry import KINDS, parse_object
from gitfleet.api.schema import kind_schemas, schema_text

jsonschema = pytest.importorskip(
    "jsonschema", reason="the dev extra (make install) adds jsonschema"
)

ROOT = Path(__file__).resolve().parents[3]
PUBLISHED = [ROOT / "schemas", ROOT / "fleet-repo-template/.schemas"]
MUST_PASS = [ROOT / "examples", ROOT / "fleet-repo-template", ROOT / "tests/golden_plan"]
MAY_HOLD_BAD_INPUT = [ROOT / "tests/golden"]


def test_committed_schemas_are_up_to_date() -> None:
    """Regenerate with `gitfleet schema --out schemas` and `--out fleet-repo-template/.schemas`
    after changing a model."""
    expected = {f"{kind}.json": schema_text(s) for kind, s in kind_schemas().items()}
    for directory in PUBLISHED:
        found = {p.name: p.read_text(encoding="utf-8") for p in directory.glob("*.json")}
        assert sorted(found) == sorted(expected), directory
        stale = [name for name in expected if found[name] != expected[name]]
        assert not stale, f"run `gitfleet schema --out {directory.relative_to(ROOT)}`: {stale}"


def test_every_kind_has_a_valid_schema() -> None:
    schemas = kind_schemas()
    assert set(schemas) == {k for _, k in KINDS} == {cls.__name__ for cls in KINDS.values()}
    for schema in schemas.values():
        jsonschema.Draft202012Validator.check_schema(schema)


def fleet_documents(roots: list[Path]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for root in roots:
        for path in sorted(root.rglob("*.yaml")):
            if "expected" in path.parts:
                continue
            try:
                docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
            except (yaml.YAMLError, UnicodeDecodeError):
                continue  # deliberately broken input: the loader reports it
            for i, doc in enumerate(docs):
                if isinstance(doc, dict) and (doc.get("apiVersion"), doc.get("kind")) in KINDS:
                    out.append((f"{path.relative_to(ROOT)}#{i}", doc))
    return out


def schema_errors(doc: dict[str, Any]) -> list[str]:
    cls = KINDS[(doc["apiVersion"], doc["kind"])]
    validator = jsonschema.Draft202012Validator(kind_schemas()[cls.__name__])
    return [
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)
    ]


@pytest.mark.parametrize(
    ("where", "doc"), fleet_documents(MUST_PASS), ids=lambda v: v if isinstance(v, str) else ""
)
def test_examples_template_and_plan_inputs_validate(where: str, doc: dict[str, Any]) -> None:
    _, issues = parse_object(doc)
    assert not issues, issues
    assert schema_errors(doc) == []


def test_golden_inputs_gitfleet_accepts_validate() -> None:
    checked, failures = 0, []
    for where, doc in fleet_documents(MAY_HOLD_BAD_INPUT):
        _, issues = parse_object(doc)
        if issues:
            continue  # bad input on purpose; gitfleet reports it
        checked += 1
        failures += [f"{where}: {e}" for e in schema_errors(doc)]
    assert checked > 50
    assert not failures, failures
