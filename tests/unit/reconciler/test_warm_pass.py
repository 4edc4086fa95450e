"""What a long-running hub's warm pass relies on: shortcuts that must give exactly what the long
way gives. Grouping per-cluster statuses by one canonical JSON text per entry equals grouping by
renamed copies (the reference below is the previous implementation); the placement conditions a
pass remembers for its own status files equal what parsing those files gives; unchanged
conditions are reused as they are; a pass that keeps no placement reads no decision file of the
previous output; the heap keeper collects and freezes.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitfleet.api import Condition
from gitfleet.api.canonical import canonical_json, placement_content_hash
from gitfleet.api.grouping import NAME_TOKEN, group_named, renamed
from gitfleet.repo.workdir import WorkdirTree
from reconciler import heap
from reconciler.heap import HeapKeeper
from reconciler.output import OutputFiles
from reconciler.pass_ import reconcile
from reconciler.priorparse import derive_own, paths_under
from reconciler.state import State
from reconciler.status import Cond, timed
from reconciler.statusdocs import _placement_conditions, _status_of
from renderers import load_fleet

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
GOLDEN = sorted(p.parent.parent.name for p in (ROOT / "tests/golden").glob("*/fleet/fleet.yaml"))


def _reference(
    entries: list[dict[str, Any]], single: Callable[[Mapping[str, Any]], bool]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """group_named as it was: every entry renamed, then keyed by its canonical JSON."""
    token = canonical_json(NAME_TOKEN)[1:-1]
    singles: list[dict[str, Any]] = []
    groups: dict[str, dict[str, Any]] = {}
    for entry in entries:
        name = entry.get("name")
        if name is None or single(entry) or token in canonical_json(entry):
            singles.append(dict(entry))
            continue
        rest = renamed({k: v for k, v in entry.items() if k != "name"}, f'"{name}"', NAME_TOKEN)
        group = groups.setdefault(canonical_json(rest), {"names": [], **rest})
        group["names"].append(name)
    out: list[dict[str, Any]] = []
    for group in groups.values():
        if len(group["names"]) > 1:
            out.append(group)
            continue
        name = group.pop("names")[0]
        singles.append({"name": name, **renamed(group, NAME_TOKEN, f'"{name}"')})
    named = sorted((e for e in singles if "name" in e), key=lambda e: str(e["name"]))
    return named + [e for e in singles if "name" not in e], out


def _e(name: str | None, text: str, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"conditions": [{"message": text, "n": 3}], **extra}
    return entry if name is None else {"name": name, **entry}


ENTRIES = [
    ("same but names", [_e("a", 'in "a"'), _e("b", 'in "b"'), _e("c", 'in "c"')]),
    ("dotted names", [_e("eu.1", 'in "eu.1" x'), _e("eu.2", 'in "eu.2" x')]),
    ("backslash before quote", [_e("a", 'p \\"a" q'), _e("b", 'p \\"b" q')]),
    ("quote-escaped text", [_e("a", 'say "hi" in "a"'), _e("b", 'say "hi" in "b"')]),
    ("unicode", [_e("a", 'größe "a" ✓'), _e("b", 'größe "b" ✓'), _e("c", "größe c ✓")]),
    ("name without quotes", [_e("a", "in a"), _e("b", "in b")]),
    ("nested lists", [_e("a", "x", k=[['"a"', 1]]), _e("b", "x", k=[['"b"', 1]])]),
    ("a name inside another's", [_e("a", 'in "a" "ab"'), _e("b", 'in "b" "ab"')]),
    ("token inside", [_e("a", NAME_TOKEN), _e("b", NAME_TOKEN), _e("c", "z")]),
    ("unnamed and single", [_e(None, "u"), _e("a", "x", failed=[1]), _e("b", "x")]),
    ("name as a key's value only", [_e("a", "x", owner="a"), _e("b", "x", owner="b")]),
    ("mixed groups", [_e("c", 'in "c"'), _e("a", "m"), _e("b", 'in "b"'), _e("d", "m")]),
]


@pytest.mark.parametrize(("case", "entries"), ENTRIES, ids=[c for c, _ in ENTRIES])
def test_grouping_equals_the_renamed_copies_reference(
    case: str, entries: list[dict[str, Any]]
) -> None:
    def single(entry: Mapping[str, Any]) -> bool:
        return bool(entry.get("failed"))

    assert group_named(entries, "name", "names", single) == _reference(entries, single), case


def _not_remembered(_doc: Any) -> Any:
    raise AssertionError("the pass did not remember the conditions of its own status file")


@pytest.mark.parametrize("case", GOLDEN)
def test_remembered_placement_conditions_equal_the_parsed_file(case: str) -> None:
    fleet = load_fleet(WorkdirTree(ROOT / "tests/golden" / case / "fleet"))
    result = reconcile(fleet, State(), None, NOW)
    paths = [p for p in result.files if p.startswith("status/placements/")]
    assert paths
    for path in paths:
        remembered = derive_own(result.files, path, "placement-conditions", _not_remembered)
        parsed = _placement_conditions(_status_of(yaml.safe_load(result.files[path])))
        assert remembered == parsed, path


def _cond(
    status: str = "True", message: str = "m", gen: int = 1, at: str | None = "2026-01-01T00:00:00Z"
) -> Condition:
    return Condition.model_validate(
        {
            "type": "Applied",
            "status": status,
            "reason": "R",
            "message": message,
            "observedGeneration": gen,
            **({"lastTransitionTime": at} if at else {}),
        }
    )


OLD, NEW = "2026-01-01T00:00:00Z", "2026-11-21T10:00:00Z"


@pytest.mark.parametrize(
    ("prior", "status", "message", "gen", "reused", "time"),
    [
        (_cond(), "True", "m", 1, True, OLD),
        (_cond(), "False", "m", 1, False, NEW),
        (_cond(), "True", "other", 1, False, NEW),
        (_cond(), "True", "m", 2, False, OLD),  # a new generation keeps the transition time
        (_cond(at=None), "True", "m", 1, False, NEW),
    ],
)
def test_an_unchanged_condition_is_reused_as_it_is(
    prior: Condition, status: str, message: str, gen: int, reused: bool, time: str
) -> None:
    (out,) = timed([Cond("Applied", status, "R", message)], (prior,), gen, NOW)
    assert (out is prior) == reused
    assert (out.status, out.message, out.observed_generation) == (status, message, gen)
    assert out.last_transition_time == time


class _Counting(Mapping[str, bytes]):
    """A prior output that records which files a pass read."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files, self.read = files, set[str]()

    def __getitem__(self, path: str) -> bytes:
        self.read.add(path)
        return self.files[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)


