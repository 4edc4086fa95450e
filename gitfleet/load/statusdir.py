"""Cluster status files: MemberClusters with their status, as `--cluster-status DIR` gives them.

The same shape the output branch carries in `status/clusters/`: one `<cluster>.yaml` per cluster,
a MemberCluster (or ClusterProfile) whose `status` holds agentStatus, properties and
resourceUsage. Called by the CLI for dry runs; the hub loop reads agent reports instead.
"""

from __future__ import annotations

from gitfleet.api import ClusterProfile, MemberCluster, to_member_cluster
from gitfleet.api.errors import FleetError
from gitfleet.api.limits import Limits
from gitfleet.api.registry import parse_object
from gitfleet.load.yamlio import decode_text, parse_documents
from gitfleet.repo.tree import Tree


def read_cluster_statuses(
    tree: Tree, limits: Limits | None = None
) -> tuple[dict[str, MemberCluster], list[FleetError]]:
    """Statuses by cluster name; every problem is reported and the other files still load."""
    limits = limits or Limits()
    out: dict[str, MemberCluster] = {}
    errors: list[FleetError] = list(tree.errors)
    for path in tree.files():
        if not path.endswith((".yaml", ".yml")):
            continue
        if tree.size(path) > limits.max_file_bytes:
            errors.append(
                FleetError(
                    path,
                    None,
                    "",
                    f"file is larger than {limits.max_file_bytes} bytes (limits.maxFileBytes)",
                )
            )
            continue
        text, err = decode_text(path, tree.read(path))
        if text is None:
            errors += [err] if err else []
            continue
        docs, problems = parse_documents(path, text, limits)
        errors += problems
        for doc in docs:
            model, issues = parse_object(doc.body)
            errors += [FleetError(path, doc.line, i.field, i.message, doc.doc) for i in issues]
            if isinstance(model, ClusterProfile):
                model = to_member_cluster(model)
            if model is None:
                continue
            if not isinstance(model, MemberCluster):
                errors.append(
                    FleetError(
                        path,
                        doc.line,
                        "kind",
                        "a cluster status file holds MemberCluster or ClusterProfile objects",
                        doc.doc,
                    )
                )
                continue
            name = model.metadata.name
            if name in out:
                errors.append(
                    FleetError(
                        path,
                        doc.line,
                        "metadata.name",
                        f"status of cluster {name} is given twice",
                        doc.doc,
                    )
                )
                continue
            out[name] = model
    return out, errors
