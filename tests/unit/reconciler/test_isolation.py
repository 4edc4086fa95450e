"""Any exception inside one placement's work is that placement's error: inject a failure into
every per-placement stage for placement `web` and check that the pass still completes, the other
placement renders exactly as before, `web` keeps its previous output and its status names its
file; and that errors with and without a line sort together."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gitfleet.api.errors import FleetError
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo, publish, rollstage, statusdocs
from reconciler import placement as placement_mod
from reconciler.override.index import OverrideIndex
from reconciler.pass_ import PassResult, reconcile
from reconciler.placement import PlacementPlan
from reconciler.state import State
from renderers import load_fleet

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)


class Injected(RuntimeError):
    """The injected fault (its text must never reach the output: it could hold a value)."""


def _web_selection(selection: Any) -> bool:
    return any(r.kind == "Namespace" and r.name == "web" for r in selection.resources)


def _raise_when(original: Callable[..., Any], hit: Callable[..., bool]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if hit(*args, **kwargs):
            raise Injected("secret-value-hunter2")
        return original(*args, **kwargs)

    return wrapper


# (stage, module, attribute, predicate over the call's arguments)
STAGES: list[tuple[str, Any, str, Callable[..., bool]]] = [
    ("select", placement_mod, "select_reading", lambda p, *_: p.metadata.name == "web"),
    ("schedule", placement_mod, "schedule_placement", lambda key, *_: key == "web"),
    ("manifests", placement_mod, "default_manifests", lambda s, *_: _web_selection(s)),
    (
        "overrides",
        OverrideIndex,
        "for_placement",
        lambda _self, p, *_: p.metadata.name == "web",
    ),
    ("rollout", rollstage, "observe", lambda plan, *_: plan.key == "web"),
    ("layout", PlacementPlan, "manifests_for", lambda plan, *_: plan.key == "web"),
    ("status", statusdocs, "placement_status_doc", lambda plan, *_: plan.key == "web"),
    ("decisions", publish, "shard_documents", lambda key, *_: key == "web"),
]


def _render(prior: State) -> PassResult:
    return reconcile(load_fleet(WorkdirTree(ROOT / "examples/quickstart")), prior, None, NOW)


def _of(files: dict[str, bytes], key: str) -> dict[str, bytes]:
    return {
        p: b
        for p, b in files.items()
        if f"/{key}/" in p or p.startswith(f"decisions/{key}-") or p.endswith(f"/{key}.yaml")
    }


@pytest.mark.parametrize(("stage", "owner", "attr", "hit"), STAGES, ids=[s[0] for s in STAGES])
def test_a_failure_in_any_stage_fails_only_its_placement(
    monkeypatch: pytest.MonkeyPatch, stage: str, owner: Any, attr: str, hit: Callable[..., bool]
) -> None:
    good = _render(State())
    assert not good.errors
    placememo.forget()  # every stage runs again (none reuses what the good pass made)
    monkeypatch.setattr(owner, attr, _raise_when(getattr(owner, attr), hit))
    bad = _render(good.state)
    # The other placement renders exactly as before.
    assert _of(bad.files, "fleet-viewer") == _of(good.files, "fleet-viewer")
    # web keeps its previous output: every manifest file, nothing pruned.
    web_manifests = {p: b for p, b in _of(good.files, "web").items() if p.startswith("clusters/")}
    assert web_manifests and all(bad.files.get(p) == b for p, b in web_manifests.items())
    for cluster in ("eu-1", "eu-2", "us-1"):
        assert b"key: web" in bad.files[f"clusters/{cluster}/index.yaml"]
    # One error naming the file and the stage, never the exception's text.
    internal = [e for e in bad.errors if "internal error" in e.message]
    assert [e.file for e in internal] == ["placements/web.yaml"], bad.errors
    assert "Injected" in internal[0].message
    status = bad.files["status/placements/web.yaml"].decode()
    assert "InternalError" in status and "placements/web.yaml" in status
    every_byte = b"".join(bad.files.values()) + str(bad.errors).encode()
    assert b"hunter2" not in every_byte


def test_errors_with_and_without_line_are_totally_ordered() -> None:
    errors = [
        FleetError("placements/web.yaml", 3, "spec", "b"),
        FleetError("placements/web.yaml", None, "", "a"),
        FleetError("placements/web.yaml", 3, "spec", "b", doc=1),
        FleetError("placements/web.yaml", 3, "spec", "b", doc=None),
        FleetError("", None, "", "z"),
    ]
    ordered = sorted(errors)
    assert ordered[0] == FleetError("", None, "", "z")
    assert ordered[1].line is None
    assert [e.doc for e in ordered[2:]] == [None, None, 1]
    assert sorted(reversed(errors)) == ordered


def test_a_typo_in_a_placement_that_rendered_before_is_reported(tmp_path: Path) -> None:
    """The loader's located error and the pass's unlocated "keeps its previous output" error
    name the same file: sorting them must not crash the pass."""
    fleet = tmp_path / "fleet"
    shutil.copytree(ROOT / "examples/quickstart", fleet)
    good = reconcile(load_fleet(WorkdirTree(fleet)), State(), None, NOW)
    web = fleet / "placements/web.yaml"
    web.write_text(web.read_text().replace("  resourceSelectors:", "  resourceSelectors: [\n"))
    bad = reconcile(load_fleet(WorkdirTree(fleet)), good.state, None, NOW)
    about_web = [e for e in bad.errors if e.file == "placements/web.yaml"]
    assert {e.line is None for e in about_web} == {True, False}, bad.errors
    assert bad.files["clusters/eu-1/index.yaml"] == good.files["clusters/eu-1/index.yaml"]


def test_a_failing_replica_distribution_fails_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from reconciler import distributions

    fleet = ROOT / "examples/replica-distribution"
    good = reconcile(load_fleet(WorkdirTree(fleet)), State(), None, NOW)
    assert not good.errors, good.errors
    monkeypatch.setattr(
        distributions, "distribute", _raise_when(distributions.distribute, lambda *_: True)
    )
    bad = reconcile(load_fleet(WorkdirTree(fleet)), good.state, None, NOW)
    internal = [e for e in bad.errors if "internal error while" in e.message]
    # the distribution is reported on its file; the placement carrying its workload is held
    assert {e.file for e in internal} == {"distributions/web.yaml", "placements/shop.yaml"}
    manifests = {p: d for p, d in good.files.items() if p.startswith("clusters/")}
    assert manifests and all(bad.files.get(p) == d for p, d in manifests.items())
