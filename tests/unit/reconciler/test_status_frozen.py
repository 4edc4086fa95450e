"""`statusdocs` takes the plan dicts a status reads frozen (`_FROZEN`): a remembered stage
result's `Frozen` dict as it is (no copy: next pass finds the very object), a plain dict copied
once however often one call reads it, and copied anew once the call is over (a dict changed in
place between passes is never read as its old copy)."""

from __future__ import annotations

from reconciler import statusdocs
from reconciler.rollkept import Frozen


def test_a_frozen_dict_is_taken_as_it_is() -> None:
    kept = Frozen({"c1": "h1"})
    assert statusdocs._FROZEN(kept) is kept
    assert all(statusdocs._COPIED[f] is statusdocs._FROZEN for f in ("desired", "reports"))


def test_a_plain_dict_is_copied_once_a_call_and_anew_after_it() -> None:
    plain = {"c1": "h1"}
    statusdocs._FROZEN.clear()
    first = statusdocs._FROZEN(plain)
    assert type(first) is Frozen and first == plain
    assert statusdocs._FROZEN(plain) is first
    statusdocs.placement_status_files({}, statusdocs.State(), {}, statusdocs.datetime.now())
    plain["c2"] = "h2"  # changed in place after the call
    second = statusdocs._FROZEN(plain)
    assert second == plain and second is not first
    statusdocs._FROZEN.clear()
