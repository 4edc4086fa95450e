"""gitwrite's whole-batch shortcuts decide as the per-path rules do: `check_paths` (one scan of
all paths joined) refuses exactly when `check_path` refuses one of them, with the same message;
`_refuse_nesting` finds a file that is another's directory; the fast-import stream built piece
by piece (`_stream`) is byte for byte the format written out plainly here; `run_fast_import`
reports git's failure and stops git when producing the stream fails."""

from __future__ import annotations

import random
import re
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gitfleet.repo.fastimport import run_fast_import
from gitfleet.repo.faststream import FILE_MODE, _stream, quote_path, raw_date
from gitfleet.repo.gitcmd import GitError
from gitfleet.repo.gitwrite import (
    Identity,
    PathError,
    _refuse_nesting,
    check_path,
    check_paths,
)

PIECES = ["a", "b-c", "d.yaml", "x_y", "ü", "e f", "g.h.yaml", "..", ".", ".hidden", "", "a\\b"]
ODD = ["\n", "\r", "\0", '"', "\t", "\x7f"]


def path(rng: random.Random) -> str:
    """A path: mostly good components, sometimes an empty, dotted or odd one, or a stray '/'."""
    parts = [rng.choice(PIECES[:7]) for _ in range(rng.randint(1, 4))]
    roll = rng.random()
    if roll < 0.15:
        parts[rng.randrange(len(parts))] = rng.choice(PIECES[7:])
    elif roll < 0.25:
        at = rng.randrange(len(parts))
        parts[at] = parts[at] + rng.choice(ODD)
    text = "/".join(parts)
    if rng.random() < 0.05:
        text = rng.choice(["/", ""]) + text + rng.choice(["/", ""])
    return text


def verdict(check: object, paths: list[str]) -> str | None:
    try:
        check(paths)  # type: ignore[operator]
    except PathError as exc:
        return str(exc)
    return None


def one_by_one(paths: list[str]) -> None:
    for p in paths:
        check_path(p)


@pytest.mark.parametrize("seed", range(300))
def test_check_paths_decides_as_check_path(seed: int) -> None:
    rng = random.Random(seed)
    paths = [path(rng) for _ in range(rng.randint(0, 6))]
    if seed % 4 == 0:
        paths = [p for p in paths if verdict(one_by_one, [p]) is None]  # all good
    assert verdict(check_paths, paths) == verdict(one_by_one, paths)


@pytest.mark.parametrize(
    "bad",
    [".a", "a/.b", "/a", "a/", "a//b", "a\\b", "a\nb", "a\rb", "a\0b", "", "..", "a/../b"],
)
def test_one_bad_path_among_good_ones_is_refused(bad: str) -> None:
    for paths in ([bad], ["x/y.yaml", bad], [bad, "z"], ["p", bad, "q/r"]):
        with pytest.raises(PathError, match="refused path"):
            check_paths(paths)


def test_good_paths_pass() -> None:
    check_paths(["a", "b/c.yaml", "d.e/f..g", "ü/x y", 'q"uote'])
    check_paths([])


@pytest.mark.parametrize(
    ("paths", "clash"),
    [
        (["a", "a/b"], "a"),
        (["x/a", "x/a/b/c"], "x/a"),
        (["a-b", "a/b", "a.b/c"], None),
        (["README", "READM"], None),  # a top-level file has no directory
        (["q/r/s", "q/r/t", "q"], "q"),
        (["d/e", "d/f"], None),
    ],
)
def test_refuse_nesting(paths: list[str], clash: str | None) -> None:
    if clash is None:
        _refuse_nesting(iter(paths))
    else:
        with pytest.raises(PathError, match=f"refused path '{clash}'"):
            _refuse_nesting(iter(paths))


