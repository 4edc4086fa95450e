"""A Tenant that fails to load fails closed, through the hub loop with real Git and the CLI.

The `tools` team owns its placement and objects through a Tenant that keeps them on the dev
cluster. A commit breaks the Tenant file and, in the same change, points `tools` at the prod
clusters and edits a `web` object: neither reaches the output (both are held, with the rule in
the pass errors, the placement status, `gitfleet validate` and `gitfleet plan`). Once the Tenant
loads again, `web` goes on and `tools` is refused by its Tenant as usual.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.helpers.gitrepo import git
from tests.helpers.hubs import Clock
from tests.integration.fleet_helpers import run_cli
from tests.integration.test_hub_faults import CONFIGMAP, OUTPUT, World, format_placement_on

TENANT = """apiVersion: gitfleet.io/v1alpha1
kind: Tenant
metadata:
  name: tools
spec:
  paths: [placements/tools.yaml, "resources/tools/**"]
  clusterSelector: {matchLabels: {env: dev}}
  namespaces: [tools]
"""
BROKEN = TENANT.replace("namespaces: [tools]", "namespaces: [tools")
RULE = "placements not owned by a loaded Tenant keep their previous output until it loads"
NOW = "2026-11-21T10:00:00Z"


def listing(world: World) -> set[str]:
    return set(git(world.remote, "ls-tree", "-r", "--name-only", OUTPUT).splitlines())


def show(world: World, path: str) -> str:
    return git(world.remote, "show", f"{OUTPUT}:{path}")


def held_message(world: World, key: str) -> str:
    doc = yaml.safe_load(show(world, f"status/placements/{key}.yaml"))
    found = [c for c in doc["status"]["conditions"] if c["reason"] == "RolloutNotStartedYet"]
    return str(found[0]["message"]) if found else ""


def test_a_broken_tenant_holds_what_no_loaded_tenant_owns(tmp_path: Path) -> None:
    world, clock = World.create(tmp_path), Clock()
    world.commit({"tenants/tools.yaml": TENANT}, "tools tenant")
    hub = world.hub("hub", clock)
    first = hub.run_once()
    assert first.outcome == "committed" and first.errors == (), first.errors
    before = listing(world)
    cm0 = show(world, "clusters/east/web/configmap_web_cm0.yaml")
    assert "clusters/lab/tools/namespace_tools.yaml" in before

    world.commit(
        {
            "tenants/tools.yaml": BROKEN,
            "placements/tools.yaml": format_placement_on("tools", "prod"),
            "resources/web/cm0.yaml": CONFIGMAP.format(name="cm0", ns="web", rev=1),
        },
        "break the tenant, widen tools, edit web",
    )
    report = hub.run_once()
    errors = [str(e) for e in report.errors]
    assert any(e.startswith("tenants/tools.yaml:2: kind: Tenant file failed") for e in errors), (
        errors
    )
    assert any(e.startswith("placements/web.yaml") and RULE in e for e in errors), errors
    assert any(e.startswith("placements/tools.yaml") and RULE in e for e in errors), errors
    after = listing(world)
    assert not [p for p in after if p.startswith(("clusters/east/tools/", "clusters/west/tools/"))]
    assert show(world, "clusters/east/web/configmap_web_cm0.yaml") == cm0
    assert {p for p in before if p.startswith("clusters/")} <= after
    assert "tenants/tools.yaml:2 failed to load" in held_message(world, "web")
    assert "tenants/tools.yaml:2 failed to load" in held_message(world, "tools")

    # `gitfleet validate` and `gitfleet plan` show the same rule before anything merges.
    checked = run_cli(tmp_path, "validate", world.work, "--now", NOW)
    assert checked.code != 0 and RULE in checked.output, checked.output
    git(world.work, "branch", "-q", "broken")
    planned = run_cli(
        tmp_path, "plan", "--repo", world.work, "--base", "HEAD~1", "--head", "broken",
        "--output", "text", "--now", NOW,
    )  # fmt: skip
    assert RULE in planned.output and "+0 ~0 -0" in planned.stdout, planned.output

    world.commit({"tenants/tools.yaml": TENANT}, "fix the tenant")
    fixed = hub.run_once()
    errors = [str(e) for e in fixed.errors]
    assert not [e for e in errors if RULE in e], errors
    assert show(world, "clusters/east/web/configmap_web_cm0.yaml") != cm0
    assert any("outside tenant tools's spec.clusterSelector" in e for e in errors), errors
    assert not [p for p in listing(world) if p.startswith("clusters/east/tools/")]
