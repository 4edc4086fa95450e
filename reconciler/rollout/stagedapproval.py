"""Approval through Git for staged update runs: the hub's request documents and whether a
committed approval counts.

The hub writes each approval request it creates as `status/approvals/<request>.yaml`: a
(Cluster)ApprovalRequest with KubeFleet's name, labels and spec. A person approves by merging a
pull request that adds the same object to the source with an `Approved` condition True at the
request's generation (1). `judge` decides whether the approval found in the source counts: it
must name the same run and stage, be Approved at generation 1, and must not be a file that was
already there when the request was created (that one is recorded as ignored, so an approval
written before its request existed never counts). `accept` records ApprovalAccepted, the approving
source commit, its author and committer. Called by `reconciler.rollout.stagedexec`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gitfleet.api.canonical import content_hash
from gitfleet.api.conditions import find_condition
from gitfleet.api.staged import AnyApprovalRequest
from gitfleet.load.model import Origin, PathCommit
from reconciler.rollout.stagedstatus import (
    ACCEPTED,
    ACCEPTED_REASON,
    RunRef,
    set_cond,
)

REQUEST_GENERATION = 1
LABEL_PREFIX = "kubernetes-fleet.io/"
ANN_IGNORED = "gitfleet.io/ignored-approval"
ANN_NOT_COUNTED = "gitfleet.io/approval-not-counted"
ANN_COMMIT = "gitfleet.io/approval-commit"
ANN_AUTHOR = "gitfleet.io/approved-by"
ANN_COMMITTER = "gitfleet.io/approval-committer"
ANN_FILE = "gitfleet.io/approval-file"
APPROVED_BY_TRAILER = "Gitfleet-Approved-By"
APPROVAL_COMMIT_TRAILER = "Gitfleet-Approval-Commit"
APPROVAL_TRAILER = "Gitfleet-Approval"
PENDING_TRAILER = "Gitfleet-Approval-Pending"


@dataclass(frozen=True)
class Approvals:
    """The approvals committed to the source, where they are, and who committed them."""

    objects: Mapping[tuple[str, str], AnyApprovalRequest]
    """(namespace, name) -> approval object."""
    origins: Mapping[tuple[str, str], Origin]
    commits: Mapping[str, PathCommit]
    """Source file -> the commit that last changed it."""

    def key(self, found: AnyApprovalRequest) -> str:
        """What identifies this approval's version: its commit, else its content."""
        origin = self.origins.get((found.namespace or "", found.name))
        commit = self.commits.get(origin.file) if origin else None
        return commit.commit if commit else content_hash(found.dump())


@dataclass(frozen=True)
class Verdict:
    """Whether the committed approval counts, and why not."""

    approved: bool
    reason: str = ""
    found: AnyApprovalRequest | None = None


def request_doc(ref: RunRef, stage: str, name: str, before: bool) -> dict[str, Any]:
    """A new approval request as KubeFleet creates it."""
    meta: dict[str, Any] = {
        "name": name,
        "generation": REQUEST_GENERATION,
        "labels": {
            f"{LABEL_PREFIX}isLatestUpdateRunApproval": "true",
            f"{LABEL_PREFIX}targetUpdateRun": ref.name,
            f"{LABEL_PREFIX}targetUpdatingStage": stage,
            f"{LABEL_PREFIX}taskType": "beforeStage" if before else "afterStage",
        },
    }
    if ref.namespace:
        meta["namespace"] = ref.namespace
    return {
        "apiVersion": ref.run.api_version,
        "kind": ref.request_kind,
        "metadata": meta,
        "spec": {"parentStageRollout": ref.name, "targetStage": stage},
    }


def note_preexisting(doc: dict[str, Any], approvals: Approvals, ref: RunRef, name: str) -> None:
    """At creation: an approval already in the source is recorded as ignored."""
    found = approvals.objects.get((ref.namespace, name))
    if found is not None:
        doc["metadata"].setdefault("annotations", {})[ANN_IGNORED] = approvals.key(found)


def judge(doc: Mapping[str, Any], approvals: Approvals, ref: RunRef, stage: str) -> Verdict:
    """Whether the approval in the source for request `doc` counts (and why not)."""
    name = doc["metadata"]["name"]
    found = approvals.objects.get((ref.namespace, name))
    if found is None:
        return Verdict(False)
    spec = found.spec
    if (spec.parent_stage_rollout, spec.target_stage) != (ref.name, stage):
        return Verdict(
            False,
            f"the approval is for run `{spec.parent_stage_rollout}` stage `{spec.target_stage}`, "
            f"the request `{name}` is for run `{ref.name}` stage `{stage}`",
            found,
        )
    cond = find_condition(found.status.conditions or [] if found.status else [], "Approved")
    if cond is None or cond.status != "True":
        return Verdict(False, "the approval has no Approved condition with status True", found)
    if cond.observed_generation != REQUEST_GENERATION:
        seen = (
            "no observedGeneration"
            if cond.observed_generation is None
            else (f"observedGeneration {cond.observed_generation}")
        )
        return Verdict(
            False,
            f"the Approved condition has {seen}; the request is at generation {REQUEST_GENERATION}",
            found,
        )
    ignored = (doc["metadata"].get("annotations") or {}).get(ANN_IGNORED)
    if ignored is not None and ignored == approvals.key(found):
        return Verdict(
            False,
            "the approval was committed before the request existed; approvals given before a "
            "request exists never count (commit a new approval)",
            found,
        )
    return Verdict(True, found=found)


def accept(
    doc: dict[str, Any], verdict: Verdict, approvals: Approvals, now: datetime
) -> list[tuple[str, str]]:
    """Record ApprovalAccepted (and who approved) on the request; the output commit's trailers."""
    assert verdict.found is not None
    found = verdict.found
    approved = find_condition(found.status.conditions or [] if found.status else [], "Approved")
    status = doc.setdefault("status", {})
    if approved is not None:
        status["conditions"] = [approved.dump()]
    set_cond(
        status,
        ACCEPTED,
        "True",
        ACCEPTED_REASON,
        "The approval request has been approved and cannot be reverted",
        REQUEST_GENERATION,
        now,
    )
    origin = approvals.origins.get((found.namespace or "", found.name))
    annotations = doc["metadata"].setdefault("annotations", {})
    annotations.pop(ANN_NOT_COUNTED, None)
    trailers = [(APPROVAL_TRAILER, doc["metadata"]["name"])]
    if origin is not None:
        annotations[ANN_FILE] = origin.file
        commit = approvals.commits.get(origin.file)
        if commit is not None:
            annotations[ANN_COMMIT] = commit.commit
            annotations[ANN_AUTHOR] = commit.author
            annotations[ANN_COMMITTER] = commit.committer
            trailers += [
                (APPROVED_BY_TRAILER, commit.author),
                (APPROVAL_COMMIT_TRAILER, commit.commit),
            ]
    return trailers


def note_refusal(doc: dict[str, Any], verdict: Verdict) -> None:
    """Say in the request why the approval in the source does not count (or clear it)."""
    annotations = doc["metadata"].setdefault("annotations", {})
    if verdict.reason:
        annotations[ANN_NOT_COUNTED] = verdict.reason
    else:
        annotations.pop(ANN_NOT_COUNTED, None)
    if not annotations:
        doc["metadata"].pop("annotations")
