"""Operations behind `gitfleet approve`, `gitfleet updaterun stop|run` and `gitfleet status
updaterun`: the Git and file work around staged update runs, for `gitfleet.cli.rollout` to print.

`approve` reads the pending approval request the hub wrote on the output branch and commits the
approval (the same object with `Approved=True` at the request's generation) to a NEW branch made
from the source branch; it never pushes, and returns the commands that push it and open the pull
request whose merge is the approval. `set_run_state` edits a run's `spec.state` in the user's
file in place (comments and formatting kept). `describe_run` renders the run's status.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from gitfleet.api.conditions import format_time
from gitfleet.load.yamledit import EditError, get_field, set_field
from gitfleet.load.yamlio import dump_yaml
from gitfleet.outputread import hub_note, with_hub
from gitfleet.repo.branches import commit_on_new_branch, resolve_first, user_identity
from gitfleet.repo.gitcmd import GitError
from gitfleet.repo.outputview import GitOutputView
from gitfleet.repo.workdir import WorkdirTree
from reconciler.output import placement_key
from reconciler.rollout import stagedstatus as st
from reconciler.rollout.stagedreport import current_indexes, describe_updaterun, rollback_line
from renderers import load_fleet

FORBIDDEN = {("Initialize", "Stop"), ("Run", "Initialize"), ("Stop", "Initialize")}


@dataclass(frozen=True)
class Approved:
    """What `approve` created."""

    request: str
    path: str
    branch: str
    commit: str
    base: str
    commands: tuple[str, ...]


def _refs(branch: str) -> list[str]:
    return [f"refs/remotes/origin/{branch}", f"refs/heads/{branch}"]


def _read(repo: Path, commit: str, path: str) -> dict[str, Any] | None:
    """The document at `path` of `commit` (the output tree: only that file is listed and read)."""
    data = GitOutputView(repo, commit).read_many([path]).get(path)
    doc = yaml.safe_load(data) if data is not None else None
    return doc if isinstance(doc, dict) else None


def _pending(
    repo: Path, out_ref: str, run: str, stage: str, namespace: str, when: str | None
) -> dict[str, Any]:
    """The pending request for the stage (before or after), or LookupError saying why not."""
    found: list[dict[str, Any]] = []
    for before in (True, False):
        if when is not None and (when == "before") != before:
            continue
        name = st.request_name(run, stage, before)
        doc = _read(repo, out_ref, st.approval_status_path(name, namespace))
        if doc is not None and not st.is_true(
            (doc.get("status") or {}).get("conditions"), st.ACCEPTED
        ):
            found.append(doc)
    if not found:
        raise LookupError(
            f"no pending approval request for run {run} stage {stage} on {out_ref} (the hub "
            "writes status/approvals/<request>.yaml when a stage waits for approval)"
        )
    if len(found) > 1:
        raise LookupError(
            "both the before- and after-stage approvals are pending: pass --before or --after"
        )
    return found[0]


def approval_object(request: dict[str, Any], message: str, now: datetime) -> dict[str, Any]:
    """The approval: the request's identity and spec with `Approved=True` at its generation."""
    meta = dict(request["metadata"])
    generation = int(meta.get("generation") or 1)
    keep = {k: meta[k] for k in ("name", "namespace", "labels") if k in meta}
    return {
        "apiVersion": request["apiVersion"],
        "kind": request["kind"],
        "metadata": keep,
        "spec": request["spec"],
        "status": {
            "conditions": [
                {
                    "type": "Approved",
                    "status": "True",
                    "reason": "Approved",
                    "message": message,
                    "observedGeneration": generation,
                    "lastTransitionTime": format_time(now),
                }
            ]
        },
    }


