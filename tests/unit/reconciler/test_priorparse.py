"""The prior-output cache: derived values keyed by (reader, blob id), shared parts interned."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import yaml

from gitfleet.repo.gitwrite import blob_id
from reconciler import priorparse
from reconciler.priorparse import load_bounded, parse_own


class CountingFiles(Mapping[str, bytes]):
    """A prior tree that names blob ids and counts reads."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files, self.reads = files, 0

    def __getitem__(self, path: str) -> bytes:
        self.reads += 1
        return self.files[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def oid(self, path: str) -> str:
        return blob_id(self.files[path])


def _keys(doc: Any) -> list[str]:
    return sorted(doc)


def test_blob_key_is_the_git_blob_id_with_or_without_oid() -> None:
    data = b"a: 1\n"
    assert priorparse.blob_key({"f": data}, "f") == blob_id(data)
    assert priorparse.blob_key(CountingFiles({"f": data}), "f") == blob_id(data)


def test_unchanged_file_is_neither_read_nor_parsed_again() -> None:
    files = CountingFiles({"x.yaml": b"zz-unique-1: 1\nb: [x]\n"})
    first = priorparse.derive_own(files, "x.yaml", "test-keys", _keys)
    again = priorparse.derive_own(files, "x.yaml", "test-keys", _keys)
    assert first == ["b", "zz-unique-1"] and again is first and files.reads == 1


def test_same_content_elsewhere_shares_the_value_but_readers_do_not() -> None:
    data = b"zz-unique-2: 1\n"
    plain = {"a.yaml": data, "b.yaml": bytes(data)}
    one = priorparse.derive_own(plain, "a.yaml", "test-keys", _keys)
    assert priorparse.derive_own(plain, "b.yaml", "test-keys", _keys) is one
    assert priorparse.derive_own(plain, "a.yaml", "test-len", len) == 1


def test_changed_content_is_parsed_again() -> None:
    files = {"x.yaml": b"zz-unique-3: 1\n"}
    assert priorparse.derive_own(files, "x.yaml", "test-keys", _keys) == ["zz-unique-3"]
    files["x.yaml"] = b"zz-unique-4: 1\n"
    assert priorparse.derive_own(files, "x.yaml", "test-keys", _keys) == ["zz-unique-4"]


def test_errors_are_raised_and_not_cached() -> None:
    with pytest.raises(yaml.YAMLError):
        priorparse.derive_own({"x": b"a: [\n"}, "x", "test-keys", _keys)
    with pytest.raises(KeyError):
        priorparse.derive_own({}, "x", "test-keys", _keys)
    calls = []

    def failing(doc: Any) -> int:
        calls.append(doc)
        raise ValueError("bad")

    for _ in range(2):
        with pytest.raises(ValueError):
            priorparse.derive_own({"x": b"zz-unique-5: 1\n"}, "x", "test-fail", failing)
    assert len(calls) == 2


def test_derived_values_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(priorparse, "MAX_DERIVED", 3)
    monkeypatch.setattr(priorparse, "_derived", type(priorparse._derived)())
    for i in range(5):
        priorparse.derive_own({"x": b"k%d: 1\n" % i}, "x", "test-keys", _keys)
    assert len(priorparse._derived) == 3


def test_shared_keeps_one_instance_and_freeze_keeps_types_apart() -> None:
    first = priorparse.shared(("t", priorparse.freeze({"a": [1, {"b": None}]})), lambda: [1])
    again = priorparse.shared(("t", priorparse.freeze({"a": [1, {"b": None}]})), lambda: [2])
    assert again is first
    assert priorparse.freeze({"a": True}) != priorparse.freeze({"a": 1})
    assert priorparse.freeze({"a": 1.0}) != priorparse.freeze({"a": 1})
    assert priorparse.freeze(["a"]) != priorparse.freeze({"a": None})


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
