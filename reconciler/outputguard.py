"""The last check of every object before it is written for a cluster, and of each cluster's total.

Whatever path produced an object (selection, envelope, override, template, distribution), it is
refused here when no placement may reach it (`gitfleet.api.reserved`: reserved namespaces, the
agent's own objects), when the API server would refuse it for its size (`limits.maxObjectBytes`,
etcd's ~1.5 MiB per object; 1 MiB of data in a ConfigMap or Secret), or when its file name is
already taken in the placement's folder by another object. `cluster_bytes` and
`cluster_over_cap` (`clusters_over_cap`: of many) check `limits.maxRenderedBytesPerCluster`. Called by `reconciler.assemble`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import yaml

from gitfleet.api.limits import Limits
from gitfleet.api.reserved import refused_object
from reconciler.manifests import Manifest
from reconciler.priorparse import load_bounded

CLUSTERS_PREFIX = "clusters/"
DATA_BYTES_LIMIT = 1024 * 1024
"""The API server's limit on the data of one ConfigMap or Secret."""


def refusal(manifest: Manifest, limits: Limits) -> tuple[str, bool] | None:
    """Why `manifest` may not be written, and whether its previous file is kept (an object
    that was fine before keeps being enforced); None when it may be written."""
    ident = manifest.identity
    reserved = _refused(
        ident.get("apiVersion", ""), ident["kind"], ident.get("namespace", ""), ident["name"]
    )
    if reserved is not None:
        return reserved, False
    size = len(manifest.data)
    if size > limits.max_object_bytes:
        return (
            f"object is {size} bytes, more than limits.maxObjectBytes ({limits.max_object_bytes}, "
            "the API server's limit per object)",
            True,
        )
    if size > DATA_BYTES_LIMIT and _has_data(ident):
        data = _data_bytes(manifest.data)
        if data > DATA_BYTES_LIMIT:
            return (
                f"{ident['kind']} data is {data} bytes, more than the API server's limit of "
                f"{DATA_BYTES_LIMIT} bytes (1 MiB)",
                True,
            )
    return None


_refused = lru_cache(maxsize=1 << 16)(refused_object)
"""`refused_object` once per identity (a fleet has a few thousand; its clusters' manifests
repeat them)."""


def describe(ident: Mapping[str, str]) -> str:
    ns = ident.get("namespace")
    return f"{ident['kind']} {ns + '/' if ns else ''}{ident['name']}"


def cluster_bytes(files: Mapping[str, bytes]) -> dict[str, int]:
    """Bytes written per cluster (`clusters/<cluster>/...`), in one walk over the tree."""
    totals: dict[str, int] = {}
    for path, data in files.items():
        if path.startswith(CLUSTERS_PREFIX):
            cluster = path[len(CLUSTERS_PREFIX) :].split("/", 1)[0]
            totals[cluster] = totals.get(cluster, 0) + len(data)
    return totals


def cluster_over_cap(total: int, cluster: str, limits: Limits) -> str | None:
    """The error when the `total` bytes of `cluster` exceed `limits.maxRenderedBytesPerCluster`."""
    cap = limits.max_rendered_bytes_per_cluster
    if total <= cap:
        return None
    return (
        f"cluster {cluster}: rendered output is {total} bytes, more than "
        f"limits.maxRenderedBytesPerCluster ({cap}); the cluster keeps its previous output"
    )


def clusters_over_cap(clusters: list[str], totals: Mapping[str, int], limits: Limits) -> list[str]:
    """The clusters whose `totals` exceed the cap (none when the largest does not: one look in
    C instead of a call per cluster)."""
    if limits.max_rendered_bytes_per_cluster >= max(totals.values(), default=0):
        return []
    return [c for c in clusters if cluster_over_cap(totals.get(c, 0), c, limits) is not None]


def _has_data(ident: Mapping[str, str]) -> bool:
    return ident.get("apiVersion") == "v1" and ident["kind"] in ("ConfigMap", "Secret")


def _data_bytes(data: bytes) -> int:
    try:
        obj: Any = load_bounded(data)
    except yaml.YAMLError:
        return len(data)
    total = 0
    for section in ("data", "binaryData", "stringData"):
        values = obj.get(section) if isinstance(obj, dict) else None
        for key, value in (values or {}).items():
            total += len(str(key)) + _value_bytes(section, obj.get("kind"), str(value))
    return total


def _value_bytes(section: str, kind: Any, value: str) -> int:
    encoded = section == "binaryData" or (section == "data" and kind == "Secret")
    if encoded:
        try:
            return len(base64.b64decode(value, validate=False))
        except (binascii.Error, ValueError):
            return len(value)
    return len(value.encode())
