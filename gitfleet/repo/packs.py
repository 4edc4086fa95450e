"""Fold the small packs a hub's commits leave into one, without a reachability walk.

The hub writes each output commit with `fastimport.unpackLimit=0` (`commit_files(keep_pack=
True)`): fast-import then keeps its pack instead of starting `git unpack-objects` to explode a
small commit into loose objects (fleet-1k, one edited resource: fast-import ~50 -> ~20 ms CPU).
Packs would pile up and make `gc --auto` repack the whole repository, so `fold_small_packs`
merges them in tiers of similar sizes: when `FOLD_COUNT` packs are in a tier's size band
(below 1 MB, then 1-16 MB), their objects (listed from their `.idx` files; `git show-index`
only for an index that is not version 2 of SHA-1 ids) are written into one pack by `git
pack-objects` (no walk) and the old packs removed after the new one is complete, as `git
repack -d` does. A fold reuses the deltas it finds and looks for no new ones (`--window=0`):
measured on the 15 packs of 14 fleet-1k override edits (937 objects), a fold went from 78 to
14 ms of CPU (179 -> 29 ms wall) for a 1.7 instead of 1.0 MB pack. A band keeps a fresh
mirror's fetched pack (~15 MB at fleet-1k) out of the first folds: folded with the 15 commit
packs after it, with delta search as before, it cost ~1.1 s of CPU on the pass that made the
16th (the third *relabel* trial of the hub benchmark), 0.5 s without the search. Packs of 16 MB
or more are never folded: `gc --auto` repacks everything, with new deltas, once there are more
than `gc.autoPackLimit` packs. Packs with a `.keep`, `.promisor` or `.mtimes` (cruft) file are
never touched. Called by `Mirror.maintain` only.
"""

from __future__ import annotations

from pathlib import Path

from gitfleet.repo.gitcmd import run_git

FOLD_COUNT = 16
"""Packs in a tier's size band that make a fold (`gc.autoPackLimit` is 50 by default)."""
TIERS = (1 << 20, 16 << 20)
"""Upper pack sizes (bytes) of the fold tiers' bands (a tier's band starts at the tier before's
limit): a fold of small packs makes a pack of a later band."""
_SIDE_FILES = (".pack", ".idx", ".rev", ".bitmap")
_IDX_V2 = b"\377tOc\0\0\0\2"
_IDX_FANOUT_END = 8 + 256 * 4
_PROTECTED = (".keep", ".promisor", ".mtimes")


def fold_small_packs(repo: Path) -> int:
    """Fold each tier with `FOLD_COUNT` or more packs in its size band; the packs folded."""
    folded = 0
    for low, limit in zip((0, *TIERS), TIERS, strict=False):
        small = _small_packs(repo, low, limit)
        if len(small) >= FOLD_COUNT:
            _fold(repo, small)
            folded += len(small)
    return folded


def _small_packs(repo: Path, low: int, limit: int) -> list[Path]:
    """Foldable packs of at least `low` and below `limit` bytes, by name (deterministic)."""
    directory = repo / "objects" / "pack"
    if not directory.is_dir():
        return []
    names = {entry.name for entry in directory.iterdir()}
    found = []
    for name in sorted(names):
        stem = name.removesuffix(".pack")
        if stem == name or any(stem + ext in names for ext in _PROTECTED):
            continue
        if stem + ".idx" in names and low <= (directory / name).stat().st_size < limit:
            found.append(directory / name)
    return found


def _fold(repo: Path, packs: list[Path]) -> None:
    """Write every object of `packs` into one new pack, then delete the old ones: deltas are
    reused, none is looked for (`--window=0`)."""
    env = {"GIT_DIR": str(repo)}
    oids: list[bytes] = []
    for pack in packs:
        oids += _listed(repo, pack.with_suffix(".idx"), env)
    base = repo / "objects" / "pack" / "pack"
    args = ["pack-objects", "--delta-base-offset", "--quiet", "--window=0"]
    written = run_git(repo, [*args, str(base)], stdin=b"\n".join(oids) + b"\n", env=env)
    new = f"pack-{written.stdout.decode().strip()}"
    for pack in packs:
        if pack.stem != new:
            for ext in _SIDE_FILES:
                pack.with_suffix(ext).unlink(missing_ok=True)


def _listed(repo: Path, idx: Path, env: dict[str, str]) -> list[bytes]:
    """The object ids (hex) a pack index lists: read from a version-2 index of SHA-1 ids
    (what git writes) directly, asked of `git show-index` otherwise."""
    data = idx.read_bytes()
    if data[:8] == _IDX_V2 and len(data) >= _IDX_FANOUT_END:
        count = int.from_bytes(data[_IDX_FANOUT_END - 4 : _IDX_FANOUT_END], "big")
        if len(data) == _IDX_FANOUT_END + count * 28 + 40:  # ids, crc32s, offsets, 2 sums
            ids = data[_IDX_FANOUT_END : _IDX_FANOUT_END + count * 20]
            return [ids[at : at + 20].hex().encode() for at in range(0, len(ids), 20)]
    listed = run_git(repo, ["show-index"], stdin=data, env=env)
    return [line.split()[1] for line in listed.stdout.splitlines()]
