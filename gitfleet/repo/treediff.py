"""What changed between two commits' trees, read through a long-running `cat-file`.

`GitTree.open_since` lists only the paths that changed since the last source tree. Through git
that is two processes a pass (`diff-tree -r` names the paths, `ls-tree -r` lists the ones still
there). Given the hub mirror's `ObjectReader`, `changed_records` compares the two commits' trees
itself: equal subtrees (same id) are skipped unread, so an edit of one file reads the trees on
its path only. It returns what those two commands would: the changed paths (`diff-tree -r
--no-renames`: every leaf added, removed or changed, a folder replaced by a file counting as
its files removed and the file added) and, for those present in the new tree, `ls-tree -r -z`
records without sizes (`<mode> <type> <id>\\t<path>`), for `gitread._parse_record` to judge
(links, submodules, hidden and refused paths) exactly as it judges git's. None when more than
`limit` paths changed or an object cannot be read: the caller asks git then. Called by
`gitfleet.repo.gitread` only.
"""

from __future__ import annotations

from gitfleet.repo.objects import ObjectReader

_FOLDER = b"40000"
_KINDS = {b"160000": b"commit"}
"""The object type `ls-tree` prints for a leaf mode (a blob unless named here)."""

Entries = dict[bytes, tuple[bytes, bytes]]
"""name -> (mode, object id) of one tree object."""


class _TooMany(Exception):
    """More paths changed than the caller wants listed one by one."""


def changed_records(
    reader: ObjectReader, old: str, new: str, limit: int
) -> tuple[set[bytes], list[bytes]] | None:
    """(changed paths, `ls-tree` records of the changed paths in `new`) between commits `old`
    and `new`; None when more than `limit` changed or an object is not readable."""
    trees = [_tree_of(reader, commit) for commit in (old, new)]
    if trees[0] is None or trees[1] is None:
        return None
    changed: set[bytes] = set()
    records: list[bytes] = []
    try:
        _compare(reader, trees[0], trees[1], b"", (changed, records), limit)
    except _TooMany:
        return None
    except ValueError:  # a malformed tree object: git reports it when it lists the tree
        return None
    return changed, records


def _tree_of(reader: ObjectReader, commit: str) -> str | None:
    got = reader.read(commit)
    if got is None or got[0] != b"commit" or not got[1].startswith(b"tree "):
        return None
    return got[1][5 : got[1].index(b"\n")].decode("ascii")


def _compare(
    reader: ObjectReader,
    old: str | None,
    new: str | None,
    prefix: bytes,
    found: tuple[set[bytes], list[bytes]],
    limit: int,
) -> None:
    """Add the leaves that differ between trees `old` and `new` (None: absent) under
    `prefix` to `found` (changed paths, records of the new ones)."""
    changed, records = found
    before, after = _entries(reader, old), _entries(reader, new)
    for name in sorted(before.keys() | after.keys()):
        was, now = before.get(name), after.get(name)
        if was == now:
            continue
        path = prefix + name
        was_folder = was is not None and was[0] == _FOLDER
        now_folder = now is not None and now[0] == _FOLDER
        if was is not None and not was_folder:
            changed.add(path)
        if now is not None and not now_folder:
            changed.add(path)
            records.append(b"%s %s %s\t%s" % (now[0], _KINDS.get(now[0], b"blob"), now[1], path))
        if len(changed) > limit:
            raise _TooMany
        if was_folder or now_folder:
            inner_old = was[1].decode() if was is not None and was_folder else None
            inner_new = now[1].decode() if now is not None and now_folder else None
            _compare(reader, inner_old, inner_new, path + b"/", found, limit)


def _canonical(mode: bytes) -> bytes:
    """The mode as git reads a tree entry (`canon_mode`: a regular file is 100644 or 100755
    whatever else its bits say), so old trees compare and list as git lists them."""
    known = _MODES.get(mode)
    if known is None:
        bits = int(mode, 8)
        kind = bits & 0o170000
        if kind == 0o100000:
            known = b"100755" if bits & 0o100 else b"100644"
        else:
            known = {0o040000: _FOLDER, 0o120000: b"120000", 0o160000: b"160000"}.get(kind, mode)
        _MODES[mode] = known
    return known


_MODES: dict[bytes, bytes] = {}
"""Tree entry modes seen -> canonical mode."""


def _entries(reader: ObjectReader, tree: str | None) -> Entries:
    """The entries of tree object `tree` ({} for None). ValueError when it is missing or
    malformed."""
    if tree is None:
        return {}
    got = reader.read(tree)
    if got is None or got[0] != b"tree":
        raise ValueError(f"tree {tree} is not readable")
    data = got[1]
    entries: Entries = {}
    at, end = 0, len(data)
    id_size = 20 if len(tree) == 40 else 32
    while at < end:
        space = data.index(b" ", at)
        nul = data.index(b"\0", space)
        if nul + 1 + id_size > end:
            raise ValueError(f"tree {tree} is truncated")
        oid = data[nul + 1 : nul + 1 + id_size].hex().encode()
        entries[data[space + 1 : nul]] = (_canonical(data[at:space]), oid)
        at = nul + 1 + id_size
    return entries
