"""The index lookups a selection makes (`select_reading`) and the lookups changed entries can
answer differently (`changed_lookups`): whenever none of a selection's lookups is among them,
selecting again from the new index gives the very same selection (`placememo` reuses a
placement's parts on that). Checked for every placement of the selector table against every
single-object edit, removal and addition; and the edits that do change a selection are seen."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reconciler.select import ResourceIndex, Selection, build_index, changed_lookups, select_reading
from tests.unit.select.select_helpers import Term, crp, ns_term, obj, res, rp
from tests.unit.select.test_selector import ERROR_CASES, FLEET, OK_CASES

PLACEMENTS = [(c[0], c[1]) for c in OK_CASES + ERROR_CASES] + [
    ("by label in rp", rp("app", "p", Term("", "v1", "ConfigMap"))),
    ("named namespace", crp("p", ns_term("db"))),
    ("namespace only", crp("p", ns_term("app", "NamespaceOnly"))),
]

ADDED = [
    obj("v1", "ConfigMap", "fresh", "app", labels={"team": "a"}),
    obj("v1", "ConfigMap", "fresh", "db"),
    obj("v1", "Namespace", "fresh", labels={"tier": "web"}),
    obj("rbac.authorization.k8s.io/v1", "ClusterRole", "fresh", labels={"team": "a"}),
    obj("v1", "ConfigMap", "settings", "app"),  # a duplicate of an existing one
]


def _edited(i: int) -> list[dict[str, Any]]:
    out = list(FLEET)
    changed = copy.deepcopy(FLEET[i])
    changed["metadata"]["labels"] = {"team": "a", "tier": "web"}
    out[i] = changed
    return out


EDITS = (
    [(f"edit {i}", _edited(i)) for i in range(len(FLEET))]
    + [(f"remove {i}", FLEET[:i] + FLEET[i + 1 :]) for i in range(len(FLEET))]
    + [
        (
            f"add {m['kind']} {m['metadata'].get('namespace', '')}/{m['metadata']['name']} {i}",
            [*FLEET[:i], m, *FLEET[i:]],
        )
        for m in ADDED
        for i in (0, 9, len(FLEET))
    ]
)


READER = next(i for i, m in enumerate(FLEET) if m["metadata"]["name"] == "reader")


def _index(manifests: list[dict[str, Any]]) -> ResourceIndex:
    """Resources by identity of their manifest and position, like the loader's."""
    return build_index([res(m, doc=id(m) % 1000) for m in manifests])


def _same(a: Selection, b: Selection) -> bool:
    return (a.hash, a.error, a.resources, a.invalid) == (b.hash, b.error, b.resources, b.invalid)


def test_selections_that_read_no_changed_lookup_are_unchanged() -> None:
    old = _index(FLEET)
    before = {case: select_reading(p, old) for case, p in PLACEMENTS}
    changed_seen = 0
    for _, manifests in EDITS:
        new = _index(manifests)
        touched = changed_lookups(old.entries, new.entries)
        for case, placement in PLACEMENTS:
            selection, reads = before[case]
            now = select_reading(placement, new)[0]
            if not reads.meets(touched):
                assert _same(selection, now), case
            elif not _same(selection, now):
                changed_seen += 1
        _index(FLEET)  # keep the old index's entries the remembered ones
    assert changed_seen > 50  # the table has edits that change selections


@pytest.mark.parametrize(
    ("edit", "placement", "meets"),
    [
        ("edit 3", crp("p", ns_term("app")), True),  # a ConfigMap in a selected namespace
        ("edit 3", crp("p", ns_term("db")), False),
        ("edit 3", rp("app", "p", Term("", "v1", "ConfigMap", "other")), False),
        ("edit 3", rp("app", "p", Term("", "v1", "ConfigMap", "settings")), True),
        (f"edit {READER}", crp("p", Term("rbac.authorization.k8s.io", "v1", "ClusterRole")), True),
        ("add ConfigMap app/fresh 9", rp("app", "p", Term("", "v1", "Secret")), False),
        ("add ConfigMap app/fresh 9", crp("p", ns_term("app")), True),
        ("add Namespace /fresh 9", crp("p", ns_term("app", "NamespaceOnly")), False),
        ("add Namespace /fresh 9", crp("p", ns_term(None, "NamespaceOnly", tier="web")), True),
    ],
)
def test_changed_lookups_meet_the_reads_of_selections_they_can_change(
    edit: str, placement: Any, meets: bool
) -> None:
    old = _index(FLEET)
    reads = select_reading(placement, old)[1]
    manifests = dict(EDITS)[edit]
    assert reads.meets(changed_lookups(old.entries, _index(manifests).entries)) is meets
