"""Repository documents -> validated `FleetSnapshot`; errors as `file:line: field.path: message`.

Safe YAML in and canonical YAML out (`yamlio`), payload identity checks (`payload`) and the
snapshot builder (`snapshot`, which indexes documents through `builder`); `parts` and `patch`
keep a snapshot as per-file parts that the hub patches with the files that changed. The output
types live in `model`. Imports `gitfleet.repo` and `gitfleet.api` only; called by the renderers, the
reconciler and the CLI.
"""

from gitfleet.load.model import FleetSnapshot, ObjectKey, Origin, Resource, SourceDoc
from gitfleet.load.snapshot import build_snapshot, classify, default_fleet, read_fleet_settings
from gitfleet.load.yamlio import decode_text, dump_yaml, locate, parse_documents

__all__ = [
    "FleetSnapshot",
    "ObjectKey",
    "Origin",
    "Resource",
    "SourceDoc",
    "build_snapshot",
    "classify",
    "decode_text",
    "default_fleet",
    "dump_yaml",
    "locate",
    "parse_documents",
    "read_fleet_settings",
]
