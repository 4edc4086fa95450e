"""A source commit that changes no loaded input makes no pass (`reconciler.lastpass`), with
real Git: the hub answers as the pass would (outcome `unchanged`, the same errors) without
running it; an input change, an approval commit, another writer's output or a due rollout
timer runs the pass."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from reconciler.pass_ import STAGES
from tests.helpers.fleetfiles import write_tree
from tests.helpers.gitrepo import commit_all, git
from tests.helpers.hubs import Clock
from tests.integration.test_hub_faults import OUTPUT, World, rev
from tests.integration.test_rollback_hub import started_waiting

BROKEN = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: broken
spec:
  policy:
    placementType: Sometimes
"""


def steps(report: object) -> list[str]:
    return [step for step, _ in getattr(report, "timings", ())]


def test_a_readme_commit_makes_no_pass_and_reports_what_the_pass_would(tmp_path: Path) -> None:
    world, clock = World.create(tmp_path), Clock()
    world.commit({"placements/broken.yaml": BROKEN}, "a broken placement")
    hub = world.hub("hub", clock)
    first = hub.run_once()
    assert first.outcome == "committed" and first.errors
    world.commit({"README.md": "# the fleet, documented\n"}, "docs")
    skipped = hub.run_once()
    assert skipped.outcome == "unchanged" and skipped.message == "no pass input changed"
    assert "pass" not in steps(skipped)
    assert skipped.errors == first.errors and skipped.output == first.output
    assert skipped.stage_timings == skipped.stage_cpu_timings == ()  # no pass: no stages
    fresh = world.hub("fresh", clock).run_once()  # a new hub runs the pass on the same inputs
    assert "pass" in steps(fresh)
    assert (fresh.outcome, fresh.errors, fresh.output) == ("unchanged", first.errors, first.output)
    world.edit(1)
    edited = hub.run_once()
    assert edited.outcome == "committed" and "pass" in steps(edited)
    cpu = dict(edited.cpu_timings)  # the same steps, each with its CPU seconds
    assert list(cpu) == steps(edited) and all(seconds >= 0 for seconds in cpu.values())
    assert steps(edited)[:4] == ["fetch", "load", "prior", "pass"]  # the prior read apart
    stages = dict(edited.stage_timings)  # the pass step, stage by stage
    assert list(stages) == [name for name, _ in edited.stage_cpu_timings] == list(STAGES)
    assert sum(stages.values()) <= dict(edited.timings)["pass"]


def test_an_empty_commit_with_a_trailer_still_runs_the_pass(tmp_path: Path) -> None:
    world, clock = World.create(tmp_path), Clock()
    hub = world.hub("hub", clock)
    assert hub.run_once().outcome == "committed"
    world.commit({"placements/web.yaml": None}, "delete web")
    assert hub.run_once().outcome == "committed"  # held: the deletion needs an approval
    git(world.work, "commit", "-q", "--allow-empty", "-m", "go\n\nGitfleet-Allow-Deletion: web")
    git(world.work, "push", "-q", str(world.remote), "HEAD:refs/heads/main")
    released = hub.run_once()
    assert released.outcome == "committed" and "pass" in steps(released)


def test_another_writers_output_runs_the_pass(tmp_path: Path) -> None:
    world, clock = World.create(tmp_path), Clock()
    hub = world.hub("hub", clock)
    rendered = hub.run_once()
    assert rendered.outcome == "committed"
    hand = tmp_path / "hand"  # someone edits the output branch by hand
    git(tmp_path, "clone", "-q", "-b", OUTPUT, str(world.remote), str(hand))
    (hand / "EDITED.md").write_text("by hand\n")
    git(hand, "add", "-A")
    git(hand, "-c", "user.name=h", "-c", "user.email=h@h.invalid", "commit", "-qm", "by hand")
    git(hand, "push", "-q", "origin", OUTPUT)
    world.commit({"README.md": "# docs\n"}, "docs")
    again = hub.run_once()
    assert again.outcome == "committed" and "pass" in steps(again)
    assert again.output == rev(world.remote, OUTPUT) != rendered.output
    assert "EDITED.md" not in git(world.remote, "ls-tree", "--name-only", OUTPUT)


def test_a_due_timer_runs_the_pass_with_a_readme_commit(tmp_path: Path) -> None:
    _remote, work, clock, hub = started_waiting(tmp_path)
    due = hub.next_wakeup
    assert due is not None
    write_tree(work, {"README.md": "# waiting\n"})
    commit_all(work, "docs", push_to="origin")
    clock.now = due - timedelta(seconds=1)
    assert hub.run_once().message == "no pass input changed"
    write_tree(work, {"README.md": "# still waiting\n"})
    commit_all(work, "docs", push_to="origin")
    clock.now = due
    report = hub.run_once()
    assert report.outcome == "committed" and "pass" in steps(report)
