"""End-to-end tests of the `gitfleet` command, run as a real subprocess in a tmp directory.

Covers `init`, `validate` (text and JSON), `render` (byte-identical re-renders, snapshot index
carry-over, removal of files no longer produced, `--fresh`, the output-directory marker), `--ref`
against a real git repository, `--cluster-status`, and usage errors. `run_cli` asserts on every
run that no Python traceback is printed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.integration.fleet_helpers import (
    GOLDEN,
    NOW,
    QUICKSTART,
    changed_paths,
    commit_fleet,
    git,
    read_tree,
    recorded_commits,
    run_cli,
    snapshot_indexes,
    without_commits,
)

LATER = "2026-11-22T08:30:00Z"
MARKER = ".gitfleet-output"


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    """A private copy of the quickstart fleet."""
    target = tmp_path / "fleet"
    shutil.copytree(QUICKSTART, target)
    return target


def render(cwd: Path, fleet: Path, out: Path, *extra: str | Path) -> str:
    """Render successfully and return the `wrote ...` summary line."""
    result = run_cli(cwd, "render", fleet, "--out", out, *extra)
    assert result.code == 0, result.output
    assert result.stderr == ""
    return result.stdout.splitlines()[0]


# --- init ------------------------------------------------------------------------------------


def test_init_creates_a_fleet_that_validates_and_renders(tmp_path: Path) -> None:
    created = run_cli(tmp_path, "init", "myfleet")
    assert created.code == 0, created.output
    assert "created a fleet repository in myfleet" in created.stdout
    assert (tmp_path / "myfleet/fleet.yaml").is_file()
    checked = run_cli(tmp_path, "validate", "myfleet")
    assert checked.code == 0, checked.output
    assert checked.stdout.startswith("valid: ")
    rendered = run_cli(tmp_path, "render", "myfleet", "--out", "out", "--now", NOW)
    assert rendered.code == 0, rendered.output
    objects = sorted(p for p in read_tree(tmp_path / "out") if p.count("/") == 3)
    assert objects and all(p.startswith("clusters/") for p in objects)


@pytest.mark.parametrize(
    "occupant",
    [
        pytest.param("dir", id="non-empty-directory"),
        pytest.param("file", id="existing-file"),
    ],
)
def test_init_refuses_an_occupied_path(tmp_path: Path, occupant: str) -> None:
    target = tmp_path / "taken"
    if occupant == "dir":
        target.mkdir()
        (target / "notes.txt").write_text("mine\n")
    else:
        target.write_text("mine\n")
    before = read_tree(tmp_path)
    result = run_cli(tmp_path, "init", "taken")
    assert result.code == 1
    assert "taken" in result.stderr and ("not empty" in result.stderr or "exists" in result.stderr)
    assert read_tree(tmp_path) == before


# --- validate --------------------------------------------------------------------------------


def test_validate_quickstart_prints_a_summary(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "validate", QUICKSTART, "--now", NOW)
    assert result.code == 0, result.output
    assert result.stderr == ""
    assert result.stdout == (
        "valid: 3 cluster(s), 2 placement(s), 5 resource(s), 0 error(s), 0 warning(s)\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_validate_json_is_parseable(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "validate", QUICKSTART, "--now", NOW, "--output", "json")
    assert result.code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["errors"] == []
    assert (summary["clusters"], summary["placements"], summary["resources"]) == (3, 2, 5)


def test_validate_json_lists_every_error_of_a_broken_fleet(tmp_path: Path) -> None:
    case = GOLDEN / "bad-input"
    result = run_cli(tmp_path, "validate", case / "fleet", "--now", NOW, "--output", "json")
    assert result.code == 1
    expected = (case / "expected/errors.txt").read_text().splitlines()
    assert json.loads(result.stdout)["errors"] == expected


# --- render: re-renders, snapshot indexes, removals ------------------------------------------


def test_render_twice_is_byte_identical(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first_line = render(tmp_path, QUICKSTART, out, "--now", NOW)
    first = read_tree(out)
    assert first_line == f"wrote {out}: 36 changed, 0 unchanged, 0 removed"
    second_line = render(tmp_path, QUICKSTART, out, "--now", NOW)
    assert second_line == f"wrote {out}: 0 changed, 36 unchanged, 0 removed"
    assert read_tree(out) == first
    later_line = render(tmp_path, QUICKSTART, out, "--now", LATER)
    assert later_line == f"wrote {out}: 0 changed, 36 unchanged, 0 removed"
    assert read_tree(out) == first, "condition times must be kept when nothing changed"
    assert LATER[:10] not in "".join(d.decode() for d in read_tree(out).values())


def test_editing_a_resource_makes_snapshot_1_and_fresh_resets_it(
    tmp_path: Path, fleet: Path
) -> None:
    out = tmp_path / "out"
    render(tmp_path, fleet, out, "--now", NOW)
    before = read_tree(out)
    assert set(snapshot_indexes(out, "web").values()) == {0, "0"}
    cm = fleet / "resources/web/configmap.yaml"
    cm.write_text(cm.read_text().replace("Hello from gitfleet", "Hello again"))
    render(tmp_path, fleet, out, "--now", LATER)
    after = read_tree(out)
    # A dry run assumes each cluster applied what it was given; the default RollingUpdate
    # (maxUnavailable 25% of 3 = 1) then moves one cluster a pass, in binding order.
    assert snapshot_indexes(out, "web") == {
        "state": 1,
        "status": "1",
        "eu-1": 1,
        "eu-2": 0,
        "us-1": 0,
    }
    assert snapshot_indexes(out, "fleet-viewer")["state"] == 0
    expected = {
        "clusters/eu-1/web/configmap_web_frontend-content.yaml",
        "clusters/eu-1/index.yaml",
        "state/placements/web.yaml",
        "state/prior/web.yaml",
        "status/placements/web.yaml",
    }
    assert changed_paths(before, after) == expected
    assert b"Hello again" in after["clusters/eu-1/web/configmap_web_frontend-content.yaml"]
    assert (
        after["clusters/eu-2/web/configmap_web_frontend-content.yaml"]
        == (before["clusters/eu-2/web/configmap_web_frontend-content.yaml"])
    )
    render(tmp_path, fleet, out, "--now", LATER)
    render(tmp_path, fleet, out, "--now", LATER)
    assert set(snapshot_indexes(out, "web").values()) == {1, "1"}
    render(tmp_path, fleet, out, "--now", LATER, "--fresh")
    assert set(snapshot_indexes(out, "web").values()) == {0, "0"}
    state = yaml.safe_load((out / "state/placements/web.yaml").read_text())
    assert [s["index"] for s in state["resourceSnapshots"]] == [0]


def test_deleting_a_placement_removes_its_files(tmp_path: Path, fleet: Path) -> None:
    out = tmp_path / "out"
    render(tmp_path, fleet, out, "--now", NOW)
    assert (out / "clusters/eu-1/fleet-viewer").is_dir()
    (fleet / "placements/fleet-viewer.yaml").unlink()
    held = run_cli(tmp_path, "render", fleet, "--out", out, "--now", NOW)
    assert held.code == 0, held.output
    assert (
        "DELETION HELD: placement fleet-viewer: deleting the placement would remove" in held.stdout
    )
    assert (out / "clusters/eu-1/fleet-viewer").is_dir()  # the guard keeps its output
    (fleet / "approvals").mkdir(exist_ok=True)
    (fleet / "approvals/drop-viewer.yaml").write_text(
        "apiVersion: gitfleet.io/v1alpha1\nkind: DeletionApproval\n"
        "metadata: {name: drop-viewer}\nspec: {placements: [fleet-viewer]}\n"
    )
    line = render(tmp_path, fleet, out, "--now", NOW)
    # 4 object files, 2 placement indexes, the decision, its state/prior record
    assert line.endswith(", 8 removed")
    remaining = read_tree(out)
    assert not [p for p in remaining if "fleet-viewer" in p]
    assert not list(out.glob("clusters/*/fleet-viewer"))
    assert (out / "clusters/us-1/web/namespace_web.yaml").is_file()
    assert "fleet-viewer" not in remaining[MARKER].decode()


def test_render_refuses_a_directory_it_did_not_create_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.tex").write_text("do not touch\n")
    result = run_cli(tmp_path, "render", QUICKSTART, "--out", out, "--now", NOW, traceback_ok=True)
    assert result.code != 0
    assert read_tree(out) == {"thesis.tex": b"do not touch\n"}


def test_render_refusal_is_a_clear_message(tmp_path: Path) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.tex").write_text("do not touch\n")
    result = run_cli(tmp_path, "render", QUICKSTART, "--out", out, "--now", NOW)
    assert result.code == 1
    assert "refusing to write into" in result.stderr and MARKER in result.stderr


def test_render_into_a_folder_of_the_fleet_can_be_repeated(fleet: Path) -> None:
    render(fleet, Path("."), Path("out"), "--now", NOW)
    first = read_tree(fleet / "out")
    result = run_cli(fleet, "render", "--out", "out", "--now", NOW)
    assert result.code == 0, result.output
    assert "out/" not in result.stderr
    assert read_tree(fleet / "out") == first


# --- --ref -----------------------------------------------------------------------------------


def test_render_from_a_ref_equals_the_working_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    head = commit_fleet(QUICKSTART, repo)
    render(tmp_path, repo, tmp_path / "from-ref", "--ref", "HEAD", "--now", NOW)
    render(tmp_path, repo, tmp_path / "from-disk", "--now", NOW)
    from_ref, from_disk = read_tree(tmp_path / "from-ref"), read_tree(tmp_path / "from-disk")
    assert without_commits(from_ref) == without_commits(from_disk)
    assert recorded_commits(from_ref) == {head}


@pytest.mark.parametrize(
    ("command", "ref", "fragment"),
    [
        pytest.param("validate", "-x", "option-like", id="option-like"),
        pytest.param("render", "does-not-exist", "does-not-exist", id="unknown"),
    ],
)
def test_a_bad_ref_is_a_clear_error(tmp_path: Path, command: str, ref: str, fragment: str) -> None:
    repo = tmp_path / "repo"
    commit_fleet(QUICKSTART, repo)
    args = ["--out", "out"] if command == "render" else []
    result = run_cli(tmp_path, command, repo, f"--ref={ref}", *args, "--now", NOW)
    assert result.code in (1, 2)
    assert fragment in result.stderr
    assert not (tmp_path / "out").exists()


def test_ref_reads_the_fleet_subdirectory(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("a repository with the fleet in a folder\n")
    commit_fleet(QUICKSTART, repo / "fleet")
    shutil.rmtree(repo / "fleet/.git")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fleet in a folder")
    render(tmp_path, repo / "fleet", tmp_path / "from-ref", "--ref", "HEAD", "--now", NOW)
    render(tmp_path, repo / "fleet", tmp_path / "from-disk", "--now", NOW)
    from_ref, from_disk = read_tree(tmp_path / "from-ref"), read_tree(tmp_path / "from-disk")
    assert without_commits(from_ref) == without_commits(from_disk)


# --- --cluster-status ------------------------------------------------------------------------

ELIGIBILITY = GOLDEN / "eligibility-status"


def cluster_dirs(out: Path) -> list[str]:
    """Clusters that received objects (every declared cluster has an index.yaml)."""
    return sorted(
        p.name for p in (out / "clusters").iterdir() if any(c.is_dir() for c in p.iterdir())
    )


def test_cluster_status_makes_clusters_without_reports_ineligible(tmp_path: Path) -> None:
    out = tmp_path / "out"
    status = ELIGIBILITY / "status"
    render(tmp_path, ELIGIBILITY / "fleet", out, "--cluster-status", status, "--now", NOW)
    assert cluster_dirs(out) == ["healthy"]
    noagent = yaml.safe_load((out / "status/clusters/noagent.yaml").read_text())
    eligible = [c for c in noagent["status"]["conditions"] if c["type"] == "gitfleet.io/Eligible"]
    assert eligible[0]["status"] == "False"
    assert "not connected" in eligible[0]["message"]
    render(tmp_path, ELIGIBILITY / "fleet", tmp_path / "assumed", "--now", NOW)
    assert cluster_dirs(tmp_path / "assumed") == ["healthy", "noagent", "nojoin", "stale"]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"apiVersion: v1\nkind: MemberCluster\nmetadata: [\n", "YAML syntax error"),
        (
            b"apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n"
            b"metadata:\n  name: stale\nstatus:\n  agentStatus: 5\n",
            "status.agentStatus",
        ),
    ],
    ids=["syntax", "wrong-type"],
)
def test_a_malformed_status_file_is_an_error_naming_it(
    tmp_path: Path, content: bytes, fragment: str
) -> None:
    status = tmp_path / "status"
    shutil.copytree(ELIGIBILITY / "status", status)
    (status / "stale.yaml").write_bytes(content)
    out = tmp_path / "out"
    result = run_cli(
        tmp_path,
        "render",
        ELIGIBILITY / "fleet",
        "--out",
        out,
        "--cluster-status",
        status,
        "--now",
        NOW,
    )
    assert result.code == 1
    lines = [ln for ln in result.stderr.splitlines() if f"{status}/stale.yaml" in ln]
    assert len(lines) == 1 and fragment in lines[0], result.stderr
    assert "healthy" in cluster_dirs(out)


def test_a_missing_status_dir_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli(
        tmp_path, "validate", QUICKSTART, "--cluster-status", tmp_path / "nope", "--now", NOW
    )
    assert result.code == 2
    assert "--cluster-status" in result.stderr and "nope" in result.stderr


# --- usage errors ----------------------------------------------------------------------------


def test_now_that_is_not_a_time_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "render", QUICKSTART, "--out", "out", "--now", "not-a-time")
    assert result.code == 2
    assert "--now" in result.stderr and "not-a-time" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_missing_fleet_dir_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "validate", tmp_path / "nowhere")
    assert result.code == 2
    assert "nowhere" in result.stderr
