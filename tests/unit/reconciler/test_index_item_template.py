"""A ClusterIndex list item made from its row shape's template (`indexfiles._Listings.item`)
has the bytes of emitting the row itself, on every path: templated, and each fallback."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gitfleet.api.indexrow import DEFAULT_APPLY_STRATEGY, written_row
from reconciler.indexfiles import _Listings
from reconciler.output import yaml_bytes

DIGEST_A = "sha256:" + "a1" * 32
DIGEST_B = "sha256:" + "9f" * 32
STAND_IN = "sha256:" + "0" * 64
SSA = {"type": "ServerSideApply", "serverSideApplyConfig": {"force": True}}


def _row(content: Any = DIGEST_A, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"key": "web", "name": "web", "namespace": "", "contentHash": content}
    row.update(resourceSnapshotIndex=3, policySnapshotIndex=1, objects=[{"file": "a.yaml"}])
    row.update(fields)
    return row


ROWS = {
    "default strategy": _row(applyStrategy=copy.deepcopy(dict(DEFAULT_APPLY_STRATEGY))),
    "no strategy": _row(),
    "own strategy": _row(applyStrategy=copy.deepcopy(SSA)),
    "hash not a digest": _row("sha256:short"),
    "no hash": _row(None),
    "hash not text": _row(7),
    "the stand-in in another field": _row(name=STAND_IN),
    "the stand-in as the hash": _row(STAND_IN),
    "a value that is no scalar": _row(extra=["a", "b"]),
    "quoted name": _row(name="'web: x'"),
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_item_is_the_emitted_row(name: str) -> None:
    listings = _Listings()
    row = ROWS[name]
    expected = yaml_bytes([written_row(row)])
    assert listings.item(row) == expected
    assert listings.item(row) == expected  # again, from the template where there is one


@pytest.mark.parametrize("strategy", [None, SSA])
def test_rows_of_one_shape_keep_their_own_hash(strategy: dict[str, Any] | None) -> None:
    listings = _Listings()
    extra = {} if strategy is None else {"applyStrategy": strategy}
    first, second = _row(DIGEST_A, **extra), _row(DIGEST_B, **extra)
    assert listings.item(first) == yaml_bytes([written_row(first)])
    assert listings.item(second) == yaml_bytes([written_row(second)])
    assert listings.item(first) != listings.item(second)
    assert len(listings.templates) == 1


def test_an_equal_strategy_in_another_dict_gets_its_own_template() -> None:
    listings = _Listings()
    one, other = _row(applyStrategy=copy.deepcopy(SSA)), _row(applyStrategy=copy.deepcopy(SSA))
    assert listings.item(one) == listings.item(other) == yaml_bytes([written_row(one)])
    assert len(listings.templates) == 2
