"""The `clusters/` files composed from units by patching the last composition
(`reconciler.unitfiles`), the paths a tree may differ from the last one in
(`OutputFiles.follow`), and the hub's listing taken from those paths only
(`BlobIdMemo.listing_since`): each equals what a full build or a full comparison gives."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest

from gitfleet.repo.treefiles import BlobIdMemo
from reconciler import output, unitfiles
from reconciler.output import OutputFiles, patch
from reconciler.stagememo import forget_stages, unheld
from reconciler.unitfiles import Units, compose, drop_base, keep_base


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


def _union(units: Units) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for unit in units.values():
        out.update(unit)
    return out


def _diff(a: Mapping[str, bytes], b: Mapping[str, bytes]) -> set[str]:
    return {p for p in a.keys() | b.keys() if a.get(p) != b.get(p)}


def _unit(name: str, n: int, tag: str = "") -> dict[str, bytes]:
    return {f"clusters/c{i}/{name}/x.yaml": f"{name}{i}{tag}".encode() for i in range(n)}


def test_a_patched_composition_equals_the_union_and_names_what_changed() -> None:
    """Units kept as the very objects, one changed in a path, one losing a path, one gone,
    one new, and one recomputed with equal bytes: the composition is the union, and the
    paths it may differ in are exactly the changed ones."""
    kept, changed, shrunk, gone = _unit("kept", 5), _unit("ch", 3), _unit("sh", 3), _unit("g", 2)
    first: Units = {"live/kept": kept, "live/ch": changed, "live/sh": shrunk, "held/g": gone}
    made = compose(first)
    assert made.since is None and made.files == _union(first)
    keep_base(made, first)
    again = {p: bytes(bytearray(d)) for p, d in _unit("eq", 2).items()}
    second: Units = {
        "live/kept": kept,
        "live/ch": {**changed, "clusters/c1/ch/x.yaml": b"new"},
        "live/sh": {p: d for p, d in shrunk.items() if "c2/" not in p},
        "live/new": _unit("new", 2),
        "index/eq": again,
    }
    patched = compose(second)
    assert patched.files == _union(second)
    assert patched.since is not None and patched.since[0] is made.files
    assert set(patched.since[1]) == _diff(made.files, patched.files)
    keep_base(patched, second)
    third: Units = {**second, "index/eq": _unit("eq", 2)}  # equal bytes, new objects
    unchanged = compose(third)
    assert unchanged.since is not None and unchanged.since[1] == frozenset()
    assert unchanged.files == _union(third)


def test_a_path_moving_to_another_unit_is_patched() -> None:
    """A cluster the rollout has not reached moves from a placement's live files to its kept
    ones, and back: the composition is patched, not built afresh."""
    live = _unit("p", 4)
    first: Units = {"held/p": {}, "live/p": live}
    keep_base(compose(first), first)
    kept = {p: d for p, d in live.items() if "/c3/" in p}
    second: Units = {"held/p": kept, "live/p": {p: d for p, d in live.items() if p not in kept}}
    moved = compose(second)
    assert moved.since is not None and moved.files == _union(second)
    keep_base(moved, second)
    back = compose(first)
    assert back.since is not None and back.files == _union(first)


def test_units_that_share_a_path_are_composed_afresh() -> None:
    """A path in two units cannot be patched (removing it from one would drop the other's):
    the composition is built afresh, later units winning, and is never a base."""
    first: Units = {"live/a": _unit("a", 2)}
    keep_base(compose(first), first)
    shared: Units = {"live/a": _unit("a", 2, "-1"), "live/b": _unit("a", 1, "-2")}
    made = compose(shared)
    assert made.since is None and made.files == _union(shared)
    assert made.files["clusters/c0/a/x.yaml"] == b"a0-2"
    keep_base(made, shared)
    assert unitfiles._LAST.last("") is None


def test_a_dropped_base_builds_afresh() -> None:
    first: Units = {"live/a": _unit("a", 2)}
    keep_base(compose(first), first)
    drop_base()
    assert compose(first).since is None


def test_the_composition_before_the_last_is_patched_in_place_into_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A composition no one holds any more becomes the next one (no copy), equal to the union
    of its units whatever changed in between: a path changed, moved, lost, added back. A pass
    that removes a path keeps the very dict too (never compacted into a new one: ~140 ms at
    fleet-1k)."""
    a, b = _unit("a", 4), _unit("b", 3)
    steps: list[Units] = [
        {"live/a": a, "live/b": b},
        {"live/a": {**a, "clusters/c1/a/x.yaml": b"one"}, "live/b": b},
        {"live/a": a, "live/b": {p: d for p, d in b.items() if "/c2/" not in p}},
        {"live/a": a, "live/b": b, "live/n": _unit("n", 2)},
        {"live/a": {**a, "clusters/c3/a/x.yaml": b"two"}, "live/b": b},
        {"live/a": {**a, "clusters/c3/a/x.yaml": b"two"}, "live/b": b},
        {"live/a": a, "live/b": {**b, "clusters/c0/b/x.yaml": b"three"}},
        {"live/a": {**a, "clusters/c2/a/x.yaml": b"four"}, "live/b": b},
    ]
    recycled: list[bool] = []
    real = unitfiles._recycled

    def counted(base: dict[str, bytes]) -> dict[str, bytes] | None:
        found = real(base)
        recycled.append(found is not None)
        return found

    monkeypatch.setattr(unitfiles, "_recycled", counted)
    ids = []
    for units in steps:
        made = compose(units)
        assert made.files == _union(units)
        keep_base(made, units)
        ids.append(id(made.files))
        del made
    assert recycled == [False] + [True] * (len(steps) - 2)
    assert ids[2:] == ids[:-2]  # the two dicts take turns, also after a path went (step 2)


def test_a_composition_someone_still_holds_is_never_changed() -> None:
    a = _unit("a", 3)
    steps: list[Units] = [
        {"live/a": {**a, "clusters/c0/a/x.yaml": str(i).encode()}} for i in range(4)
    ]
    held = []
    for units in steps:
        made = compose(units)
        keep_base(made, units)
        held.append((made.files, dict(made.files)))
    assert all(files == copy for files, copy in held)
    assert len({id(files) for files, _ in held}) == len(held)


def test_a_tree_that_follows_the_last_assembly_names_where_it_may_differ() -> None:
    """The paths added after the copy (this pass's and the last one's) join the assembly's;
    a tree following another assembly than the last one's learns nothing."""
    assembled = _unit("a", 3)
    first = OutputFiles(assembled)
    first.add({"status/p.yaml": b"1", "state/gone.yaml": b"x"})
    first.follow(assembled, None)
    assert first.since is None
    later = {**assembled, "clusters/c0/a/x.yaml": b"changed"}
    second = OutputFiles(later)
    second.add({"status/p.yaml": b"2", "status/q.yaml": b"3"})
    second.follow(later, (assembled, frozenset({"clusters/c0/a/x.yaml"})))
    assert second.since is not None and second.since[0] is first
    assert _diff(first, second) <= second.since[1]
    named = {"clusters/c0/a/x.yaml", "status/p.yaml", "status/q.yaml", "state/gone.yaml"}
    assert second.since[1] == named
    third = OutputFiles(later)
    third.follow(later, (assembled, frozenset()))  # `assembled` is not the last assembly
    assert third.since is None
    fourth = OutputFiles(later)
    fourth.follow(later, (later, frozenset()))
    assert fourth.since is not None and fourth.since[0] is third
    fifth = OutputFiles(later)
    fifth.follow(later, (later, frozenset()))
    assert fifth.since is not None and fifth.since[0] is fourth
    assert fourth.since is None  # no chain of every earlier tree: each holds all its paths


def _passes(held: list[OutputFiles]) -> list[tuple[OutputFiles, dict[str, bytes]]]:
    """Seven passes of assembly + added files (some changing, some going, one coming back,
    some under `clusters/`, one over an assembly's path);
    each tree with the union it must equal (`held`: trees kept by the caller)."""
    out: list[tuple[OutputFiles, dict[str, bytes]]] = []
    last: dict[str, bytes] | None = None
    for i in range(7):
        assembled = {**_unit("a", 4), f"clusters/c{i % 3}/a/x.yaml": str(i).encode()}
        if i == 4:
            del assembled["clusters/c3/a/x.yaml"]
        added = {"status/p.yaml": str(i).encode(), f"status/q{i % 2}.yaml": b"q"}
        if i in (2, 3):
            added["state/once.yaml"] = str(i).encode()
        if i in (1, 2, 5):  # an added file over an assembly's path, and one under clusters/
            added["clusters/c1/a/x.yaml"] = added["clusters/c9/added.yaml"] = b"over"
        since = None if last is None else (last, frozenset(_diff(last, assembled)))
        tree = OutputFiles.of_assembly(assembled, since)
        inside = {p: b for p, b in tree.items() if p.startswith("clusters/")}
        assert tree.since is None and inside == assembled  # the rest: until `settle`
        tree.add(added)
        tree.follow(assembled, since)
        out.append((tree if held else OutputFiles(), {**assembled, **added}))
        assert tree == {**assembled, **added}
        held.extend([tree] if held else [])
        del tree
        last = assembled
    return out


def test_a_tree_no_one_holds_is_patched_into_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree two passes back that nothing holds becomes this pass's (no copy): equal to
    the assembly plus what was added, whatever came and went meanwhile."""
    patched: list[frozenset[str]] = []
    real = output.patch

    def counted(
        files: dict[str, bytes], paths: frozenset[str], source: Mapping[str, bytes]
    ) -> bool:
        patched.append(paths)
        return real(files, paths, source)

    monkeypatch.setattr(output, "patch", counted)
    _passes([])
    assert patched


def test_a_tree_someone_holds_is_never_patched() -> None:
    held: list[OutputFiles] = [OutputFiles()]
    passes = _passes(held)
    assert all(tree == union for tree, union in passes)
    assert len({id(tree) for tree, _ in passes}) == len(passes)


@pytest.mark.parametrize("stale", [False, True])
def test_a_listing_from_the_named_paths_equals_a_full_one(stale: bool) -> None:
    """With `since` naming the last tree, only its paths are looked at; naming another tree,
    every path is compared. Both give the full listing and the changed and gone paths; equal
    content in a new bytes object is neither hashed nor named."""
    before = OutputFiles({f"clusters/c{i}/p/a.yaml": f"a{i}".encode() for i in range(6)})
    ids = BlobIdMemo()
    listed = ids.listing(before)
    after = OutputFiles(before)
    after["clusters/c1/p/a.yaml"] = b"changed"
    after["clusters/new/p/a.yaml"] = b"n"
    after["clusters/c3/p/a.yaml"] = copy = bytes(bytearray(b"a3"))  # equal, another object
    del after["clusters/c2/p/a.yaml"]
    named = {"clusters/c1/p/a.yaml", "clusters/new/p/a.yaml", "clusters/c2/p/a.yaml", "x/none"}
    named.add("clusters/c3/p/a.yaml")
    if stale:  # a tree with the same files, and paths that say nothing of this change
        after.since = (OutputFiles(before), frozenset({"x/none"}))
    else:
        after.since = (before, frozenset(named))
    listing, maybe = ids.listing_since(after, (before, listed))
    assert listing == BlobIdMemo().listing(after)
    assert maybe is not None and set(maybe) == _diff(before, after)
    assert "clusters/c3/p/a.yaml" not in maybe and id(copy) not in ids._ids  # not hashed


def test_a_tree_is_unheld_only_while_one_name_holds_it() -> None:
    tree = {"a": b"1"}
    assert unheld(tree)
    other = [tree]
    assert not unheld(tree)
    other.clear()
    assert unheld(tree)


@pytest.mark.parametrize(
    ("files", "source", "want", "lost"),
    [
        ({"a": b"1", "b": b"2"}, {"a": b"9"}, {"a": b"9"}, True),  # b gone from the source
        ({"a": b"1"}, {"a": b"1", "b": b"2"}, {"a": b"1", "b": b"2"}, False),
        ({"a": b"1"}, {}, {}, True),
        ({"c": b"3"}, {}, {"c": b"3"}, False),  # a path in neither: nothing lost
    ],
)
def test_patch_makes_the_paths_equal_to_the_source_and_says_whether_one_went(
    files: dict[str, bytes], source: dict[str, bytes], want: dict[str, bytes], lost: bool
) -> None:
    paths = {"a", "b"}
    assert patch(files, paths, source) is lost
    assert files == want


def test_a_tree_names_only_the_added_files_that_are_other_objects() -> None:
    """Pass after pass the same status bytes objects are added again, some change, some come
    and go, and the assembly changes a path: `since` names exactly the paths that differ
    (plus re-made equal bytes), never one added file that stayed the very object, and a tree
    patched from an unheld one equals the assembly plus what was added."""
    status = {f"status/c{i}.yaml": f"s{i}".encode() for i in range(6)}
    last: tuple[OutputFiles, dict[str, bytes]] | None = None
    last_assembled: dict[str, bytes] | None = None
    for n in range(9):
        assembled = {**_unit("a", 4), f"clusters/c{n % 4}/a/x.yaml": str(n).encode()}
        if n % 3 == 0:
            status = {**status, f"status/c{n % 6}.yaml": f"new{n}".encode()}
        added = {p: d for p, d in status.items() if n % 4 != 1 or "c5" not in p}
        since = None
        if last_assembled is not None:
            since = (last_assembled, frozenset(_diff(last_assembled, assembled)))
        tree = OutputFiles.of_assembly(assembled, since)
        tree.add(added)
        tree.follow(assembled, since)
        union = {**assembled, **added}
        assert tree == union
        if last is not None:
            assert tree.since is not None and tree.since[0] is last[0]
            assert set(tree.since[1]) == _diff(last[1], union)
        last, last_assembled = (tree, union), assembled
        del tree
