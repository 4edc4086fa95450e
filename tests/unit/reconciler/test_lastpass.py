"""`reconciler.lastpass`: two loads of a source are the same pass input up to their commit id,
sealed Secret values and the key that seals them included."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gitfleet.load.agecrypt import generate_identity, read_key
from gitfleet.load.model import FleetSnapshot
from gitfleet.load.sealedvalues import SealedValues
from gitfleet.repo.workdir import WorkdirTree
from reconciler.lastpass import LastPass, same_snapshot
from renderers import load_fleet
from tests.helpers.fleetfiles import format_cluster, format_placement, format_settings, write_tree

SECRET = {"apiVersion": "v1", "kind": "Secret", "stringData": {"token": "okapi-5532"}}


def snapshot(tmp_path: Path) -> FleetSnapshot:
    root = tmp_path / "fleet"
    write_tree(
        root,
        {
            "clusters/c1.yaml": format_cluster("c1", "prod"),
            "placements/app.yaml": format_placement("app", "RollingUpdate"),
            "resources/app.yaml": format_settings("app", "version", "v1"),
        },
    )
    return load_fleet(WorkdirTree(root))


def sealed(tmp_path: Path, name: str, values: list[str]) -> SealedValues:
    path = tmp_path / f"{name}.key"
    if not path.exists():
        path.write_text(generate_identity()[0] + "\n")
    store = SealedValues(read_key(path))  # read twice: equal keys, distinct objects
    for value in values:
        store.seal({**SECRET, "stringData": {"token": value}})
    return store


def test_only_the_commit_id_may_differ(tmp_path: Path) -> None:
    one = snapshot(tmp_path)
    assert same_snapshot(one, replace(one, commit="b" * 40))
    assert same_snapshot(one, snapshot(tmp_path))  # another load of the same files
    assert not same_snapshot(one, replace(one, allowed_deletions=frozenset({"app"})))
    assert not same_snapshot(one, replace(one, resources=one.resources[:-1]))
    assert not same_snapshot(one, replace(one, file_commits={"approvals/a.yaml": None}))


def test_sealed_values_compare_by_key_and_values(tmp_path: Path) -> None:
    one = snapshot(tmp_path)
    a = replace(one, sealed=sealed(tmp_path, "k", ["v1"]))
    assert same_snapshot(a, replace(one, sealed=sealed(tmp_path, "k", ["v1"])))
    assert not same_snapshot(a, replace(one, sealed=sealed(tmp_path, "k", ["v2"])))
    assert not same_snapshot(a, replace(one, sealed=sealed(tmp_path, "other", ["v1"])))
    assert not same_snapshot(a, one)


def test_a_pass_repeats_only_on_the_same_reports_and_output(tmp_path: Path) -> None:
    one = snapshot(tmp_path)
    last = LastPass(one, "digest", "out1", ())
    assert last.repeated_by(replace(one, commit="c" * 40), "digest", "out1")
    assert not last.repeated_by(one, "other", "out1")
    assert not last.repeated_by(one, "digest", "out2")
    assert not last.repeated_by(one, "digest", None)
