"""One apply pass over a validated cluster directory: inventory, waves, CRD wait, prune.

Order (crash-safe, see `gitfleet.agent.inventory`): read the inventory -> record every object
about to be applied -> apply in waves (§6.2.8: namespaces first, CRDs before custom resources;
after a wave that applied CRDs, wait until each is Established) -> prune recorded objects no
placement wants any more -> store the final inventory. A failure to read or write the inventory
aborts the pass before anything is pruned. Called by `gitfleet.agent.run.run_once`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import groupby
from typing import Any

from gitfleet.agent.apply import Applier, ObjectResult
from gitfleet.agent.builtin import wave_of
from gitfleet.agent.client import ClusterClient, ClusterError
from gitfleet.agent.desired import Desired, Directory
from gitfleet.agent.health import availability
from gitfleet.agent.inventory import (
    PruneFailure,
    Record,
    prune,
    read_inventory,
    with_intended,
    write_inventory,
)
from gitfleet.api.reserved import refused_object


@dataclass(frozen=True)
class CrdWait:
    """How long to wait for CRDs to become Established: polls and seconds between them."""

    polls: int = 30
    interval: float = 1.0
    sleep: Callable[[float], None] = time.sleep


@dataclass(frozen=True)
class SyncResult:
    """Per-object results (directory order) and objects that could not be pruned."""

    results: tuple[ObjectResult, ...]
    prune_failures: tuple[PruneFailure, ...]


def sync_directory(
    client: ClusterClient, cluster: str, directory: Directory, wait: CrdWait
) -> SyncResult:
    """Apply `directory`, prune what left it; `ClusterError` when the inventory is unusable."""
    old = read_inventory(client)
    intended: dict[str, set[Record]] = {}
    for desired in directory.objects:
        if (
            desired.manifest is not None
            and desired.placement.apply_strategy.type != "ReportDiff"
            and refused_object(*desired.identity) is None
        ):
            intended.setdefault(desired.placement.key, set()).add(desired.identity)
    recorded = with_intended(old, intended)
    write_inventory(client, cluster, recorded, old)
    results = _apply_waves(Applier(client, cluster), directory.objects, client, wait)
    wanted: dict[Record, str] = {}
    for desired in directory.objects:
        wanted.setdefault(desired.identity, desired.placement.key)
    remaining, failures = prune(client, cluster, recorded, wanted)
    write_inventory(client, cluster, remaining, recorded)
    return SyncResult(results, tuple(failures))


def _apply_waves(
    applier: Applier, objects: tuple[Desired, ...], client: ClusterClient, wait: CrdWait
) -> tuple[ObjectResult, ...]:
    def order(d: Desired) -> tuple[int, str, str]:
        return (wave_of(d.entry.api_version, d.entry.kind), d.placement.key, d.entry.file)

    by_identity: dict[tuple[str, str, tuple[str, str, str, str]], ObjectResult] = {}
    for _, group in groupby(sorted(objects, key=order), key=lambda d: order(d)[0]):
        batch = list(group)
        for desired in batch:
            by_identity[_slot(desired)] = applier.process(desired)
        crds = [
            d
            for d in batch
            if d.entry.kind == "CustomResourceDefinition" and by_identity[_slot(d)].applied
        ]
        if crds:
            for name, live in _wait_established(client, crds, wait).items():
                slot = next(_slot(d) for d in crds if d.entry.name == name)
                state, message = availability(live)
                by_identity[slot] = replace(
                    by_identity[slot], availability=state, availability_message=message
                )
    return tuple(by_identity[_slot(d)] for d in objects)


def _slot(desired: Desired) -> tuple[str, str, tuple[str, str, str, str]]:
    return (desired.placement.key, desired.entry.file, desired.identity)


def _wait_established(
    client: ClusterClient, crds: list[Desired], wait: CrdWait
) -> dict[str, dict[str, Any]]:
    """Poll until every CRD is Established (or the polls run out); the CRDs that became so."""
    pending = {d.entry.name for d in crds}
    done: dict[str, dict[str, Any]] = {}
    for attempt in range(wait.polls):
        for name in sorted(pending):
            try:
                live = client.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, name)
            except ClusterError:
                continue
            if live is not None and _established(live):
                pending.discard(name)
                done[name] = live
        if not pending:
            break
        if attempt + 1 < wait.polls:
            wait.sleep(wait.interval)
    return done


def _established(crd: dict[str, Any]) -> bool:
    status = crd.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    return any(
        isinstance(c, dict) and c.get("type") == "Established" and c.get("status") == "True"
        for c in conditions or []
    )
