"""Explicit size and time limits for everything read from a fleet repository.

Defaults are documented in README.md ("Limits"); a Fleet object (`spec.limits`) may lower or raise
them. The loader, the renderers and the reconcile pass all read this one frozen record.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Caps on input size, YAML shape, templates and rendered output."""

    max_file_bytes: int = 4 * 1024 * 1024
    """A source file larger than this is refused (before it is parsed)."""
    max_documents_per_file: int = 5000
    max_yaml_nodes: int = 1_000_000
    """Nodes of one document after alias expansion (alias bombs are refused, not expanded)."""
    max_yaml_depth: int = 64
    """Nesting depth of one document."""
    max_object_bytes: int = 1_572_864
    """Canonical JSON size of one object (etcd's ~1.5 MiB request limit)."""
    max_objects_per_placement: int = 10_000
    max_rendered_bytes_per_cluster: int = 256 * 1024 * 1024
    template_timeout_seconds: float = 5.0
    """Wall-clock time for rendering one Jinja2 template."""
    template_max_output_bytes: int = 8 * 1024 * 1024
    max_kustomize_seconds: float = 60.0


DEFAULT_LIMITS = Limits()