WHO = Identity("t", "t@example.com")
WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def plain_stream(parent: str | None, changes: dict[str, bytes | None]) -> bytes:
    """The fast-import input written out the plain way: blobs (marks numbered in path order,
    streamed by file name, depth and path of their first path), commit, deletes, files."""
    marks: dict[bytes, bytes] = {}
    files = []
    for p, data in sorted((p, d) for p, d in changes.items() if d is not None):
        mark = marks.setdefault(data, b":%d" % (len(marks) + 2))
        files.append(b"M " + FILE_MODE.encode() + b" " + mark + b" " + quote_path(p) + b"\n")
    who = f"t <t@example.com> {raw_date(WHEN)}".encode()
    out = [b"feature done\n"]
    first: dict[bytes, str] = {}  # content -> the first path holding it
    for p, data in sorted((p, d) for p, d in changes.items() if d is not None):
        first.setdefault(data, p)
    by_name = sorted(marks, key=lambda d: (first[d].split("/")[-1], first[d].count("/"), first[d]))
    out += [b"blob\nmark %s\ndata %d\n%s\n" % (marks[d], len(d), d) for d in by_name]
    out += [b"commit refs/gitfleet/fast-import-scratch\nmark :1\n"]
    out += [b"author " + who + b"\ncommitter " + who + b"\ndata 2\nm\n"]
    out += [f"from {parent}\n".encode()] if parent else []
    out += [
        b"D " + quote_path(p) + b"\n" for p in sorted(p for p, d in changes.items() if d is None)
    ]
    out += files
    out += [b'get-mark :1\nls :1 ""\nreset refs/gitfleet/fast-import-scratch\nfrom ' + b"0" * 40]
    return b"".join(out) + b"\n\ndone\n"


@pytest.mark.parametrize("seed", range(100))
def test_stream_is_the_plain_format(seed: int) -> None:
    rng = random.Random(seed)
    contents = [b"", b"a: 1\n", b"b\n" * 3, bytes(range(256))]
    changes: dict[str, bytes | None] = {}
    for _ in range(rng.randint(1, 8)):
        p = path(rng)
        if "\n" not in p and "\0" not in p:
            changes[p] = None if rng.random() < 0.2 else rng.choice(contents)
    parent = rng.choice([None, "1" * 40])
    assert _stream(parent, changes, "m\n", WHO, WHEN) == plain_stream(parent, changes)


def test_git_failure_is_reported(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path)], check=True)
    with pytest.raises(GitError, match="fast-import failed"):
        run_fast_import(tmp_path, [b"feature done\n", b"no such command\n"])
    with pytest.raises(GitError, match="fast-import failed"):  # git stops reading: a broken pipe
        run_fast_import(tmp_path, [b"no such command\n"] + [b"x" * 1_000_000] * 64)


def test_a_failing_stream_stops_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path)], check=True)
    started: list[subprocess.Popen[bytes]] = []

    class Recorded(subprocess.Popen[bytes]):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(subprocess, "Popen", Recorded)

    def parts() -> Iterator[bytes]:
        yield b"feature done\nblob\nmark :2\ndata 3\nab\n\n"
        raise RuntimeError("stream broke")

    with pytest.raises(RuntimeError, match="stream broke"):
        run_fast_import(tmp_path, parts(), timeout=5)
    assert started and started[0].returncode is not None  # git was stopped and waited for


def test_a_stream_past_the_timeout_stops_git(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path)], check=True)

    def parts() -> Iterator[bytes]:
        yield b"feature done\n"
        time.sleep(1.5)
        yield b"blob\nmark :2\ndata 3\nab\n\n" * 100_000

    with pytest.raises(GitError, match=r"timed out after 0\.3s"):
        run_fast_import(tmp_path, parts(), timeout=0.3)


def test_blobs_of_one_file_name_are_streamed_together() -> None:
    """fast-import deltas a blob against the one streamed before it: files of one name (alike)
    come one after another, by depth then path; the marks stay in path order."""
    changes: dict[str, bytes | None] = {
        "a/index.yaml": b"1",
        "a/p/index.yaml": b"2",
        "a/x.yaml": b"3",
        "b/index.yaml": b"4",
        "b/x.yaml": b"5",
        "index.yaml": b"6",
    }
    stream = _stream(None, changes, "m\n", WHO, WHEN)
    blobs = [(int(m), d) for m, d in re.findall(rb"blob\nmark :(\d+)\ndata 1\n(.)\n", stream)]
    assert blobs == [(7, b"6"), (2, b"1"), (5, b"4"), (3, b"2"), (4, b"3"), (6, b"5")]
