"""Tenants a revision declares but that did not load (so that they fail closed, not open).

A `Tenant` whose document is invalid, a duplicate, of the wrong apiVersion, or in a file that
does not parse, is absent from the snapshot; the paths it would restrict must not become
unrestricted (`reconciler.govern.tenancy` holds what no loaded Tenant owns). Each such Tenant
is one error at its `kind` line with the rule `TENANT_NOT_LOADED`: `tenant_lines` finds the
`kind: Tenant` lines of a file that failed to parse (called by `yamlio.parse_documents`),
`unloaded_tenant_docs` the Tenant documents the snapshot left out, and `unloaded_files` reads
the errors back as file -> line (both called by `snapshot.build_snapshot`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from gitfleet.api.errors import FleetError
from gitfleet.load.model import Origin, SourceDoc

TENANT_NOT_LOADED = (
    "Tenant file failed to load: placements not owned by a loaded Tenant keep their previous "
    "output until it loads"
)
_TENANT_KIND = re.compile(
    r"""(?m)(?:^|[\s{,])(?P<kind>kind)[ \t]*:[ \t]*(?P<q>["']?)Tenant(?P=q)[ \t]*(?:$|[,}#])"""
)


def tenant_lines(text: str) -> list[int]:
    """1-based lines of `text` that declare `kind: Tenant` (block or flow style). A textual
    scan: it also runs on text that does not parse, and a false hit only holds more."""
    return [text.count("\n", 0, m.start("kind")) + 1 for m in _TENANT_KIND.finditer(text)]


def unloaded_tenant_docs(
    docs: Sequence[SourceDoc], origins: Mapping[tuple[str, str, str], Origin]
) -> list[SourceDoc]:
    """The documents of kind Tenant that are not the snapshot's Tenant of their name."""
    out = []
    for doc in docs:
        if doc.body.get("kind") != "Tenant":
            continue
        meta = doc.body.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        if origins.get(("Tenant", "", str(name))) != Origin(doc.file, doc.doc, doc.line):
            out.append(doc)
    return out


def unloaded_files(errors: Iterable[FleetError]) -> dict[str, int | None]:
    """File -> first line of a Tenant in it that did not load (from the errors above)."""
    out: dict[str, int | None] = {}
    for error in sorted(errors, key=lambda e: (e.file, e.line or 0)):
        if error.message == TENANT_NOT_LOADED and error.file not in out:
            out[error.file] = error.line
    return out
