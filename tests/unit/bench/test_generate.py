"""The benchmark fleet generator: byte-identical output for the same arguments, a policy mix as
documented, and fleets that load with no error and pass without conflicts (the only error allowed
is PickN's "not supported yet" from a gitfleet without the PickN scheduler)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchmarks.generate import FleetSize, build_fleet, check_size, main, write_fleet
from gitfleet.repo.workdir import WorkdirTree
from reconciler.pass_ import reconcile
from reconciler.state import State
from renderers import load_fleet

TINY = FleetSize(clusters=5, placements=4, resources=12, overrides=3)
SMALL = FleetSize(clusters=30, placements=12, resources=40, overrides=8)
NOW = datetime(2026, 1, 1, tzinfo=UTC)
PICKN = "placement type PickN is not supported by this gitfleet version yet"


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("args", "seed"),
    [
        (["--clusters", "5", "--placements", "4", "--resources", "12", "--overrides", "3"], 1),
        (["--clusters", "30", "--placements", "12", "--resources", "40", "--overrides", "8"], 7),
    ],
)
def test_same_arguments_give_byte_identical_trees(
    tmp_path: Path, args: list[str], seed: int
) -> None:
    for name in ("a", "b"):
        assert main([*args, "--seed", str(seed), "--out", str(tmp_path / name)]) == 0
    first, second = tree_bytes(tmp_path / "a"), tree_bytes(tmp_path / "b")
    assert len(first) > 10
    assert first == second


@pytest.mark.parametrize(("size", "seeds"), [(TINY, (1, 2)), (SMALL, (3, 4))])
def test_other_seed_gives_other_fleet(size: FleetSize, seeds: tuple[int, int]) -> None:
    assert build_fleet(size, seeds[0]).files != build_fleet(size, seeds[1]).files


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        (TINY, {"affinity": 1, "fixed": 1, "pickn": 1, "platform": 1}),
        (SMALL, {"affinity": 8, "fixed": 1, "pickn": 2, "platform": 1}),
        (
            FleetSize(clusters=10, placements=200, resources=400, overrides=0),
            {"affinity": 136, "fixed": 20, "pickn": 40, "platform": 4},
        ),
        (FleetSize(clusters=3, placements=1, resources=1, overrides=0), {"platform": 1}),
    ],
)
def test_policy_mix(size: FleetSize, expected: dict[str, int]) -> None:
    fleet = build_fleet(size, 1)
    assert fleet.policy_counts() == expected
    resources = [f for f in fleet.files if f.startswith("resources/")]
    assert len(resources) == size.resources
    assert len([f for f in fleet.files if f.startswith("overrides/")]) == size.overrides


@pytest.mark.parametrize(("size", "seed"), [(TINY, 1), (FleetSize(12, 8, 24, 6), 5)])
def test_fleet_loads_and_passes_without_conflicts(
    tmp_path: Path, size: FleetSize, seed: int
) -> None:
    fleet = build_fleet(size, seed)
    write_fleet(fleet, tmp_path / "fleet")
    snapshot = load_fleet(WorkdirTree(tmp_path / "fleet"))
    assert [str(e) for e in snapshot.errors] == []
    assert len(snapshot.clusters) == size.clusters
    assert len(snapshot.placements) == size.placements
    assert len(snapshot.resources) == size.resources
    overrides = len(snapshot.cluster_overrides) + len(snapshot.resource_overrides)
    assert overrides == size.overrides
    result = reconcile(snapshot, State(), None, NOW)
    # PickN is valid KubeFleet YAML; a gitfleet without the PickN scheduler reports it alone.
    assert [str(e) for e in result.errors if PICKN not in e.message] == []
    platform = [ns.name for ns in fleet.namespaces if ns.policy == "platform"]
    everywhere = {c.name for c in fleet.clusters}
    for name in platform:
        got = {
            f.split("/")[1]
            for f in result.files
            if f.startswith("clusters/") and f.split("/")[2] == name
        }
        assert got == everywhere


@pytest.mark.parametrize(
    ("size", "message"),
    [
        (FleetSize(clusters=2, placements=1, resources=1, overrides=0), "at least 3 clusters"),
        (FleetSize(clusters=5, placements=0, resources=1, overrides=0), "at least 3 clusters"),
        (FleetSize(clusters=5, placements=4, resources=3, overrides=0), "one resource"),
        (FleetSize(clusters=5, placements=4, resources=8, overrides=-1), "negative"),
        (FleetSize(clusters=100000, placements=4, resources=8, overrides=0), "99999"),
    ],
)
def test_check_size_rejects(size: FleetSize, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_size(size)


@pytest.mark.parametrize("overrides", [20, 50])
def test_too_many_overrides_for_the_resources(overrides: int) -> None:
    size = FleetSize(clusters=5, placements=4, resources=12, overrides=overrides)
    with pytest.raises(ValueError, match="need more resources"):
        build_fleet(size, 1)


@pytest.mark.parametrize("existing", ["stale.yaml", "clusters/old.yaml"])
def test_write_refuses_a_non_empty_directory(tmp_path: Path, existing: str) -> None:
    (tmp_path / existing).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / existing).write_text("x: 1\n")
    with pytest.raises(ValueError, match="not an empty directory"):
        write_fleet(build_fleet(TINY, 1), tmp_path)
    assert (
        main(
            [
                "--clusters",
                "5",
                "--placements",
                "4",
                "--resources",
                "12",
                "--overrides",
                "3",
                "--out",
                str(tmp_path),
            ]
        )
        == 2
    )