def test_a_warm_pass_reads_no_decision_file_it_does_not_keep() -> None:
    fleet = load_fleet(WorkdirTree(ROOT / "examples/quickstart"))
    first = reconcile(fleet, State(), None, NOW)
    prior = _Counting(first.files)
    again = reconcile(fleet, State(first.state.placements, prior, first.state.overrides), None, NOW)
    assert again.files == first.files
    assert not {p for p in prior.read if p.startswith("decisions/")}
    assert any(p.startswith("decisions/") for p in first.files)


def test_placement_content_hash_is_remembered_by_content_not_identity() -> None:
    objects = [{"file": "b.yaml", "hash": "sha256:2"}, {"file": "a.yaml", "hash": "sha256:1"}]
    first = placement_content_hash(objects)
    assert placement_content_hash(list(reversed(objects))) == first
    assert placement_content_hash([{**objects[0], "hash": "sha256:3"}, objects[1]]) != first


class _Node:
    """A reference cycle to watch the collector with."""

    def __init__(self) -> None:
        self.me = self


def _frozen_cycle() -> weakref.ref[_Node]:
    """A garbage cycle among frozen objects (what a cache dropped between full collections)."""
    node = _Node()
    gc.collect(0)  # out of the youngest generation, as a cache entry of an earlier pass
    gc.freeze()
    return weakref.ref(node)


