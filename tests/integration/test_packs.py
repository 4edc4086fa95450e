"""Real git: the hub's small commits keep fast-import's pack (`keep_pack`), and
`Mirror.maintain` folds such packs (`gitfleet.repo.packs`) without losing an object."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from gitfleet.repo import packs
from gitfleet.repo.gitcmd import GitError
from gitfleet.repo.gitwrite import Identity, commit_files
from gitfleet.repo.mirror import Mirror
from tests.helpers.hubs import Clock
from tests.integration.test_hub_faults import World

BOT = Identity("gitfleet-bot", "bot@gitfleet.invalid")


def _git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "--git-dir", str(repo), *args], capture_output=True, check=True)
    return out.stdout.decode()


def _packs(repo: Path) -> list[str]:
    return sorted(p.name for p in (repo / "objects" / "pack").glob("*.pack"))


def _loose(repo: Path) -> int:
    return int(_git(repo, "count-objects", "-v").splitlines()[0].split()[1])


def _commits(repo: Path, count: int, *, keep_pack: bool = True, tag: str = "") -> str:
    parent = None
    for n in range(count):
        files = {f"c{n}/a.yaml": f"a{n}{tag}".encode(), f"c{n}/b.yaml": f"b{n}{tag}".encode()}
        parent = commit_files(repo, parent, files, f"c{n}", BOT, keep_pack=keep_pack).commit
    assert parent is not None
    return parent


@pytest.fixture
def mirror(tmp_path: Path) -> Mirror:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    made = Mirror.open(tmp_path / "m", str(remote))
    _git(made.path, "config", "gc.auto", "0")  # only the fold acts in these tests
    return made


@pytest.mark.parametrize(("keep_pack", "packs_made", "loose"), [(True, 2, 0), (False, 0, 10)])
def test_keep_pack_keeps_fast_import_pack(
    mirror: Mirror, keep_pack: bool, packs_made: int, loose: int
) -> None:
    _commits(mirror.path, 2, keep_pack=keep_pack)  # 5 objects a commit, below unpackLimit
    assert (len(_packs(mirror.path)), _loose(mirror.path)) == (packs_made, loose)


def test_maintain_folds_small_packs_and_keeps_every_object(mirror: Mirror) -> None:
    tip = _commits(mirror.path, packs.FOLD_COUNT - 1)
    mirror.update_ref("refs/heads/out", tip, None)
    mirror.maintain()
    assert len(_packs(mirror.path)) == packs.FOLD_COUNT - 1  # below the count: untouched
    tip = commit_files(mirror.path, tip, {"last": b"x"}, "last", BOT, keep_pack=True).commit
    mirror.update_ref("refs/heads/out", tip, mirror.resolve("refs/heads/out"))
    objects = set(_git(mirror.path, "rev-list", "--objects", "--all").split())
    mirror.maintain()
    assert len(_packs(mirror.path)) == 1 and _loose(mirror.path) == 0
    _git(mirror.path, "fsck", "--strict", "--no-dangling")
    assert objects == set(_git(mirror.path, "rev-list", "--objects", "--all").split())
    assert [e.subject for e in mirror.log("refs/heads/out")][:2] == ["last", f"c{14}"]


@pytest.mark.parametrize("protect", [".keep", ".promisor", ".mtimes"])
def test_fold_leaves_protected_and_large_packs(
    mirror: Mirror, protect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _commits(mirror.path, 1)
    kept = _packs(mirror.path)[0]
    (mirror.path / "objects" / "pack" / kept).with_suffix(protect).write_bytes(b"")
    big = commit_files(
        mirror.path, None, {"big": random.Random(0).randbytes(4096)}, "big", BOT, keep_pack=True
    )
    large = sorted(set(_packs(mirror.path)) - {kept})
    limit = (mirror.path / "objects" / "pack" / large[0]).stat().st_size
    monkeypatch.setattr(packs, "TIERS", (limit,))
    monkeypatch.setattr(packs, "FOLD_COUNT", 2)
    assert packs.fold_small_packs(mirror.path) == 0
    _commits(mirror.path, 2, tag="new")
    assert packs.fold_small_packs(mirror.path) == 2  # the two new small packs only
    assert {kept, *large} < set(_packs(mirror.path)) and len(_packs(mirror.path)) == 3
    mirror.update_ref("refs/heads/big", big.commit, None)
    _git(mirror.path, "fsck", "--strict")


def test_the_hub_keeps_its_small_commits_packed(tmp_path: Path) -> None:
    world, clock = World.create(tmp_path), Clock()
    hub = world.hub("hub", clock)
    assert hub.run_once().outcome == "committed"
    world.edit(1)
    edited = hub.run_once()
    assert edited.outcome == "committed"
    loose = hub.mirror.path / "objects" / edited.output[:2] / edited.output[2:]
    assert (
        not loose.exists() and _git(hub.mirror.path, "cat-file", "-t", edited.output) == "commit\n"
    )


def test_pack_indexes_are_listed_as_git_show_index_lists_them(mirror: Mirror) -> None:
    _commits(mirror.path, 3)
    env = {"GIT_DIR": str(mirror.path)}
    for idx in (mirror.path / "objects" / "pack").glob("*.idx"):
        listed = packs._listed(mirror.path, idx, env)
        out = subprocess.run(
            ["git", "show-index"], input=idx.read_bytes(), capture_output=True, check=True
        )
        shown = [line.split()[1] for line in out.stdout.splitlines()]
        assert listed == shown and len(listed) == 5


@pytest.mark.parametrize(
    "bad", [b"\377tOc\0\0\0\1" + bytes(1024), b"", b"\377tOc\0\0\0\2" + bytes(100)]
)
def test_an_index_python_cannot_read_is_asked_of_git(
    mirror: Mirror, tmp_path: Path, bad: bytes
) -> None:
    idx = tmp_path / "odd.idx"
    idx.write_bytes(bad)
    with pytest.raises(GitError):  # git's own answer to an index it cannot read either
        packs._listed(mirror.path, idx, {"GIT_DIR": str(mirror.path)})


def test_folds_reuse_deltas_without_a_search_and_read_the_index_files(
    mirror: Mirror, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv: list[list[str]] = []
    real = packs.run_git

    def spy(repo: Path, args: list[str], **kwargs: object) -> object:
        argv.append(args)
        return real(repo, args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(packs, "run_git", spy)
    monkeypatch.setattr(packs, "FOLD_COUNT", 3)
    tip = _commits(mirror.path, 3)
    assert packs.fold_small_packs(mirror.path) == 3
    (fold,) = [args for args in argv if args[0] == "pack-objects"]
    assert "--window=0" in fold
    assert all(args[0] != "show-index" for args in argv)  # read from the index files
    _git(mirror.path, "fsck", "--strict", "--no-dangling", tip)


def test_a_tier_folds_only_the_packs_of_its_size_band(
    mirror: Mirror, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh mirror's one large fetched pack is not folded with the small packs after it."""
    big = commit_files(
        mirror.path, None, {"big": random.Random(1).randbytes(8192)}, "big", BOT, keep_pack=True
    )
    large = _packs(mirror.path)
    limit = (mirror.path / "objects" / "pack" / large[0]).stat().st_size
    monkeypatch.setattr(packs, "TIERS", (limit // 2, limit * 2))
    monkeypatch.setattr(packs, "FOLD_COUNT", 3)
    _commits(mirror.path, 2)
    assert packs.fold_small_packs(mirror.path) == 0  # 3 packs below limit * 2, 2 in the first band
    _commits(mirror.path, 1, tag="third")
    assert packs.fold_small_packs(mirror.path) == 3  # the three small ones, not the large one
    assert set(large) < set(_packs(mirror.path)) and len(_packs(mirror.path)) == 2
    mirror.update_ref("refs/heads/big", big.commit, None)
    _git(mirror.path, "fsck", "--strict")
