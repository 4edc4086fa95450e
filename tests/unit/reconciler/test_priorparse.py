"""The prior-output parse cache: same content parsed once, large documents never cached, and the
byte budget bounds what is held."""

from __future__ import annotations

import pytest
import yaml

from reconciler import priorparse
from reconciler.priorparse import load_bounded, parse_own


def test_same_content_is_parsed_once_and_shared() -> None:
    first = priorparse.parse_own(b"a: 1\nb: [x]\n")
    again = priorparse.parse_own(b"".join([b"a: 1\n", b"b: [x]\n"]))  # equal, not identical
    assert first == {"a": 1, "b": ["x"]} and again is first


def test_large_documents_are_not_cached() -> None:
    big = b"k: " + b"x" * (priorparse.MAX_CACHED_BYTES + 1) + b"\n"
    assert priorparse.parse_own(big) is not priorparse.parse_own(big)


def test_budget_drops_the_oldest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(priorparse, "BUDGET_BYTES", 64)
    docs = [f"key: value-{i:04d}\n".encode() for i in range(20)]
    for data in docs:
        priorparse.parse_own(data)
    assert priorparse._held <= 64
    assert docs[0] not in priorparse._cache and docs[-1] in priorparse._cache


LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9)
)


@pytest.mark.parametrize(
    "text",
    [LAUGHS, "x: " + "[" * 200 + "]" * 200 + "\n", "a: !!binary aGVsbG8=\n", "a: 1\na: 2\n"],
    ids=["alias-bomb", "deep", "binary-tag", "duplicate-key"],
)
def test_own_output_is_read_with_the_bounded_reader(text: str) -> None:
    """Anyone who can push to the output branch can write these bytes: they get the same
    limits as user input (never expanded, never a RecursionError)."""
    with pytest.raises(yaml.YAMLError):
        parse_own(text.encode())
    with pytest.raises(yaml.YAMLError):
        load_bounded(text.encode())


def test_the_cache_stays_consistent_under_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two hubs in one process parse the same bytes at once: the byte count must match what is
    held (a drift made a later pass crash popping from an empty cache)."""
    import threading

    monkeypatch.setattr(priorparse, "_cache", type(priorparse._cache)())
    monkeypatch.setattr(priorparse, "_held", 0)
    monkeypatch.setattr(priorparse, "BUDGET_BYTES", 4096)
    docs = [f"key: value-{i:04d}\n".encode() for i in range(300)]

    def work() -> None:
        for data in docs:
            priorparse.parse_own(data)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert priorparse._held == sum(len(d) for d in priorparse._cache)
    assert priorparse._held <= 4096
