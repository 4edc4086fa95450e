"""`gitfleet.api.canonical.pairs_json` writes (file, hash) pairs out directly; it must give
exactly `canonical_json`'s text for every string, escaped or not, and for non-strings."""

from __future__ import annotations

import random
from typing import Any

import pytest

from gitfleet.api.canonical import canonical_json, content_hash, pairs_content_hash, pairs_json

ALPHABET = [
    "a",
    "Z",
    "0",
    ".",
    "_",
    "-",
    "/",
    ":",
    " ",
    "ü",
    "ß",
    "字",
    '"',
    "\\",
    "\n",
    "\t",
    "\x00",
    "\x1f",
    "\x7f",
    "\u2028",
    "\U0001f600",
    "'",
    "<",
    "&",
]


@pytest.mark.parametrize("seed", range(200))
def test_pairs_json_is_canonical_json(seed: int) -> None:
    rng = random.Random(seed)

    def text() -> str:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 6)))

    pairs = tuple((text(), text()) for _ in range(rng.randint(0, 5)))
    assert pairs_json(pairs) == canonical_json(pairs)


@pytest.mark.parametrize(
    "pairs",
    [(), (("a.yaml", "sha256:00"),), (("a", 1),), ((None, "x"),), (("a", "b"), ("c", 2.5))],
)
def test_pairs_json_of_any_pairs_is_canonical_json(pairs: tuple[Any, ...]) -> None:
    assert pairs_json(pairs) == canonical_json(pairs)


def test_pairs_content_hash_is_the_content_hash_of_the_pairs() -> None:
    pairs = (("configmap_ns_a.yaml", "sha256:ab"), ('we"ird\\.yaml', "sha256:cd"))
    assert pairs_content_hash(pairs) == content_hash(pairs)
