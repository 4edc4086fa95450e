"""`OutputFiles` built pass after pass the way `reconcile` builds it (`of_assembly`, `add`,
`settle`, `follow`) equals the plain tree (the assembly plus what the pass added) on random
passes: assemblies that change in some paths, files outside `clusters/` that come, change and
go. After `settle`, a path outside `clusters/` holds this pass's bytes or is absent; before it,
`clusters/` paths are already this pass's (what `reconcile` reads then). From the third pass on,
each tree is the tree of two passes back made into it (no copy of the assembly). Its sorted
paths for a prefix outside `clusters/` are those outside it only, and equal a scan."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest

from reconciler import output
from reconciler.output import OutputFiles
from reconciler.stagememo import forget_stages


def _assembly(rng: random.Random, last: dict[str, bytes] | None, step: int) -> dict[str, bytes]:
    """The `clusters/` files of one pass: the last ones with a few changed, added, removed."""
    files = dict(last or {f"clusters/c{k}/p/f.yaml": b"0" for k in range(30)})
    for path in rng.sample(sorted(files), 3):
        del files[path]
    for _ in range(4):
        files[f"clusters/c{rng.randrange(40)}/p/f.yaml"] = b"%d" % step
    return files


def _outside(rng: random.Random, step: int) -> list[dict[str, bytes]]:
    """What a pass adds outside `clusters/`, in a few `add` calls: most paths every pass,
    some only now and then, bytes changing now and then."""
    paths = [f"status/s{k}.yaml" for k in range(20)] + [f"state/t{k}.yaml" for k in range(10)]
    kept = [p for p in paths if rng.random() < 0.85]
    batches: list[dict[str, bytes]] = [{}, {}, {}]
    for path in kept:
        batches[rng.randrange(3)][path] = b"%d" % (step // rng.choice((1, 3)))
    return batches


@pytest.mark.parametrize("seed", range(8))
def test_passes_build_the_plain_tree(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    forget_stages()
    patched: list[int] = []
    real = output.patch

    def counted(files: dict[str, bytes], paths: Any, source: Mapping[str, bytes]) -> bool:
        patched.append(id(files))
        return real(files, paths, source)

    monkeypatch.setattr(output, "patch", counted)
    rng = random.Random(seed)
    assembly: dict[str, bytes] | None = None
    tree: OutputFiles | None = None
    made: list[int] = []
    for step in range(30):
        new = _assembly(rng, assembly, step)
        since = (
            None
            if assembly is None
            else (
                assembly,
                frozenset(new.keys() ^ assembly.keys())
                | {p for p in new if assembly.get(p) is not new[p]},
            )
        )
        tree = None  # the last tree is held by the memos only (as in the hub)
        patched.clear()
        files = OutputFiles.of_assembly(new, since)
        made.append(id(files))
        if step >= 2:  # the tree two passes back, patched into this one: no copy
            assert made[-1] == made[-3] and patched == [id(files)] * 2, step
        assert {p: b for p, b in files.items() if p.startswith("clusters/")} == new
        batches = _outside(rng, step)
        for batch in batches[:2]:
            files.add(batch)
        if step % 2:  # the paths outside `clusters/` before `settle`: it settles first
            kept = {**batches[0], **batches[1]}
            assert files.sorted_paths("status/") == sorted(kept), step
        files.settle()
        plain = {**new, **batches[0], **batches[1]}
        assert files == plain, step
        files.add(batches[2])
        files.follow(new, since)
        assert files == {**plain, **batches[2]}, step
        outside = sorted(p for p in files if not p.startswith("clusters/"))
        assert files.sorted_paths("state/") == files.sorted_paths("")[len(new) :] == outside
        assert files.sorted_paths("clusters/c1/") == sorted(files), step
        assembly, tree = new, files
    assert tree is not None
