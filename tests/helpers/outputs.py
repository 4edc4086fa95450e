"""Random next output trees: the previous pass's files with some paths changed (new bytes, or
equal bytes in a new object), some gone, some new.

Called by the output listing and change-description tests (`tests/unit/repo`,
`tests/unit/reconciler`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence


def _any_content(rng: random.Random, path: str) -> bytes:
    return f"{path} {rng.random()}".encode()


def next_output(
    rng: random.Random,
    before: dict[str, bytes],
    pool: Sequence[str],
    count: int,
    content: Callable[[random.Random, str], bytes] = _any_content,
) -> dict[str, bytes]:
    """`before` with `count` paths of `pool` looked at: gone, the same bytes in a new object,
    or `content` (new by default)."""
    after = dict(before)
    for path in rng.sample(list(pool), count):
        roll = rng.random()
        if roll < 0.3:
            after.pop(path, None)
        elif roll < 0.5 and path in after:
            after[path] = bytes(bytearray(after[path]))  # equal content, another object
        else:
            after[path] = content(rng, path)
    return after