def approve(
    repo: Path,
    run: str,
    stage: str,
    *,
    namespace: str = "",
    when: str | None = None,
    branch: str | None = None,
    message: str | None = None,
    output_branch: str = "gitfleet/rendered",
    base: str = "main",
    now: datetime,
) -> Approved:
    """Commit the approval of the pending request to a new branch (never pushed)."""
    out = resolve_first(repo, _refs(output_branch))
    if out is None:
        raise LookupError(
            f"output branch {output_branch} not found (fetch it first: git fetch origin)"
        )
    request = _pending(repo, out[1], run, stage, namespace, when)
    name = request["metadata"]["name"]
    source = resolve_first(repo, _refs(base))
    if source is None:
        raise LookupError(f"source branch {base} not found")
    target = branch or f"approve/{namespace + '-' if namespace else ''}{name}"
    if target in (base, output_branch):
        raise GitError(
            f"refusing to commit the approval to {target}: use a new branch and a pull request"
        )
    text = message or f"Approve stage {stage} of {run}"
    path = f"approvals/{namespace + '/' if namespace else ''}{name}.yaml"
    data = dump_yaml(approval_object(request, text, now)).encode()
    body = f"Approve stage {stage} of update run {run}\n\n{text}\n"
    commit = commit_on_new_branch(repo, source[1], target, {path: data}, body, user_identity(repo))
    commands = (
        f"git push origin {target}",
        f'gh pr create --base {base} --head {target} --title "Approve stage {stage} of {run}"',
    )
    return Approved(name, path, target, commit, base, commands)


def set_run_state(repo: Path, name: str, namespace: str, state: str) -> tuple[str, str]:
    """Set `spec.state` of the run declared in the working tree; (file, previous state)."""
    fleet = load_fleet(WorkdirTree(repo))
    kind = "StagedUpdateRun" if namespace else "ClusterStagedUpdateRun"
    origin = fleet.origins.get((kind, namespace, name))
    if origin is None:
        raise LookupError(
            f"{kind} {namespace + '/' if namespace else ''}{name} is not declared in {repo}"
        )
    if not origin.file.endswith((".yaml", ".yml")):
        raise EditError(
            f"{origin.file} is rendered (template or kustomization): edit spec.state there yourself"
        )
    file = repo / origin.file
    text = file.read_text(encoding="utf-8")
    old = str(get_field(text, origin.doc, ["spec", "state"]) or "Initialize")
    if (old, state) in FORBIDDEN:
        raise EditError(f"invalid state transition: cannot transition from {old} to {state}")
    if old != state:
        file.write_text(set_field(text, origin.doc, ["spec", "state"], state), encoding="utf-8")
    return origin.file, old


def run_document(files: dict[str, bytes], name: str, namespace: str) -> dict[str, Any]:
    """`gitfleet status updaterun NAME --output json`: the run's status document, the approval
    requests it created (by name), each cluster's resource snapshot index of its placement now,
    the rollback line (None unless the run deploys an older snapshot than clusters have), and
    `"hub"` while the hub records a refused source commit (`outputread.with_hub`)."""
    data = files.get(st.run_status_path(name, namespace))
    if data is None:
        raise LookupError(f"update run {name} has no status in the output (is it declared?)")
    doc = yaml.safe_load(data)
    prefix = st.approval_status_path("", namespace).removesuffix(".yaml")
    requests = {
        path.removeprefix(prefix).removesuffix(".yaml"): yaml.safe_load(body)
        for path, body in sorted(files.items())
        if path.startswith(prefix) and "/" not in path.removeprefix(prefix)
    }
    spec, meta = doc.get("spec") or {}, doc.get("metadata") or {}
    key = placement_key(str(spec.get("placementName", "")), str(meta.get("namespace") or ""))
    current = current_indexes(files, key)
    mine = {
        r for r in requests if (requests[r].get("spec") or {}).get("parentStageRollout") == name
    }
    found = {
        "status": doc,
        "approvalRequests": {r: requests[r] for r in sorted(mine)},
        "clusterResourceSnapshotIndexes": dict(sorted(current.items())),
        "rollback": rollback_line(doc, current),
    }
    return with_hub(found, files)


def describe_run(files: dict[str, bytes], name: str, namespace: str) -> str:
    """`gitfleet status updaterun NAME` from the output files, below the `Hub:` lines while
    the hub refuses the source (`outputread.hub_note`, as every `status` view)."""
    doc = run_document(files, name, namespace)
    return hub_note(doc) + describe_updaterun(
        doc["status"], doc["approvalRequests"], doc["clusterResourceSnapshotIndexes"]
    )
