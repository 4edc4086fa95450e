"""Plan preview (stages, gates, Mermaid flowchart, rollback) and the status text of a run."""

from __future__ import annotations

import yaml

from reconciler.plan import plan_changes
from reconciler.planreport import to_json, to_markdown, to_text
from reconciler.rollout.stagedreport import describe_updaterun, mermaid_flow
from tests.unit.rollout.stagedkit import Sim, binding, fleet, run, strategy, view

LABELS = {
    "s1": {"env": "staging"},
    "c1": {"env": "canary"},
    "p1": {"env": "prod"},
    "p2": {"env": "prod"},
}
STAGES = [
    {
        "name": "staging",
        "labelSelector": {"matchLabels": {"env": "staging"}},
        "afterStageTasks": [{"type": "TimedWait", "waitTime": "1h"}],
    },
    {
        "name": "canary",
        "labelSelector": {"matchLabels": {"env": "canary"}},
        "afterStageTasks": [{"type": "Approval"}],
    },
    {"name": "prod", "labelSelector": {"matchLabels": {"env": "prod"}}, "maxConcurrency": "50%"},
]


def _head(index: str | None = None) -> dict[str, bytes]:
    sim = Sim(
        fleet(strategy(STAGES), run(state="Initialize", index=index)),
        view([binding(c) for c in LABELS]),
        LABELS,
    )
    sim.step()
    return sim.prior


def _base_index(cluster: str, index: int) -> dict[str, bytes]:
    doc = {"placements": [{"key": "app", "name": "app", "resourceSnapshotIndex": index}]}
    return {f"clusters/{cluster}/index.yaml": yaml.safe_dump(doc).encode()}


def test_plan_shows_stages_gates_and_mermaid() -> None:
    plan = plan_changes({}, _head())
    (preview,) = plan.runs
    text = to_text(plan, "a" * 40, "b" * 40)
    assert (
        "staged update run run1: placement app, strategy strat, state Initialize, resource snapshot index 1"
        in text
    )
    assert "  stage staging: s1 (new -> 1)" in text
    assert "  gate: TimedWait 1h after staging" in text
    assert "  gate: Approval after canary" in text
    assert "  stage prod: p1 (new -> 1), p2 (new -> 1)" in text
    markdown = to_markdown(plan, "a" * 40, "b" * 40)
    assert "```mermaid\nflowchart LR\n" in markdown
    assert (
        's0["staging: 1 cluster(s)"] --> a0_0{{"wait 1h"}} --> s1["canary: 1 cluster(s)"] --> a1_0{{"Approval"}} --> s2["prod: 2 cluster(s)"]'
        in markdown
    )
    assert "updateRuns" in to_json(plan, "a", "b")
    assert mermaid_flow(preview.doc).startswith("flowchart LR")


def test_plan_marks_rollback_and_ignores_unchanged_runs() -> None:
    base = {**_base_index("s1", 1), **_base_index("p1", 0)}
    plan = plan_changes(base, {**base, **_head(index="0")})
    text = to_text(plan, "a" * 40, "b" * 40)
    assert "s1 (1 -> 0 (rollback))" in text
    assert "p1 (0 -> 0)," in text
    head = _head()
    assert plan_changes(head, head).runs == ()


def test_describe_updaterun_lists_stages_in_order() -> None:
    head = _head()
    doc = yaml.safe_load(head["status/updateruns/run1.yaml"])
    text = describe_updaterun(doc, {})
    stages = [line.split()[1] for line in text.splitlines() if line.startswith("Stage ")]
    assert stages == ["staging", "canary", "prod"]
    assert "  after: TimedWait 1h: waiting" in text
    assert "  after: Approval run1-after-canary: not requested yet" in text
    assert "  - p2: waiting" in text
