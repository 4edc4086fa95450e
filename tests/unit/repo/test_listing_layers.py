"""`treefiles.Listing`: the output listing kept as changes on top of an earlier one equals the
listing made afresh, pass after pass, and never changes the listing it was made from."""

from __future__ import annotations

import random
from collections.abc import Mapping

import pytest

from gitfleet.repo import treefiles
from gitfleet.repo.treefiles import BlobIdMemo, Listing, WrittenOutput
from tests.helpers.outputs import next_output


def _pass(rng: random.Random, before: dict[str, bytes], pool: list[str]) -> dict[str, bytes]:
    """The next output: some paths changed (new bytes or equal bytes in a new object), some
    gone, some new, some gone earlier back again."""
    return next_output(rng, before, pool, rng.randint(0, 12))


@pytest.mark.parametrize("seed", range(30))
def test_layered_listing_equals_a_fresh_listing_pass_after_pass(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over many passes (flattened into one dict now and then), every lookup, membership,
    length and iteration agrees with a listing made afresh, and each pass's listing stays as
    it was once later ones are made on top of it."""
    monkeypatch.setattr(treefiles, "FLATTEN_SHARE", random.Random(seed).choice([1, 2, 8]))
    rng = random.Random(seed)
    pool = [f"clusters/c{i}/p/o{j}.yaml" for i in range(6) for j in range(4)]
    files = {p: p.encode() for p in pool if rng.random() < 0.7}
    output = WrittenOutput()
    listing, _ = output.changes(None, files)
    output.wrote("c0", files, listing)
    kept: list[tuple[dict[str, tuple[str, int]], Mapping[str, tuple[str, int]]]] = []
    for n in range(1, 25):
        files = _pass(rng, files, pool)
        listing, maybe = output.changes(f"c{n - 1}", files)
        fresh = BlobIdMemo().listing(files)
        assert maybe is not None
        assert dict(listing) == fresh and len(listing) == len(fresh)
        assert sorted(listing) == sorted(fresh)
        for path in pool:
            assert (path in listing) == (path in fresh)
            assert listing.get(path) == fresh.get(path)
            assert listing.get(path, "none") == fresh.get(path, "none")
            if path not in fresh:
                with pytest.raises(KeyError):
                    listing[path]
        output.wrote(f"c{n}", files, listing)
        kept.append((fresh, listing))
        assert all(dict(old) == want for want, old in kept)


def test_a_path_gone_and_back_is_listed_with_its_new_content() -> None:
    base = {"a.yaml": ("1" * 40, 1), **{f"b{i}.yaml": ("2" * 40, 1) for i in range(30)}}
    gone = Listing.since(base, {"a.yaml": None})
    assert "a.yaml" not in gone and len(gone) == 30 and list(gone) == list(base)[1:]
    back = Listing.since(gone, {"a.yaml": ("3" * 40, 2), "c.yaml": ("4" * 40, 3)})
    assert back["a.yaml"] == ("3" * 40, 2) and len(back) == 32
    assert "a.yaml" not in gone and base["a.yaml"] == ("1" * 40, 1)
    assert isinstance(gone, Listing) and isinstance(back, Listing)


def test_changes_outnumbering_a_share_of_the_base_are_flattened() -> None:
    base = {f"p{i}.yaml": (f"{i:040d}", i) for i in range(16)}
    small = Listing.since(base, {"p0.yaml": None})
    assert isinstance(small, Listing)
    big = Listing.since(small, {"p1.yaml": None, "x.yaml": ("f" * 40, 9)})
    assert type(big) is dict and big == {
        **{p: e for p, e in base.items() if p not in ("p0.yaml", "p1.yaml")},
        "x.yaml": ("f" * 40, 9),
    }
