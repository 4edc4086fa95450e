"""`priorrows.placement_rows` told the assembly its index files come from (issue 18: a pass
looks up only the index paths the assembly's `since` names): after any sequence of
assemblies, some patched from the last one (`since` names the paths that may differ), some
not, the rows equal a full read, and a patched pass looks up no other index path."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from gitfleet.api.output import cluster_index_path
from reconciler import priorrows
from reconciler.stagememo import forget_stages
from tests.unit.reconciler.test_patched_rows import (
    CLUSTERS,
    KEYS,
    _index_bytes,
    _reference_rows,
    _row,
)


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


class _Counted(Mapping[str, bytes]):
    """A tree that records the index paths looked up in it."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files, self.looked = files, set[str]()

    def __getitem__(self, path: str) -> bytes:
        if path.endswith("/index.yaml"):
            self.looked.add(path)
        return self.files[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)


def _step(rng: random.Random, before: dict[str, bytes]) -> tuple[dict[str, bytes], set[str]]:
    """A new assembly (another dict) and the index paths where it differs from `before`."""
    files, changed = dict(before), set()
    for cluster in rng.sample(CLUSTERS, rng.randrange(0, 4)):
        path = cluster_index_path(cluster)
        changed.add(path)
        if rng.randrange(4) == 0:
            files.pop(path, None)
        else:
            keys = sorted(rng.sample(KEYS, rng.randrange(4)))
            files[path] = _index_bytes([_row(k, f"h{rng.randrange(3)}") for k in keys])
    return files, changed


@pytest.mark.parametrize("seed", range(40))
def test_rows_from_the_paths_since_names_equal_a_full_read(seed: int) -> None:
    rng = random.Random(seed)
    last: dict[str, bytes] = {}
    clusters = list(CLUSTERS)
    for _ in range(12):
        files, changed = _step(rng, last)
        since: Any = (last, frozenset(changed | {"status/x.yaml"}))
        what = rng.randrange(6)
        if what == 0:
            since = None  # not patched: every index path is looked up
        elif what == 1:
            since = (dict(last), since[1])  # patched from another assembly than the last
        elif what == 2:
            clusters = rng.sample(CLUSTERS, len(CLUSTERS) - 1) if len(clusters) == 12 else CLUSTERS
        named = [c for c in clusters if cluster_index_path(c) in files]
        got = priorrows.placement_rows(files, named, (files, since))
        assert got == _reference_rows({p: files[p] for p in map(cluster_index_path, named)})
        last = files


def test_a_patched_pass_looks_up_only_the_index_paths_since_names() -> None:
    first = {cluster_index_path(c): _index_bytes([_row("web", "1")]) for c in CLUSTERS}
    assert priorrows.placement_rows(first, CLUSTERS, (first, None)) is not None
    second = dict(first)
    second[cluster_index_path("c03")] = _index_bytes([_row("web", "2")])
    counted = _Counted(second)
    got = priorrows.placement_rows(counted, CLUSTERS, (second, (first, {"status/x.yaml"})))
    assert not counted.looked  # the changed index file is not named: last pass's rows
    assert got is not None and got["web"]["c03"]["contentHash"] == "1"
    third = dict(second)
    counted = _Counted(third)
    since = (second, {cluster_index_path("c03")})
    got = priorrows.placement_rows(counted, CLUSTERS, (third, since))
    assert got == _reference_rows(third) and counted.looked == {cluster_index_path("c03")}


def test_a_since_from_another_assembly_than_the_last_calls_is_not_trusted() -> None:
    first = {cluster_index_path(c): _index_bytes([_row("web", "1")]) for c in CLUSTERS}
    other = dict(first)
    assert priorrows.placement_rows(first, CLUSTERS, (first, None)) is not None
    second = dict(first)
    second[cluster_index_path("c03")] = _index_bytes([_row("web", "2")])
    got = priorrows.placement_rows(second, CLUSTERS, (second, (other, frozenset())))
    assert got == _reference_rows(second)
