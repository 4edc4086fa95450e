"""The warm pure-pass benchmark on a small fleet: every hub scenario is measured on one chain of
passes; a pass without a source change writes no new bytes and every edit changes some; with
`--stages` each row has every stage of the pass (`PassResult.stage_cpu_timings`); the fleet is
loaded as the hub loads it, and a trial starts from a settled chain."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import bench_pass
from benchmarks.generate import FleetSize, GeneratedFleet, build_fleet, write_fleet
from benchmarks.hub_scenarios import scenarios
from reconciler.pass_ import STAGES

SMALL = ["--clusters", "12", "--placements", "10", "--resources", "40", "--overrides", "6"]


def test_every_scenario_is_measured_and_edits_change_files(tmp_path: Path) -> None:
    out = tmp_path / "pass.json"
    code = bench_pass.main([*SMALL, "--trials", "2", "--stages", "--json", str(out)])
    assert code == 0
    rows = {r["scenario"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["no-op"]["changed_median"] == 0
    assert rows["unrelated source commit"]["changed_median"] == 0
    for name in ("edit one resource", "edit one override", "add a cluster", "remove a cluster"):
        assert rows[name]["changed_median"] > 0, name
    for row in rows.values():
        assert row["trials"] == 2 and 0 < row["cpu_min"] <= row["cpu_median"] <= row["cpu_max"]
        assert set(row["stages"]) == set(STAGES)


def test_only_runs_the_named_scenarios(tmp_path: Path) -> None:
    out = tmp_path / "pass.json"
    bench_pass.main(
        [*SMALL, "--trials", "1", "--only", "no-op,edit one resource", "--json", str(out)]
    )
    rows = [r["scenario"] for r in json.loads(out.read_text())["rows"]]
    assert rows == ["no-op", "edit one resource"]


def _chain(tmp_path: Path) -> tuple[bench_pass.Chain, Path, GeneratedFleet]:
    made = build_fleet(FleetSize(clusters=12, placements=10, resources=40, overrides=6), 1)
    root = tmp_path / "fleet"
    write_fleet(made, root)
    return bench_pass.Chain(root, stages=False), root, made


def test_the_fleet_is_loaded_as_the_hub_loads_it(tmp_path: Path) -> None:
    """After an edit of one resource the loader patches the last snapshot: the placements,
    whose files did not change, are the very objects the last pass got (the hub's loader does
    the same; a fresh `load_fleet` gives new ones, and the pass's identity checks miss)."""
    chain, root, made = _chain(tmp_path)
    chain.step()
    before = chain.loader.load(bench_pass.BlobTree(root))
    edit = dict(scenarios(made))["edit one resource"]
    assert edit is not None
    edit(root, 0)
    after = chain.loader.load(bench_pass.BlobTree(root))
    assert chain.loader.mode == "patch"
    assert after.placements and after.placements.keys() == before.placements.keys()
    assert all(after.placements[k] is before.placements[k] for k in before.placements)
    assert after.resources != before.resources  # the edited file was read again


def test_settle_runs_until_a_pass_changes_nothing(tmp_path: Path) -> None:
    chain, root, made = _chain(tmp_path)
    chain.settle()
    edit = dict(scenarios(made))["edit fleet-wide resource"]
    assert edit is not None
    edit(root, 0)
    assert chain.step()[1] > 0
    assert chain.settle() >= 1
    assert chain.step()[1] == 0
