"""JSON Schema (draft 2020-12) of every kind gitfleet reads, generated from the pydantic models.

`kind_schemas()` maps each kind to its schema (input mode, camelCase field names; one schema per
kind covering every apiVersion it is served under). The repository publishes them in `schemas/`
(`gitfleet schema --out schemas`; a test keeps them equal to the models) and `gitfleet init`
writes them into a new fleet repository's `.schemas/`, which the template's files reference with
`# yaml-language-server: $schema=...` for editor completion and checks. The schemas check the
shape of what people write (`status` is accepted as any object); the webhook rules
(`gitfleet validate`) still apply. Called by the CLI.
"""

from __future__ import annotations

import json
from typing import Any

from gitfleet.api.registry import KINDS

DIALECT = "https://json-schema.org/draft/2020-12/schema"
STATUS_NOTE = "Written by gitfleet or its agents; not checked by this schema."


def kind_schemas() -> dict[str, dict[str, Any]]:
    """kind -> its JSON Schema, sorted by kind."""
    classes = {cls.__name__: cls for cls in KINDS.values()}
    out: dict[str, dict[str, Any]] = {}
    for name, cls in sorted(classes.items()):
        schema = cls.model_json_schema(by_alias=True, mode="validation")
        if "status" in schema.get("properties", {}):
            # Status is written by gitfleet, agents or a KubeFleet export (whose quantities and
            # extra fields the loader normalises first): accepted as any object, not checked.
            schema["properties"]["status"] = {"type": "object", "description": STATUS_NOTE}
        versions = sorted(v for v, k in KINDS if KINDS[(v, k)] is cls)
        schema = {
            "$schema": DIALECT,
            "$id": f"{name}.json",
            "title": name,
            "description": f"{name} ({', '.join(versions)}), as gitfleet reads it.",
            **{k: v for k, v in schema.items() if k not in ("title", "description")},
        }
        out[name] = schema
    return out


def schema_text(schema: dict[str, Any]) -> str:
    """Canonical text of one schema file (sorted keys, 2-space indent, final newline)."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
