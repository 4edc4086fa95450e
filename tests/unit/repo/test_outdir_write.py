"""write_output / read_output: path safety, marker safety, minimal writes, removal, pruning."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitfleet.repo.outdir import MARKER, OutputError, read_output, write_output


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("/etc/passwd", "absolute"),
        ("../escape.yaml", "'..'"),
        ("clusters/../../x", "'..'"),
        ("", "empty"),
        ("a//b", "empty"),
        (".gitfleet-output", "hidden"),
        ("clusters/.hidden", "hidden"),
        ("a\\b", "backslash"),
    ],
)
def test_bad_paths_write_nothing(tmp_path: Path, path: str, fragment: str) -> None:
    out = tmp_path / "out"
    with pytest.raises(OutputError) as info:
        write_output(out, {"ok.yaml": b"x", path: b"evil"})
    assert fragment in str(info.value)
    assert not out.exists()
    assert not (tmp_path.parent / "escape.yaml").exists()


def test_file_and_directory_clash(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="is also a file"):
        write_output(tmp_path / "out", {"a": b"1", "a/b": b"2"})


def test_refuses_foreign_non_empty_directory(tmp_path: Path) -> None:
    out = tmp_path / "home"
    out.mkdir()
    (out / "precious.txt").write_text("keep")
    with pytest.raises(OutputError, match=r"no \.gitfleet-output marker"):
        write_output(out, {"a.yaml": b"x"})
    assert sorted(p.name for p in out.iterdir()) == ["precious.txt"]


def test_empty_existing_directory_is_adopted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    result = write_output(out, {"a.yaml": b"x"})
    assert result.written == ("a.yaml",) and (out / MARKER).is_file()


def test_rewrite_changes_only_what_changed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = write_output(
        out, {"clusters/a/x.yaml": b"1\n", "clusters/b/y.yaml": b"2\n", "state/s.yaml": b"s"}
    )
    assert first.written == ("clusters/a/x.yaml", "clusters/b/y.yaml", "state/s.yaml")
    old = out / "clusters/a/x.yaml"
    os.utime(old, (1_000_000, 1_000_000))
    (out / "clusters/b/notes.txt").write_text("user file, not ours")
    second = write_output(out, {"clusters/a/x.yaml": b"1\n", "state/s.yaml": b"t"})
    assert second.written == ("state/s.yaml",)
    assert second.unchanged == ("clusters/a/x.yaml",)
    assert second.removed == ("clusters/b/y.yaml",)
    assert old.stat().st_mtime == 1_000_000
    assert (out / "clusters/b/notes.txt").exists()
    third = write_output(out, {"state/s.yaml": b"t"})
    assert third.removed == ("clusters/a/x.yaml",)
    assert not (out / "clusters/a").exists()
    assert (out / "clusters/b").exists()


def test_bytes_are_written_as_given(tmp_path: Path) -> None:
    write_output(tmp_path / "o", {"a.yaml": b"a: 1\nb: 2\n"})
    assert (tmp_path / "o/a.yaml").read_bytes() == b"a: 1\nb: 2\n"


def test_tampered_marker_never_removes_outside(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_output(out, {"a.yaml": b"x"})
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    (out / MARKER).write_text("../victim.txt\n/etc/passwd\n.hidden\n")
    result = write_output(out, {"b.yaml": b"y"})
    assert result.removed == ()
    assert victim.read_text() == "keep"


def test_symlinks_inside_output_are_refused(tmp_path: Path) -> None:
    out, outside = tmp_path / "out", tmp_path / "outside"
    outside.mkdir()
    write_output(out, {"a.yaml": b"x"})
    (out / "clusters").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutputError, match="symbolic link"):
        write_output(out, {"clusters/c.yaml": b"x"})
    (out / "b.yaml").symlink_to(outside / "target.yaml")
    with pytest.raises(OutputError, match="not a regular file"):
        write_output(out, {"b.yaml": b"x"})
    assert list(outside.iterdir()) == []


def test_output_dir_symlink_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(OutputError, match="symbolic link"):
        write_output(tmp_path / "link", {"a": b"x"})


def test_read_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_output(out, {"state/a.yaml": b"1", "state/x/b.yaml": b"2", "clusters/c.yaml": b"3"})
    (out / "state/link.yaml").symlink_to(out / "clusters/c.yaml")
    assert read_output(out, "state") == {"state/a.yaml": b"1", "state/x/b.yaml": b"2"}
    assert read_output(out, "state/") == read_output(out, "state")
    assert set(read_output(out)) == {"state/a.yaml", "state/x/b.yaml", "clusters/c.yaml"}
    assert read_output(tmp_path / "missing", "state") == {}
    with pytest.raises(OutputError):
        read_output(out, "../out")


def test_file_where_a_directory_is_expected_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_output(out, {"a.yaml": b"x"})
    (out / "clusters").write_text("a user's file")
    with pytest.raises(OutputError, match="'clusters' is not a directory"):
        write_output(out, {"clusters/c/x.yaml": b"x"})
    assert (out / "clusters").read_text() == "a user's file"


def test_symlink_deep_in_the_path_is_refused(tmp_path: Path) -> None:
    out, outside = tmp_path / "out", tmp_path / "outside"
    outside.mkdir()
    write_output(out, {"clusters/a/x.yaml": b"1", "clusters/b/y.yaml": b"2"})
    (out / "clusters/b/y.yaml").unlink()
    (out / "clusters/b").rmdir()
    (out / "clusters/b").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutputError, match="'b' is a symbolic link"):
        write_output(out, {"clusters/a/x.yaml": b"1", "clusters/b/y.yaml": b"3"})
    assert list(outside.iterdir()) == []


def test_written_files_are_0644_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    out = tmp_path / "out"
    old = os.umask(0o077)
    try:
        write_output(out, {"a/b/c.yaml": b"1", "a/d.yaml": b"2", "e.yaml": b"3"})
        write_output(out, {"a/b/c.yaml": b"1", "a/d.yaml": b"22", "e.yaml": b"3"})
    finally:
        os.umask(old)
    assert (out / "a/d.yaml").stat().st_mode & 0o777 == 0o644
    assert (out / "a/b/c.yaml").read_bytes() == b"1" and (out / "a/d.yaml").read_bytes() == b"22"
    leftovers = [p for p in out.rglob("*") if p.name.startswith(".gitfleet-tmp-")]
    assert leftovers == []


def test_same_size_different_bytes_is_rewritten(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_output(out, {"a.yaml": b"abc"})
    result = write_output(out, {"a.yaml": b"abd"})
    assert result.written == ("a.yaml",)
    assert (out / "a.yaml").read_bytes() == b"abd"
