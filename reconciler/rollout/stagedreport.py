"""Human views of a staged update run: `describe_updaterun` (the `gitfleet status updaterun`
text: stages in order with their clusters and progress, the gates between them, what is waiting
and how to approve it) and `mermaid_flow` (stages -> gates -> stages with cluster counts, for the
markdown `gitfleet plan` comment, which GitHub renders). `run_previews` finds the runs a change
adds or changes (with the index each cluster has now, so a rollback shows). All read the run's
status document as the hub wrote it. Called by `gitfleet.rolloutops`, `plan` and `planreport`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reconciler.output import placement_key
from reconciler.priorparse import load_bounded
from reconciler.rollout import stagedstatus as st


def _cond(holder: Mapping[str, Any], type_: str) -> dict[str, Any] | None:
    return st.find(holder.get("conditions"), type_)


def _cluster_state(entry: Mapping[str, Any]) -> str:
    succeeded = _cond(entry, st.SUCCEEDED)
    if succeeded is not None:
        return "succeeded" if succeeded["status"] == "True" else "FAILED"
    return "updating" if _cond(entry, st.STARTED) else "waiting"


def _stage_state(stage: Mapping[str, Any]) -> str:
    for type_ in (st.SUCCEEDED, st.PROGRESSING):
        found = _cond(stage, type_)
        if found is not None:
            return str(found["reason"]).removeprefix("StageUpdating")
    return "NotStarted"


def _gate(task: Mapping[str, Any], tasks: Mapping[str, Any], run: str, stage: str) -> str:
    kind = task.get("type")
    if kind == "TimedWait":
        wait = tasks.get("waitTime", "?")
        done = "elapsed" if _cond(task, st.TASK_ELAPSED) else "waiting"
        return f"TimedWait {wait}: {done}"
    name = task.get("approvalRequestName", "")
    if _cond(task, st.TASK_APPROVED):
        return f"Approval {name}: approved"
    if _cond(task, st.TASK_CREATED):
        return f"Approval {name}: PENDING (approve: gitfleet approve {run} {stage})"
    return f"Approval {name}: not requested yet"


def _approver(doc: Mapping[str, Any] | None) -> str:
    notes = ((doc or {}).get("metadata") or {}).get("annotations") or {}
    if "gitfleet.io/approved-by" in notes:
        commit = str(notes.get("gitfleet.io/approval-commit", ""))[:12]
        return f" by {notes['gitfleet.io/approved-by']} in {commit}"
    if "gitfleet.io/approval-not-counted" in notes:
        return f" (an approval was found but does not count: {notes['gitfleet.io/approval-not-counted']})"
    return ""


def _stage_lines(
    stage: Mapping[str, Any], config: Mapping[str, Any], run: str, requests: Mapping[str, Any]
) -> list[str]:
    name = stage.get("stageName", "")
    clusters = stage.get("clusters") or []
    lines = [
        f"Stage {name}  [{_stage_state(stage)}]  {len(clusters)} cluster(s), "
        f"maxConcurrency {config.get('maxConcurrency', 1)}"
    ]
    for where, key in (("before", "beforeStageTaskStatus"), ("after", "afterStageTaskStatus")):
        specs = config.get(f"{where}StageTasks") or []
        for i, task in enumerate(stage.get(key) or []):
            spec = specs[i] if i < len(specs) else {}
            gate = _gate(task, spec, run, str(name))
            lines.append(
                f"  {where}: {gate}{_approver(requests.get(task.get('approvalRequestName', '')))}"
            )
        if where == "before":
            lines += [f"  - {c['clusterName']}: {_cluster_state(c)}" for c in clusters]
    return lines


SNAPSHOT_COMMIT = "gitfleet.io/resource-snapshot-commit"


def rollback_line(doc: Mapping[str, Any], current: Mapping[str, int]) -> str | None:
    """`rollback: deploys snapshot 1 (commit abc1234), clusters now at 3` when some cluster of
    the run has a newer snapshot than the one the run deploys (`current`: cluster -> index)."""
    status = doc.get("status") or {}
    target = str(status.get("resourceSnapshotIndexUsed", ""))
    members = {
        c["clusterName"] for s in status.get("stagesStatus") or [] for c in s.get("clusters") or []
    }
    ahead = [i for c, i in current.items() if c in members]
    if not target.isdigit() or not ahead or max(ahead) <= int(target):
        return None
    commit = ((doc.get("metadata") or {}).get("annotations") or {}).get(SNAPSHOT_COMMIT)
    where = f" (commit {str(commit)[:7]})" if commit else ""
    return f"rollback: deploys snapshot {target}{where}, clusters now at {max(ahead)}"


def describe_updaterun(
    doc: Mapping[str, Any],
    requests: Mapping[str, Any],
    current: Mapping[str, int] | None = None,
) -> str:
    """The run as text; `requests` maps approval request names to their documents, `current`
    each cluster's resource snapshot index of the run's placement now."""
    spec, status = doc.get("spec") or {}, doc.get("status") or {}
    name = (doc.get("metadata") or {}).get("name", "")
    lines = [
        f"{doc.get('kind')}: {name}",
        f"Placement: {spec.get('placementName')}   Strategy: {spec.get('stagedRolloutStrategyName')}"
        f"   State: {spec.get('state', 'Initialize')}",
        f"Resource snapshot index: {status.get('resourceSnapshotIndexUsed', '-')}   "
        f"Policy snapshot index: {status.get('policySnapshotIndexUsed', '-')}",
    ]
    rollback = rollback_line(doc, current or {})
    if rollback is not None:
        lines.append(rollback)
    for type_ in (st.INITIALIZED, st.PROGRESSING, st.SUCCEEDED):
        found = _cond(status, type_)
        if found is not None:
            lines.append(
                f"{type_}: {found['status']} {found['reason']} ({found['lastTransitionTime']}) "
                f"{found.get('message', '')}".rstrip()
            )
    configs = (status.get("stagedUpdateStrategySnapshot") or {}).get("stages") or []
    for stage, config in zip(status.get("stagesStatus") or [], configs, strict=False):
        lines += ["", *_stage_lines(stage, config, str(name), requests)]
    deletion = status.get("deletionStageStatus") or {}
    if deletion.get("clusters"):
        lines += ["", f"Deletion stage  [{_stage_state(deletion)}]"]
        lines += [f"  - {c['clusterName']}: {_cluster_state(c)}" for c in deletion["clusters"]]
    return "\n".join(lines) + "\n"


def _label(text: str) -> str:
    return text.replace('"', "'")


def mermaid_flow(doc: Mapping[str, Any]) -> str:
    """A Mermaid flowchart: stages (with cluster counts) and the gates between them."""
    status = doc.get("status") or {}
    configs = (status.get("stagedUpdateStrategySnapshot") or {}).get("stages") or []
    nodes: list[str] = []
    lines = ["flowchart LR"]
    for i, (stage, config) in enumerate(
        zip(status.get("stagesStatus") or [], configs, strict=False)
    ):
        for j, task in enumerate(config.get("beforeStageTasks") or []):
            nodes.append(f'b{i}_{j}{{{{"{_label(task["type"])}"}}}}')
        count = len(stage.get("clusters") or [])
        nodes.append(f's{i}["{_label(stage["stageName"])}: {count} cluster(s)"]')
        for j, task in enumerate(config.get("afterStageTasks") or []):
            what = task["type"] if task["type"] == "Approval" else f"wait {task.get('waitTime')}"
            nodes.append(f'a{i}_{j}{{{{"{_label(what)}"}}}}')
    deletion = (status.get("deletionStageStatus") or {}).get("clusters") or []
    if deletion:
        nodes.append(f'd["delete: {len(deletion)} cluster(s)"]')
    if not nodes:
        return ""
    lines.append("  " + " --> ".join(nodes))
    return "\n".join(lines) + "\n"


def preview_lines(doc: Mapping[str, Any], current: Mapping[str, int]) -> list[str]:
    """What a new or changed run will do: stages with their clusters in order (and the index
    each has now -> the run's index; an older index is a rollback) and the gates."""
    spec, status = doc.get("spec") or {}, doc.get("status") or {}
    name = (doc.get("metadata") or {}).get("name", "")
    target = status.get("resourceSnapshotIndexUsed")
    lines = [
        f"staged update run {name}: placement {spec.get('placementName')}, strategy "
        f"{spec.get('stagedRolloutStrategyName')}, state {spec.get('state', 'Initialize')}, "
        f"resource snapshot index {target if target is not None else '-'}"
    ]
    failed = _cond(status, st.INITIALIZED)
    if failed is not None and failed["status"] == "False":
        return [*lines, f"  will not start: {failed.get('message', '')}"]
    rollback = rollback_line(doc, current)
    if rollback is not None:
        lines.append(f"  {rollback}")
    configs = (status.get("stagedUpdateStrategySnapshot") or {}).get("stages") or []
    for stage, config in zip(status.get("stagesStatus") or [], configs, strict=False):
        for task in config.get("beforeStageTasks") or []:
            lines.append(f"  gate: {task['type']} before {stage['stageName']}")
        shown = []
        for entry in stage.get("clusters") or []:
            cluster = entry["clusterName"]
            now = current.get(cluster)
            move = f"{now} -> {target}" if now is not None else f"new -> {target}"
            rollback = (
                " (rollback)"
                if now is not None and target is not None and int(target) < now
                else ""
            )
            shown.append(f"{cluster} ({move}{rollback})")
        lines.append(f"  stage {stage['stageName']}: {', '.join(shown) or 'no clusters (skipped)'}")
        for task in config.get("afterStageTasks") or []:
            what = (
                task["type"] if task["type"] == "Approval" else f"TimedWait {task.get('waitTime')}"
            )
            lines.append(f"  gate: {what} after {stage['stageName']}")
    deletion = (status.get("deletionStageStatus") or {}).get("clusters") or []
    if deletion:
        lines.append(f"  deletion stage: {', '.join(c['clusterName'] for c in deletion)}")
    return lines


@dataclass(frozen=True)
class RunPreview:
    """A staged update run a change adds or changes: its status as the head renders it (stages
    with clusters in order, gates) and the resource snapshot index each cluster has now."""

    path: str
    doc: Mapping[str, Any]
    current: Mapping[str, int]


def current_indexes(files: Mapping[str, bytes], key: str) -> dict[str, int]:
    """cluster -> the resource snapshot index of placement `key` it has (its index.yaml)."""
    out: dict[str, int] = {}
    for path, data in files.items():
        parts = path.split("/")
        if len(parts) != 3 or parts[0] != "clusters" or parts[2] != "index.yaml":
            continue
        doc = load_bounded(data) or {}
        for entry in doc.get("placements") or []:
            if str(entry.get("key")) == key and "resourceSnapshotIndex" in entry:
                out[parts[1]] = int(entry["resourceSnapshotIndex"])
    return out


def _spec(data: bytes | None) -> Any:
    doc = load_bounded(data) if data else None
    return doc.get("spec") if isinstance(doc, dict) else None


def run_previews(base: Mapping[str, bytes], head: Mapping[str, bytes]) -> tuple[RunPreview, ...]:
    """Runs whose spec a change (output `base` -> output `head`) adds or changes."""
    prefix = st.run_status_path("").removesuffix(".yaml")
    out = []
    for path in sorted(p for p in head if p.startswith(prefix)):
        if _spec(base.get(path)) == _spec(head[path]):
            continue
        doc = load_bounded(head[path])
        if not isinstance(doc, dict):
            continue
        meta, spec = doc.get("metadata") or {}, doc.get("spec") or {}
        key = placement_key(str(spec.get("placementName", "")), str(meta.get("namespace") or ""))
        out.append(RunPreview(path, doc, current_indexes(base, key)))
    return tuple(out)


def runs_markdown(runs: tuple[RunPreview, ...]) -> list[str]:
    """Markdown sections (with a Mermaid flowchart each) for the plan comment."""
    out: list[str] = []
    for run in runs:
        lines = preview_lines(run.doc, run.current)
        name = (run.doc.get("metadata") or {}).get("name", "")
        out += [f"### Staged update run `{name}`", "", lines[0], ""]
        flow = mermaid_flow(run.doc)
        if flow:
            out += ["```mermaid", flow.rstrip("\n"), "```", ""]
        out += [f"- {line.strip()}" for line in lines[1:]] + [""]
    return out
