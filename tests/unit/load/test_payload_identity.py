"""`payload_identity` remembers its answer per document object and limits: the same object
under the same limits gives the same answer; another object, or other limits, are checked."""

from __future__ import annotations

from typing import Any

from gitfleet.api.limits import Limits
from gitfleet.load.payload import PayloadIdentity, payload_identity


def _doc(name: Any = "web", data: str = "x") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"a": data},
    }


def test_the_same_document_gives_the_same_identity() -> None:
    doc = _doc()
    first = payload_identity(doc, Limits())
    assert isinstance(first, PayloadIdentity) and first.name == "web"
    assert payload_identity(doc, Limits()) is first


def test_other_limits_are_checked_again() -> None:
    doc = _doc(data="x" * 500)
    assert isinstance(payload_identity(doc, Limits()), PayloadIdentity)
    refused = payload_identity(doc, Limits(max_object_bytes=100))
    assert isinstance(refused, list) and "maxObjectBytes" in refused[0].message
    assert isinstance(payload_identity(doc, Limits()), PayloadIdentity)


def test_an_equal_looking_new_document_is_checked_on_its_own() -> None:
    good = payload_identity(_doc(), Limits())
    bad = payload_identity(_doc(name="a/b"), Limits())
    assert isinstance(good, PayloadIdentity) and isinstance(bad, list)
    assert bad[0].field == "metadata.name"
