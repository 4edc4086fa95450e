"""The warm pure-pass benchmark on a small fleet: every hub scenario is measured on one chain of
passes; a pass without a source change writes no new bytes and every edit changes some; with
`--stages` each row has every stage of the pass (`PassResult.stage_cpu_timings`)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import bench_pass
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
