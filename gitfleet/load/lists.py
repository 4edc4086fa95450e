"""`kind: List` documents, as `kubectl get ... -o yaml` prints several objects: one document per item.

`expand_lists` replaces each List document (`v1/List`, or a typed `<Kind>List` with `items`) by
its items, each a `SourceDoc` of its own with `path = "items[<i>]"`, so every error about an item
names the item index and points at the item's line. Called first by
`gitfleet.load.snapshot.build_snapshot`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from gitfleet.api.errors import FleetError
from gitfleet.load.model import SourceDoc
from gitfleet.load.yamlio import locate


def is_list(body: dict[str, Any]) -> bool:
    """`v1/List`, or a `<Kind>List` of any group that carries `items` (kubectl's list shapes)."""
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return False
    if (api_version, kind) == ("v1", "List"):
        return True
    return kind.endswith("List") and len(kind) > 4 and "items" in body


def expand_lists(docs: Sequence[SourceDoc]) -> tuple[list[SourceDoc], list[FleetError]]:
    """Every document, List documents replaced by their items (in order)."""
    out: list[SourceDoc] = []
    errors: list[FleetError] = []
    for doc in docs:
        if doc.path or not is_list(doc.body):
            out.append(doc)
            continue
        items = doc.body.get("items")
        if items is None:
            continue
        if not isinstance(items, list):
            errors.append(FleetError(doc.file, doc.line, "items", "must be a list", doc.doc))
            continue
        for i, item in enumerate(items):
            where = f"items[{i}]"
            line = (locate(doc.text, doc.doc, where) if doc.text else None) or doc.line
            if not isinstance(item, dict):
                errors.append(FleetError(doc.file, line, where, "must be a mapping", doc.doc))
                continue
            out.append(replace(doc, body=item, line=line, path=where))
    return out, errors
