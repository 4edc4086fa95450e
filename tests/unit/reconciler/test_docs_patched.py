"""Per-placement results patched from the last pass by redoing only the clusters whose inputs
are other objects (issue 18: on "add a cluster" ~44 placements change one row out of ~1,000)
equal the results made from scratch, over random sequences of passes: `priorindex`'s rows of
a placement (`_placement_rows`) and `stagememo.changed_keys`."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from gitfleet.api.output import placement_index_path
from gitfleet.load.yamlio import dump_yaml
from reconciler import priorindex
from reconciler.priorstate import IndexRecord, PlacementPrior, implied_row, implied_rows
from reconciler.stagememo import changed_keys, forget_stages
from reconciler.state import Binding, PlacementState

CLUSTERS = [f"c{i:02d}" for i in range(12)]
HEADERS = [
    {"name": "web", "applyStrategy": {"type": "ClientSideApply"}},
    {"name": "web", "applyStrategy": {"type": "ServerSideApply"}},
]


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


def test_changed_keys_are_the_keys_with_another_object() -> None:
    one, two = {"x": 1}, {"x": 1}
    old = {"a": one, "b": one, "c": two}
    assert changed_keys(old, dict(old)) == set()
    assert changed_keys(old, {"a": one, "b": two, "d": one}) == {"b", "c", "d"}
    assert changed_keys({}, old) == {"a", "b", "c"}


def _binding(cluster: str, content: int) -> Binding:
    return Binding(cluster, "Bound", 0, resource_index=1, content=f"sha256:{content:064d}")


def _index_file(cluster: str, content: str) -> bytes:
    """A PlacementIndex whose objects follow the row's content hash (as the pass writes it)."""
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "name": content[-6:], "file": "x_a.yaml"}
    doc: dict[str, Any] = {"apiVersion": "gitfleet.io/v1alpha2", "kind": "PlacementIndex"}
    doc["objects"] = [obj]
    doc["metadata"] = {"name": "web"}
    return dump_yaml(doc).encode()


class Step:
    """One placement's bindings and record, edited pass after pass."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.bindings = {c: _binding(c, rng.randrange(3)) for c in rng.sample(CLUSTERS, 6)}
        self.header: dict[str, Any] = HEADERS[0]
        self.named = set(self.bindings)
        self.entries: dict[str, dict[str, Any]] = {}

    def edit(self) -> None:
        rng, cluster = self.rng, self.rng.choice(CLUSTERS)
        what = rng.randrange(8)
        if what == 0:  # bound (or rebound to other content)
            self.bindings[cluster] = _binding(cluster, rng.randrange(3))
            self.named.add(cluster)
        elif what == 1:  # unbound
            self.bindings.pop(cluster, None)
            self.named.discard(cluster)
            self.entries.pop(cluster, None)
        elif what == 2 and cluster in self.bindings:  # an equal binding, another object
            b = self.bindings[cluster]
            self.bindings[cluster] = Binding(b.cluster, b.state, 0, 1, content=b.content)
        elif what == 3:  # a row the binding does not imply, written whole
            row = implied_row("web", HEADERS[1], _binding(cluster, rng.randrange(3))) or {}
            self.entries[cluster] = {"cluster": cluster, **row}
            self.named.discard(cluster)
        elif what == 4:  # the whole row goes back to the name
            self.entries.pop(cluster, None)
            if cluster in self.bindings:
                self.named.add(cluster)
        elif what == 5:  # the record no longer names a bound cluster (its row went)
            self.named.discard(cluster)
        elif what == 6 and rng.random() < 0.3:
            self.header = HEADERS[rng.randrange(2)]

    def inputs(self) -> tuple[PlacementState, PlacementPrior]:
        bindings = tuple(self.bindings[c] for c in sorted(self.bindings))
        entries = tuple(dict(self.entries[c]) for c in sorted(self.entries))
        clusters = tuple(sorted(self.named - set(self.entries)))
        record = IndexRecord(dict(self.header), clusters, entries)
        return PlacementState("web", bindings=bindings), PlacementPrior("web", record, None)


def _fresh_rows(output: dict[str, bytes], ps: PlacementState, prior: PlacementPrior) -> Any:
    assert prior.index is not None
    implied = implied_rows("web", prior.index, ps.bindings)
    return {c: priorindex._with_objects(output, c, row) for c, row in implied.items()}


@pytest.mark.parametrize("seed", range(60))
def test_a_placements_patched_rows_equal_fresh_ones(seed: int) -> None:
    rng = random.Random(seed)
    step = Step(rng)
    patched = 0
    for _ in range(25):
        for _ in range(rng.randrange(1, 3)):
            step.edit()
        ps, prior = step.inputs()
        contents = {c: str(b.content) for c, b in step.bindings.items()}
        contents.update((c, str(e["contentHash"])) for c, e in step.entries.items())
        output = {  # each cluster's PlacementIndex as the pass wrote it with the row
            placement_index_path(c, "web"): _index_file(c, content)
            for c, content in contents.items()
        }
        try:
            want = _fresh_rows(output, ps, prior)
        except (KeyError, ValueError) as exc:
            with pytest.raises(type(exc)):
                priorindex._placement_rows(output, ps, prior)
            continue
        last = priorindex._ROWS.last("web")
        got = priorindex._placement_rows(output, ps, prior)
        assert got == want
        patched += last is not None and last[1].record.header == HEADERS[0]
        again = priorindex._placement_rows(output, ps, prior)
        assert again is got
    assert patched
