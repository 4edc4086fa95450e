"""Per-placement results patched from the last pass by redoing only the clusters whose inputs
are other objects (issue 18: on "add a cluster" ~44 placements change one row out of ~1,000)
equal the results made from scratch, over random sequences of passes: `priorindex`'s rows of
a placement (`_placement_rows`), `publish`'s PlacementDecision slices (`_published`), `state`'s state files (`keptgroups`), the
`index` part of `state/prior/` records (`priorsection`) and
`stagememo.changed_keys`."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from gitfleet.api.grouping import CONTENTS, group_named
from gitfleet.api.output import placement_index_path
from gitfleet.load.yamlio import dump_yaml, pyyaml_dump
from reconciler import priorindex, priorsection, priorstate, publish, state
from reconciler.binding import BindingDecision, binding_to_yaml
from reconciler.decisions import REVISION_ANNOTATION, decision_documents, decision_slices
from reconciler.keptgroups import KeptGroups
from reconciler.output import yaml_bytes
from reconciler.placement import PlacementPlan
from reconciler.priorstate import IndexRecord, PlacementPrior, implied_row, implied_rows
from reconciler.schedule.outcome import Decision
from reconciler.stagememo import changed_keys, forget_stages
from reconciler.state import Binding, PlacementState
from reconciler.status import Cond
from reconciler.yamlparts import Spliced, items_block

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


@pytest.mark.parametrize("seed", range(10))
def test_changed_keys_equal_looking_at_every_key(seed: int) -> None:
    rng = random.Random(seed)
    objects = [object() for _ in range(5)]
    for _ in range(300):
        old = {k: rng.choice(objects) for k in rng.sample("abcdefgh", rng.randrange(7))}
        new = dict(old)
        for _ in range(rng.randrange(3)):
            key = rng.choice("abcdefgh")
            if rng.random() < 0.3:
                new.pop(key, None)
            else:
                new[key] = rng.choice(objects)
        if rng.random() < 0.3:
            new = dict(sorted(new.items()))
        missing = object()
        want = {k for k in {*old, *new} if old.get(k, missing) is not new.get(k, missing)}
        assert changed_keys(old, new) == want


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


STATES = ("Scheduled", "Bound", "Unscheduled")
MANY = [f"m{i:03d}" for i in range(230)]  # three slices


def _decisions_whole(plan: PlacementPlan) -> dict[str, bytes]:
    """`publish._published` as it was: every document built and emitted whole."""
    clusters = plan.targeted_clusters()
    reasons = {d.cluster: d.reason for d in plan.decisions if d.selected}
    docs = decision_documents("web", plan.name, plan.namespace, clusters, reasons)
    return {path: yaml_bytes(doc) for path, doc in docs}


def _edit_decisions(rng: random.Random, states: dict[str, str], decided: dict[str, Any]) -> None:
    cluster = rng.choice(MANY)
    what = rng.randrange(6)
    if what == 0:
        states[cluster] = rng.choice(STATES)
    elif what == 1:
        states.pop(cluster, None)
    elif what == 2:
        decided[cluster] = (rng.random() < 0.8, rng.choice(["picked", "score 3", "x: y"]))
    elif what == 3:
        decided.pop(cluster, None)
    elif what == 4:  # a reason that cannot be padded: that slice is emitted whole
        decided[cluster] = (True, "one\n\ntwo")
    else:  # a cluster added to the fleet and bound
        states[cluster], decided[cluster] = "Scheduled", (True, "picked")


def _kept(made: dict[Any, Any], item: Any) -> Any:
    """The object made before for an equal one (the scheduler keeps unchanged objects)."""
    return made.setdefault(item, item)


@pytest.mark.parametrize("seed", range(30))
def test_patched_decision_files_equal_whole_documents(seed: int) -> None:
    rng = random.Random(seed)
    states = {c: rng.choice(STATES[:2]) for c in rng.sample(MANY, 200)}
    decided: dict[str, Any] = {c: (True, "picked") for c in states}
    plan = PlacementPlan("web", PlacementState("web"), Cond("Scheduled", "True", "", ""))
    plan.name = "web"
    made: dict[Any, Any] = {}  # unchanged bindings and decisions are the same objects
    for step in range(30):
        for _ in range(rng.randrange(1, 4)):
            _edit_decisions(rng, states, decided)
        bindings = [_kept(made, Binding(c, s, 0)) for c, s in sorted(states.items())]
        if step % 7 == 6:  # a cluster with two bindings: never patched
            bindings.append(Binding(bindings[0].cluster, "Unscheduled", 0))
        plan.state = PlacementState("web", bindings=tuple(bindings))
        plan.decisions = tuple(_kept(made, Decision(c, *decided[c])) for c in sorted(decided))
        if step % 5 == 4:  # a cluster with two decisions: the last one's reason, never patched
            targeted = next(b.cluster for b in bindings if b.state != "Unscheduled")
            plan.decisions += (Decision(targeted, True, f"again {step}"),)
        if step % 11 == 10:
            plan.namespace = plan.namespace + "x"
        publish._ENTRY_TEXTS.next_round()
        assert publish._published("web", plan) == _decisions_whole(plan), step


def test_decision_files_are_patched_not_made_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = PlacementPlan("web", PlacementState("web"), Cond("Scheduled", "True", "", ""))
    plan.state = PlacementState("web", bindings=tuple(Binding(c, "Bound", 0) for c in MANY))
    plan.decisions = tuple(Decision(c, True, "picked") for c in MANY)
    first = publish._published("web", plan)
    monkeypatch.setattr(publish, "_afresh", None)  # a call would fail
    plan.state = PlacementState("web", bindings=(*plan.state.bindings, Binding("n", "Bound", 0)))
    plan.decisions = (*plan.decisions, Decision("n", True, "picked"))
    second = publish._published("web", plan)
    assert second == _decisions_whole(plan) and second != first
    plan.decisions = (*plan.decisions, Decision("o", False, "not picked"))
    assert publish._published("web", plan) is second


def test_decision_files_of_a_placement_that_changed_much_are_made_afresh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan = PlacementPlan("web", PlacementState("web"), Cond("Scheduled", "True", "", ""))
    plan.state = PlacementState("web", bindings=tuple(Binding(c, "Bound", 0) for c in MANY))
    plan.decisions = tuple(Decision(c, True, "picked") for c in MANY)
    publish._published("web", plan)
    made: list[str] = []
    real = publish._afresh

    def afresh(*args: Any) -> Any:
        made.append(args[0])
        return real(*args)

    monkeypatch.setattr(publish, "_afresh", afresh)
    plan.decisions = tuple(Decision(c, True, "picked again") for c in MANY)
    assert publish._published("web", plan) == _decisions_whole(plan)
    assert made == ["web"]


@pytest.mark.parametrize(
    "revision", ["0123456789012345", "abcdef0123456789", "1234567890abcdef", "12345678901234e5"]
)
def test_slices_from_kept_texts_take_any_revision(revision: str) -> None:
    clusters = MANY[:150]
    reasons = {c: "picked" for c in clusters}
    whole = {
        path: yaml_bytes(_revised(doc, revision))
        for path, doc in decision_documents("web", "web", "", clusters, reasons)
    }
    for other in ("fedcba9876543210", revision):  # the second time from the kept texts
        for path, doc, chunk in decision_slices("web", "web", "", clusters):
            got = publish._slice_bytes(_revised(doc, other), chunk, reasons)
            assert (got == whole[path]) == (other == revision), path


def _revised(doc: dict[str, Any], revision: str) -> dict[str, Any]:
    """`doc` with `revision` for its decision revision."""
    annotations = {**doc["metadata"]["annotations"], REVISION_ANNOTATION: revision}
    return {**doc, "metadata": {**doc["metadata"], "annotations": annotations}}


def test_a_slice_text_without_the_revision_token_is_not_kept() -> None:
    assert publish._around_texts({"apiVersion": "v", "metadata": {"name": "x"}}, "z") is None
    token = publish.REVISION_TOKEN
    twice = {"apiVersion": token, "metadata": {"annotations": {"a": token}}}
    assert publish._around_texts(twice, "decisions") is None
    once = {"apiVersion": "v", "kind": "K", "metadata": {"annotations": {"a": token}}}
    assert publish._around_texts(once, "decisions") == (
        "apiVersion: v\n",
        f"kind: K\nmetadata:\n  annotations:\n    a: {token}\n",
    )


NAMES = ["a", "b", "c-1", "yes", "1.5", "on", "zz", "m", "n", "o", "p", "q"]


def _state_binding(rng: random.Random, cluster: str) -> Binding:
    """A binding whose entry groups with others (the same but for the quoted name), or not."""
    kind = rng.randrange(4)
    reason = f'picked "{cluster}"' if kind < 2 else f"picked {kind}"
    # One content a cluster, some shared, some none: a group lists its members' `contents`.
    content = f"sha256:{(kind == 3) * rng.randrange(3):064d}" if rng.random() < 0.9 else ""
    decision = BindingDecision(reason, 0 if kind else None, 0 if kind else None)
    return Binding(cluster, "Bound", 0, 1, decision=decision, content=content)


def _reference_state(ps: PlacementState) -> str:
    """A state file as grouped and emitted whole (PyYAML itself)."""
    rows = [binding_to_yaml(b) for b in ps.bindings]
    keys = [(b.cluster, b.state) for b in ps.bindings]
    if keys != sorted(set(keys)):
        return pyyaml_dump(state.placement_state_doc(ps, grouped={"bindings": rows}))
    singles, groups = group_named(rows, "cluster", "clusters", member=CONTENTS)
    grouped = {"bindings": singles, "bindingGroups": groups} if groups else {"bindings": singles}
    return pyyaml_dump(state.placement_state_doc(ps, grouped=grouped))


@pytest.mark.parametrize("seed", range(60))
def test_patched_state_files_equal_whole_ones(seed: int) -> None:
    rng = random.Random(seed)
    bindings = {c: _state_binding(rng, c) for c in rng.sample(NAMES, 6)}
    for step in range(30):
        for _ in range(rng.randrange(1, 3)):
            cluster = rng.choice(NAMES)
            if rng.random() < 0.4:
                bindings.pop(cluster, None)
            else:
                bindings[cluster] = _state_binding(rng, cluster)
        ordered = tuple(bindings[c] for c in sorted(bindings))
        if step % 9 == 8 and ordered:  # the scheduler's order, or a cluster twice
            ordered = (*ordered[1:], ordered[0]) if step % 2 else (ordered[0], *ordered)
        selected = (("/ConfigMap/x/y", "a.yaml"),) * (step % 3)
        ps = PlacementState("web", generation=step % 4, bindings=ordered, selected=selected)
        state._emitted.clear()
        assert state._state_bytes(ps).decode() == _reference_state(ps), step


def test_an_update_leaves_the_kept_groups_it_started_from_unchanged() -> None:
    rng = random.Random(7)
    bindings = {c: _state_binding(rng, c) for c in NAMES}
    kept = KeptGroups("cluster", "clusters", lambda _row: False, CONTENTS)
    kept = kept.update(bindings, binding_to_yaml)

    def text(groups: KeptGroups) -> str:
        spliced = Spliced()
        singles, parts = groups.parts(spliced)
        return spliced.dump({"bindings": singles, "groups": parts})

    before = text(kept)
    for cluster in NAMES[::2]:
        bindings = {**bindings, cluster: _state_binding(rng, cluster)}
        kept.update({k: v for k, v in bindings.items() if k != "m"}, binding_to_yaml)
        assert text(kept) == before


def test_keys_between_the_grouped_ones_give_the_whole_document() -> None:
    doc: dict[str, Any] = {"a": 1, "b": [{"x": 1}], "c": [2], "d": [{"y": 2}]}
    spliced = Spliced()
    grouped = {
        "b": spliced.part(doc["b"], items_block(doc["b"], {})),
        "d": spliced.part(doc["d"], items_block(doc["d"], {})),
    }
    assert state._keyed_text({**doc, **grouped}, grouped, spliced) == dump_yaml(doc)


def _prior_step(
    rng: random.Random, bindings: dict[str, Binding], rows: dict[str, dict[str, Any]]
) -> None:
    """One cluster's binding or index row changed (rows implied under either header, moved,
    written whole, gone; bindings rebound or gone; an equal row as another object)."""
    cluster = rng.choice(NAMES)
    what = rng.randrange(6)
    if what == 0:
        bindings[cluster] = _binding(cluster, rng.randrange(3))
    elif what == 1:
        bindings.pop(cluster, None)
    elif what in (2, 3) and cluster in bindings:
        header = HEADERS[0] if what == 2 or rng.random() < 0.5 else HEADERS[1]
        rows[cluster] = implied_row("web", header, bindings[cluster]) or {}
    elif what == 4:
        rows.pop(cluster, None)
    elif cluster in rows:
        rows[cluster] = dict(rows[cluster])


@pytest.mark.parametrize("seed", range(60))
def test_patched_prior_index_sections_equal_fresh_ones(seed: int) -> None:
    rng = random.Random(seed)
    bindings = {c: _binding(c, rng.randrange(3)) for c in rng.sample(NAMES, 8)}
    rows = {c: implied_row("web", HEADERS[0], b) or {} for c, b in bindings.items()}
    for step in range(40):
        _prior_step(rng, bindings, rows)
        given = tuple(bindings[c] for c in sorted(bindings))
        pieces: dict[int, list[Any]] = {}
        section, names = priorsection.index_section("web", dict(rows), given, pieces)
        text = priorstate._spliced_part("index", dict(section), pieces, names)
        last = priorsection._CELLS.last("web")
        assert last is not None
        priorsection._CELLS.drop("web")
        fresh, _ = priorsection.index_section("web", dict(rows), given, {})
        priorsection._CELLS.put("web", (), last[1])
        assert section == fresh, step
        assert text == pyyaml_dump({"index": fresh}), step
