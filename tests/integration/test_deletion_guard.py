"""The mass-deletion guard through the hub loop and `gitfleet plan`, with real Git.

A commit deleting every placement is held (the output keeps every file, each placement reports
DeletionHeld, the output commit names them in `Gitfleet-Deletion-Held` trailers); a later commit
carrying `Gitfleet-Allow-Deletion: <placement>` releases that placement only; a DeletionApproval
releases the other, and approves only the change that added it. `gitfleet plan` puts the held
deletion at the top of its markdown.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.helpers.gitrepo import git
from tests.helpers.hubs import Clock
from tests.integration.fleet_helpers import run_cli
from tests.integration.test_hub_faults import OUTPUT, World, format_placement_on

APPROVAL = """apiVersion: gitfleet.io/v1alpha1
kind: DeletionApproval
metadata:
  name: drop-tools
spec:
  placements: [tools]
"""


def listing(world: World) -> set[str]:
    return set(git(world.remote, "ls-tree", "-r", "--name-only", OUTPUT).splitlines())


def show(world: World, path: str) -> str:
    return git(world.remote, "show", f"{OUTPUT}:{path}")


def held(world: World, key: str) -> str | None:
    doc = yaml.safe_load(show(world, f"status/placements/{key}.yaml"))
    found = [c for c in doc["status"]["conditions"] if c["type"] == "DeletionHeld"]
    return str(found[0]["message"]) if found else None


def trailers(world: World) -> str:
    return git(world.remote, "log", "-1", "--format=%(trailers)", OUTPUT)


def test_a_commit_deleting_every_placement_is_held_until_approved(tmp_path: Path) -> None:
    world, clock = World.create(tmp_path), Clock()
    hub = world.hub("hub", clock)
    assert hub.run_once().outcome == "committed"
    before = listing(world)
    web_files = {p for p in before if p.startswith("clusters/east/web/")}
    assert len(web_files) == 7  # the namespace, five ConfigMaps and the placement's index.yaml

    world.commit({"placements/web.yaml": None, "placements/tools.yaml": None}, "delete all")
    report = hub.run_once()
    assert report.outcome == "committed" and report.errors == ()
    assert web_files <= listing(world) and "clusters/lab/tools/namespace_tools.yaml" in listing(
        world
    )
    message = held(world, "web")
    assert message is not None
    assert "would remove 6 of 6 object(s) on a cluster and 2 of 2 cluster(s)" in message
    assert "Gitfleet-Allow-Deletion: web" in message
    assert held(world, "tools") is not None
    assert "Gitfleet-Deletion-Held: tools" in trailers(world)
    assert "Gitfleet-Deletion-Held: web" in trailers(world)

    # A later commit without approval keeps holding.
    world.commit({"README.md": "# fleet, edited\n"}, "unrelated")
    hub.run_once()
    assert web_files <= listing(world)

    # The trailer releases `web` only.
    git(
        world.work,
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "drop web\n\nGitfleet-Allow-Deletion: web",
    )
    git(world.work, "push", "-q", str(world.remote), "HEAD:refs/heads/main")
    assert hub.run_once().outcome == "committed"
    files = listing(world)
    assert not [p for p in files if "/web/" in p or p.endswith("/web.yaml")]
    assert "clusters/lab/tools/namespace_tools.yaml" in files
    assert "Gitfleet-Deletion-Held: tools" in trailers(world)

    # A DeletionApproval releases `tools`.
    world.commit({"approvals/drop-tools.yaml": APPROVAL}, "approve dropping tools")
    assert hub.run_once().outcome == "committed"
    assert not [p for p in listing(world) if "tools" in p]
    assert "Gitfleet-Deletion-Held" not in trailers(world)

    # The approval file does not approve a later deletion of a placement of the same name.
    world.commit({"placements/tools.yaml": format_placement_on("tools", "dev")}, "back")
    assert hub.run_once().outcome == "committed"
    assert "clusters/lab/tools/namespace_tools.yaml" in listing(world)
    world.commit({"placements/tools.yaml": None}, "delete tools again")
    assert hub.run_once().outcome == "committed"
    assert "clusters/lab/tools/namespace_tools.yaml" in listing(world)
    assert held(world, "tools") is not None


def test_plan_shows_a_held_deletion_first(tmp_path: Path) -> None:
    world = World.create(tmp_path)
    git(world.work, "checkout", "-q", "-b", "drop-web")
    git(world.work, "rm", "-q", "placements/web.yaml")
    git(world.work, "commit", "-qm", "drop web")
    result = run_cli(
        tmp_path, "plan", "--repo", world.work, "--base", "main", "--head", "drop-web",
        "--output", "markdown", "--now", "2026-11-21T10:00:00Z",
    )  # fmt: skip
    assert result.code == 0, result.output
    top = result.stdout.split("## gitfleet plan")[0]  # before the plan's own header
    assert top.startswith("> [!WARNING]") and "**Deletion held** for 1 placement(s)" in top
    assert "`web`: deleting the placement would remove 6 of 6 object(s)" in result.stdout

    git(world.work, "commit", "-q", "--allow-empty", "-m", "ok\n\nGitfleet-Allow-Deletion: web")
    approved = run_cli(
        tmp_path, "plan", "--repo", world.work, "--base", "main", "--head", "drop-web",
        "--output", "text", "--now", "2026-11-21T10:00:00Z",
    )  # fmt: skip
    assert approved.code == 0, approved.output
    assert "DELETION HELD" not in approved.stdout
    assert "placement web: gained [] lost [east, west]" in approved.stdout
