"""Per-placement files reused whole while a placement's inputs are last pass's, found for the
whole fleet in C: a stage's unchanged placements cost no Python step each.

A stage that writes one file per placement (`reconciler.statusdocs`: its status file) reads, of
each placement, some fields of its plan and a value from the prior output (its conditions). In a
long-running hub an unchanged placement hands over the very objects of the last pass, or fresh
dicts and lists of the very same items (later stages change a plan's per-cluster dicts in place),
and its prior value is the one the last pass wrote. `FileRows` keeps per key the fields as this
pass read them (those changed in place copied, each column by one `map` in C), the prior value
`make` said the bytes come again with (the one the next pass reads back from the file), and the
file's path and bytes. `files` reads every plan's fields with one `attrgetter` call, compares
them with the kept ones (a tuple compares identical items without calling `__eq__`, dicts item
by item, all in C) and the prior values by identity, and calls `make` only for the placements
where either differs. A file `make` says equal inputs do not give again is made again next pass.
Cleared with every StageMemo (`stagememo.forget_stages`). Called by `reconciler.statusdocs`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import compress, repeat
from operator import and_, attrgetter, eq, is_, itemgetter, not_
from typing import Any, NamedTuple

from reconciler.stagememo import StageMemo


class Made(NamedTuple):
    """One placement's file, whether equal inputs give these very bytes again, and the prior
    value they give them with (the one the next pass reads back from this file)."""

    data: bytes
    reusable: bool
    prior: object


_Kept = tuple[tuple[Any, ...], tuple[Any, ...] | None, object, str, bytes]
"""(the fields read as they were, the fields changed in place as copies (None: make it again),
the prior value, the path, the bytes)."""
_NOTHING: _Kept = ((), None, None, "", b"")
_SHARED, _OWNED, _PRIOR, _PATH, _DATA = (itemgetter(i) for i in range(5))


class FileRows:
    """Placement key -> its last file with the fields and prior value it was made from."""

    def __init__(self, fields: Sequence[str], copied: Mapping[str, Callable[[Any], Any]]) -> None:
        """`fields`: the plan attributes the file reads that are never changed in place (two
        at least); `copied`: those that are, with how to copy one (e.g. `dict`)."""
        assert len(fields) > 1, "attrgetter gives a tuple for two names or more"
        self._shared = attrgetter(*fields)
        self._owned = [(attrgetter(name), copy) for name, copy in copied.items()]
        self._memo: StageMemo[dict[str, _Kept]] = StageMemo()

    def files(
        self,
        plans: Mapping[str, Any],
        prior: Callable[[str], object],
        path: Callable[[str], str],
        make: Callable[[str, Any, object], Made],
    ) -> dict[str, bytes]:
        """path -> bytes of every placement's file, by key order: the kept bytes where the
        plan's fields equal the kept ones and `prior(key)` is the kept prior value, else
        `make(key, plan, prior(key))`. The fields are kept as this pass read them (the next
        pass compares mostly identical objects), copied where they change in place."""
        keys = sorted(plans)
        found = list(map(plans.__getitem__, keys))
        shared = list(map(self._shared, found))
        columns = [list(map(copy, map(get, found))) for get, copy in self._owned]
        owned = list(zip(*columns, strict=True)) if columns else [()] * len(keys)
        priors = list(map(prior, keys))
        last = self._memo.last("")
        kept = list(
            map(last[1].get, keys, repeat(_NOTHING)) if last else repeat(_NOTHING, len(keys))
        )
        same = list(
            map(
                and_,
                map(and_, map(eq, map(_SHARED, kept), shared), map(eq, map(_OWNED, kept), owned)),
                map(is_, map(_PRIOR, kept), priors),
            )
        )
        rest = [list(map(get, kept)) for get in (_PRIOR, _PATH, _DATA)]
        kept = list(zip(shared, owned, *rest, strict=True))
        for i in compress(range(len(keys)), map(not_, same)):
            key = keys[i]
            made = make(key, found[i], priors[i])
            reusable = owned[i] if made.reusable else None
            kept[i] = (shared[i], reusable, made.prior, path(key), made.data)
        self._memo.put("", (), dict(zip(keys, kept, strict=True)))
        return dict(zip(map(_PATH, kept), map(_DATA, kept), strict=True))