@pytest.mark.parametrize(
    ("peaks", "collected_at"),
    [
        ((100, 100, 100, 100), ()),  # caches keep their size: never a full collection
        ((100, 110, 125, 124), ()),  # grown by a quarter, not more
        ((100, 110, 126, 126), (2,)),  # past a quarter: collected once, the new peak the base
        ((100, 126, 150, 158), (1, 3)),  # 158 > 126 * 1.25
    ],
)
def test_the_heap_keeper_collects_in_full_only_when_the_peak_rss_grew_by_a_quarter(
    monkeypatch: pytest.MonkeyPatch, peaks: tuple[int, ...], collected_at: tuple[int, ...]
) -> None:
    threshold = gc.get_threshold()
    try:
        keeper = HeapKeeper()
        assert gc.get_threshold()[0] == 10_000
        seen = []
        for index, peak in enumerate(peaks):
            monkeypatch.setattr(heap, "peak_rss", lambda peak=peak: peak)
            old, young = _frozen_cycle(), weakref.ref(_Node())
            keeper.after_pass()
            assert young() is not None or old() is None  # unless collected, frozen as it is
            if old() is None:
                seen.append(index)
            assert gc.get_freeze_count() > 0
        assert tuple(seen) == collected_at
        assert keeper.full_collections == len(collected_at)
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


def _full_collections_while_building(objects: int) -> int:
    """Full collections the collector ran on its own while `objects` containers were built
    and kept (a cold pass builds its caches so)."""
    before = gc.get_stats()[2]["collections"]
    kept: list[list[int]] = [[] for _ in range(objects)]
    assert len(kept) == objects
    return int(gc.get_stats()[2]["collections"] - before)


def test_the_heap_keeper_never_walks_the_oldest_generation_on_its_own() -> None:
    """The first pass builds its caches before anything is frozen: the collector's own full
    collections would walk all of it, again and again, for nothing (`OLD_THRESHOLD`)."""
    threshold = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)  # CPython's own: a hub made earlier in the process
        gc.collect()
        assert _full_collections_while_building(3_000_000) > 0
        gc.collect()
        HeapKeeper()
        assert gc.get_threshold()[2] == heap.OLD_THRESHOLD
        assert _full_collections_while_building(3_000_000) == 0
    finally:
        gc.set_threshold(*threshold)


class _Listed(dict[str, bytes]):
    """An output mapping that keeps a sorted listing, as `TreeFiles` does."""

    def sorted_paths(self, prefix: str = "") -> list[str]:
        return sorted(self)


_TOP = chr(0x10FFFF)


@pytest.mark.parametrize(
    "prefix",
    [
        "decisions/",
        "decisions/web-",
        "state/placements/",
        "clusters/a/",
        "zz/",
        "",
        "c",
        "clusters",
    ],
)
def test_paths_under_a_sorted_listing_equals_a_scan(prefix: str) -> None:
    paths = [
        "clusters/a/index.yaml",
        "clusters/a.b/index.yaml",
        "clusters/a/web/x.yaml",
        "clusters/ab/index.yaml",
        "decisions/web-0.yaml",
        "decisions/web-api-0.yaml",
        "decisions/web.yaml",
        "state/placements/web.yaml",
        "state/placementsx.yaml",
        "status/placements/web.yaml",
        f"decisions/web-{_TOP}.yaml",
        f"decisions/web-{_TOP}{_TOP}",
        f"zz/{_TOP}",
    ]
    files = {p: b"" for p in reversed(paths)}
    scanned = sorted(p for p in files if p.startswith(prefix))
    assert paths_under(files, prefix) == scanned
    assert paths_under(_Listed(files), prefix) == scanned
    assembled = OutputFiles.of_assembly({p: b"" for p in paths if p.startswith("clusters/")}, None)
    assembled.add({p: b"" for p in paths if not p.startswith("clusters/")})
    assert paths_under(assembled, prefix) == scanned
