"""`gitfleet plan` for a change that adds a ClusterGroupUpgrade: its batches, the label ops it
would record and the warning that merging starts it (spec/cluster-group-upgrade.md §15)."""

from __future__ import annotations

import json

from reconciler.plan import plan_changes
from reconciler.planreport import to_json, to_markdown, to_text
from tests.unit.rollout.cgu_helpers import Fleet, at, cgu


def test_added_cgu_shows_batches_ops_and_start_warning() -> None:
    f = Fleet(
        [cgu(clusters=["a", "b", "c"], actions={"beforeEnable": {"addClusterLabels": {"u": "1"}}})]
    )
    f.step(at())
    plan = plan_changes({}, f.output)
    (g,) = plan.group_upgrades
    assert (g.key, g.change, g.starts) == ("default/cgu", "added", True)
    assert g.batches == (("a", "b"), ("c",))
    assert g.ops == ("a beforeEnable: +u=1", "b beforeEnable: +u=1", "c beforeEnable: +u=1")
    text = to_text(plan, "base", "head")
    assert "ClusterGroupUpgrade default/cgu (added)" in text
    assert "warning: merging this starts the upgrade" in text and "batch 2: c" in text
    assert "batch 1: a b" in to_markdown(plan, "base", "head")
    doc = json.loads(to_json(plan, "base", "head"))
    assert doc["clusterGroupUpgrades"][0]["batches"] == [["a", "b"], ["c"]]


def test_disabled_cgu_shows_plan_without_warning() -> None:
    f = Fleet([cgu(enable=False)])
    f.step(at())
    (g,) = plan_changes({}, f.output).group_upgrades
    assert not g.starts and g.progressing == "Progressing=False NotEnabled: Not enabled"
    assert len(g.batches) == 3


def test_unchanged_cgu_is_not_listed() -> None:
    f = Fleet([cgu(enable=False)])
    f.step(at())
    assert plan_changes(f.output, f.output).group_upgrades == ()
