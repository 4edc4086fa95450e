"""Fold the small packs a hub's commits leave into one, without a reachability walk.

The hub writes each output commit with `fastimport.unpackLimit=0` (`commit_files(keep_pack=
True)`): fast-import then keeps its pack instead of starting `git unpack-objects` to explode a
small commit into loose objects (fleet-1k, one edited resource: fast-import ~50 -> ~20 ms CPU).
Packs would pile up and make `gc --auto` repack the whole repository, so `fold_small_packs`
merges them in tiers: when `FOLD_COUNT` packs are below a tier's size, their objects (listed
by `git show-index`) are written into one pack by `git pack-objects` (no walk; ~80 ms for 14
packs of ~70 objects) and the old packs removed after the new one is complete, as `git repack
-d` does. Packs with a `.keep`, `.promisor` or `.mtimes` (cruft) file are never touched.
Called by `Mirror.maintain` only.
"""

from __future__ import annotations

from pathlib import Path

from gitfleet.repo.gitcmd import run_git

FOLD_COUNT = 16
"""Packs below a tier's size that make a fold (`gc.autoPackLimit` is 50 by default)."""
TIERS = (1 << 20, 16 << 20)
"""Pack sizes (bytes) of the fold tiers: a fold of small packs makes a pack of the next tier."""
_SIDE_FILES = (".pack", ".idx", ".rev", ".bitmap")
_PROTECTED = (".keep", ".promisor", ".mtimes")


def fold_small_packs(repo: Path) -> int:
    """Fold each tier with `FOLD_COUNT` or more packs below its size; the packs folded."""
    folded = 0
    for limit in TIERS:
        small = _small_packs(repo, limit)
        if len(small) >= FOLD_COUNT:
            _fold(repo, small)
            folded += len(small)
    return folded


def _small_packs(repo: Path, limit: int) -> list[Path]:
    """Foldable packs below `limit` bytes, by name (deterministic)."""
    directory = repo / "objects" / "pack"
    if not directory.is_dir():
        return []
    names = {entry.name for entry in directory.iterdir()}
    found = []
    for name in sorted(names):
        stem = name.removesuffix(".pack")
        if stem == name or any(stem + ext in names for ext in _PROTECTED):
            continue
        if stem + ".idx" in names and (directory / name).stat().st_size < limit:
            found.append(directory / name)
    return found


def _fold(repo: Path, packs: list[Path]) -> None:
    """Write every object of `packs` into one new pack, then delete the old ones."""
    env = {"GIT_DIR": str(repo)}
    oids: list[bytes] = []
    for pack in packs:
        listed = run_git(repo, ["show-index"], stdin=pack.with_suffix(".idx").read_bytes(), env=env)
        oids += [line.split()[1] for line in listed.stdout.splitlines()]
    base = repo / "objects" / "pack" / "pack"
    args = ["pack-objects", "--delta-base-offset", "--quiet", str(base)]
    written = run_git(repo, args, stdin=b"\n".join(oids) + b"\n", env=env)
    new = f"pack-{written.stdout.decode().strip()}"
    for pack in packs:
        if pack.stem != new:
            for ext in _SIDE_FILES:
                pack.with_suffix(ext).unlink(missing_ok=True)
