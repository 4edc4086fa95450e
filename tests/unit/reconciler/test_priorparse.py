"""The prior-output cache: derived values keyed by (reader, blob id), shared parts interned."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import yaml

from gitfleet.repo.gitwrite import blob_id
from reconciler import priorparse


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


def test_parse_own_caches_by_content_within_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    first = priorparse.parse_own(b"a: 1\nb: [x]\n")
    assert priorparse.parse_own(b"".join([b"a: 1\n", b"b: [x]\n"])) is first
    big = b"k: " + b"x" * (priorparse.MAX_CACHED_BYTES + 1) + b"\n"
    assert priorparse.parse_own(big) is not priorparse.parse_own(big)
    monkeypatch.setattr(priorparse, "BUDGET_BYTES", 64)
    for i in range(10):
        priorparse.parse_own(b"key%d: %s\n" % (i, b"v" * 20))
    assert priorparse._held <= 64
