"""`gitfleet status`: placement and cluster status documents as people read them.

Formats the status files of the output tree (`status/placements/<key>.yaml`,
`status/clusters/<name>.yaml`, `clusters/<name>/index.yaml`) the way `kubectl describe crp` and
`kubectl describe membercluster` lay them out. Pure text formatting; called by the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gitfleet.api.output import expand_cluster_statuses

ROLLOUT_COLUMNS = (
    "Scheduled",
    "RolloutStarted",
    "Overridden",
    "WorkSynchronized",
    "Applied",
    "Available",
)


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]


def _conditions(conds: Sequence[Mapping[str, Any]], prefix: str = "") -> list[str]:
    if not conds:
        return ["  <none>"]
    rows = [("TYPE", "STATUS", "REASON", "SINCE", "MESSAGE")]
    for c in conds:
        ctype = str(c.get("type", "")).removeprefix(prefix)
        rows.append(
            (
                ctype,
                str(c.get("status", "")),
                str(c.get("reason", "")),
                str(c.get("lastTransitionTime", "")),
                str(c.get("message", "")),
            )
        )
    return _table(rows)


def _resource(r: Mapping[str, Any]) -> str:
    gv = f"{r['group']}/{r.get('version', '')}" if r.get("group") else str(r.get("version", ""))
    ns = f"{r['namespace']}/" if r.get("namespace") else ""
    return f"{gv}/{r.get('kind', '')} {ns}{r.get('name', '')}"


def _per_cluster(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    if not entries:
        return ["  <none>"]
    rows = [("CLUSTER", "INDEX", *(c.upper() for c in ROLLOUT_COLUMNS))]
    notes = []
    for e in entries:
        by_type = {str(c.get("type")): c for c in e.get("conditions") or []}
        name = str(e.get("clusterName", "(not scheduled)"))
        rows.append(
            (
                name,
                str(e.get("observedResourceIndex", "-")),
                *(str(by_type[t].get("status")) if t in by_type else "-" for t in ROLLOUT_COLUMNS),
            )
        )
        failed = [c for c in by_type.values() if c.get("status") != "True"]
        if e.get("rolloutWaiting"):
            notes.append(f"  {name}: {e['rolloutWaiting']}")
        elif failed:
            c = failed[0]
            notes.append(
                f"  {name}: {c.get('type')} {c.get('status')} ({c.get('reason')}): {c.get('message')}"
            )
    return _table(rows) + (["", *notes] if notes else [])


def _progress(status: Mapping[str, Any]) -> str:
    """How far the rollout of the latest snapshot got (clusters that have it, available)."""
    latest = str(status.get("observedResourceIndex", "-"))
    entries = [e for e in expand_cluster_statuses(status) if e.get("clusterName")]
    have = [e for e in entries if str(e.get("observedResourceIndex")) == latest]
    available = [
        e
        for e in have
        if any(
            c.get("type") in ("Available", "DiffReported") and c.get("status") == "True"
            for c in e.get("conditions") or []
        )
    ]
    return (
        f"{len(have)} of {len(entries)} cluster(s) have snapshot {latest}, "
        f"{len(available)} available"
    )


def describe_placement(doc: Mapping[str, Any]) -> str:
    """A placement status document as text."""
    meta, spec, status = doc.get("metadata") or {}, doc.get("spec") or {}, doc.get("status") or {}
    policy = spec.get("policy") or {}
    kind = str(doc.get("kind", ""))
    lines = [
        f"Name:                    {meta.get('name', '')}",
        *([f"Namespace:               {meta['namespace']}"] if meta.get("namespace") else []),
        f"Kind:                    {kind}",
        f"Generation:              {meta.get('generation', '')}",
        f"Placement Type:          {policy.get('placementType', 'PickAll')}",
    ]
    if policy.get("clusterNames"):
        lines.append(f"Cluster Names:           {', '.join(policy['clusterNames'])}")
    if policy.get("numberOfClusters") is not None:
        lines.append(f"Number Of Clusters:      {policy['numberOfClusters']}")
    lines.append(f"Resource Snapshot Index: {status.get('observedResourceIndex', '-')}")
    lines.append(f"Rollout:                 {_progress(status)}")
    selected = status.get("selectedResources") or []
    lines += [f"Selected Resources ({len(selected)}):", *(f"  {_resource(r)}" for r in selected)]
    lines += ["Conditions:", *_conditions(status.get("conditions") or [], kind)]
    lines += ["Per Cluster:", *_per_cluster(expand_cluster_statuses(status))]
    removing = status.get("deletingClusters") or []
    if removing:
        lines += ["Deleting:", *(f"  {d.get('clusterName')}: {d.get('message')}" for d in removing)]
    return "\n".join(lines) + "\n"


def _taint(taint: Mapping[str, Any]) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"{taint.get('key', '')}{value}:{taint.get('effect', '')}"


def describe_cluster(doc: Mapping[str, Any], index: Mapping[str, Any] | None) -> str:
    """A MemberCluster status document (plus its index.yaml, if any) as text."""
    meta, spec, status = doc.get("metadata") or {}, doc.get("spec") or {}, doc.get("status") or {}
    labels = meta.get("labels") or {}
    lines = [
        f"Name:        {meta.get('name', '')}",
        f"Labels:      {', '.join(f'{k}={v}' for k, v in sorted(labels.items())) or '<none>'}",
        f"Taints:      {', '.join(_taint(t) for t in spec.get('taints') or []) or '<none>'}",
    ]
    for agent in status.get("agentStatus") or []:
        lines.append(
            f"Agent:       {agent.get('type')} heartbeat recorded "
            f"{agent.get('lastReceivedHeartbeat', '-')} (at most every clusterStatusRecordInterval)"
        )
    props = status.get("properties") or {}
    if props:
        lines += ["Properties:", *(f"  {k}: {v.get('value')}" for k, v in sorted(props.items()))]
    lines += ["Conditions:", *_conditions(status.get("conditions") or [])]
    placements = (index or {}).get("placements") or []
    rows = [("PLACEMENT", "RESOURCE INDEX", "OBJECTS")]
    rows += [
        (
            str(p.get("key")),
            str(p.get("resourceSnapshotIndex", "-")),
            str(len(p.get("objects") or [])),
        )
        for p in placements
    ]
    lines += ["Placements:", *(_table(rows) if placements else ["  <none>"])]
    return "\n".join(lines) + "\n"


def explanation_rows(explanations: Mapping[str, Any], cluster: str | None) -> list[dict[str, Any]]:
    """Plain rows (JSON-ready) of the scheduler's explanations, optionally for one cluster."""
    rows = []
    for name in sorted(explanations):
        if cluster is not None and name != cluster:
            continue
        e = explanations[name]
        rows.append(
            {
                "cluster": name,
                "selected": e.selected,
                "bindingState": e.binding_state,
                "rank": e.rank,
                "filter": e.filter_plugin,
                "filterReason": e.filter_reason,
                "alreadySelected": e.already_selected,
                "scores": {
                    "affinity": e.affinity_score,
                    "topologySpread": e.topology_score,
                    "obsoletePlacement": e.obsolete_score,
                },
                "reason": e.reason,
            }
        )
    return rows


def describe_explanations(key: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """`gitfleet explain placement`: one line per cluster, then the reasons."""
    lines = [
        f"Placement {key}: {sum(1 for r in rows if r['selected'])} of {len(rows)} cluster(s) selected"
    ]
    table = [("CLUSTER", "PICKED", "BINDING", "RANK", "AFFINITY", "SPREAD", "FIRST FILTER")]
    for r in rows:
        s = r["scores"]
        table.append(
            (
                r["cluster"],
                "yes" if r["selected"] else "no",
                r["bindingState"] or "-",
                "-" if r["rank"] is None else str(r["rank"]),
                "-" if s["affinity"] is None else str(s["affinity"]),
                "-" if s["topologySpread"] is None else str(s["topologySpread"]),
                r["filter"] or "-",
            )
        )
    lines += _table(table) if rows else ["  <no clusters>"]
    lines += ["Reasons:", *(f"  {r['cluster']}: {r['filterReason'] or r['reason']}" for r in rows)]
    return "\n".join(lines) + "\n"


def describe_group_upgrade(doc: Mapping[str, Any]) -> str:
    """`gitfleet status cgu NAME`: conditions, plan (canary batches marked) and progress."""
    meta, spec, status = doc.get("metadata") or {}, doc.get("spec") or {}, doc.get("status") or {}
    strategy = spec.get("remediationStrategy") or {}
    canaries = set(strategy.get("canaries") or [])
    inner = status.get("status") or {}
    lines = [
        f"Name:              {meta.get('namespace', 'default')}/{meta.get('name', '')}",
        f"Enable:            {str(spec.get('enable', True)).lower()}",
        f"Managed Policies:  {', '.join(spec.get('managedPolicies') or []) or '<none>'}",
        f"Max Concurrency:   {strategy.get('maxConcurrency')} "
        f"(computed {status.get('computedMaxConcurrency', '-')})",
        f"Timeout:           {strategy.get('timeout', 240)}m",
        f"Started At:        {inner.get('startedAt', '<not started>')}",
    ]
    if inner.get("completedAt"):
        lines.append(f"Completed At:      {inner['completedAt']}")
    lines += ["Conditions:", *_conditions(status.get("conditions") or [])]
    targets = status.get("managedPoliciesForUpgrade") or []
    if targets:
        lines.append("Targets:")
        lines += [
            f"  {t.get('kind')} {t.get('name')} -> resource snapshot {t.get('resourceSnapshotIndex')}"
            for t in targets
        ]
    lines.append("Remediation Plan:")
    current = int(inner.get("currentBatch", 0))
    for i, batch in enumerate(status.get("remediationPlan") or [], start=1):
        mark = " (canary)" if len(batch) == 1 and batch[0] in canaries else ""
        here = "  <- current" if i == current else ""
        lines.append(f"  batch {i}{mark}: {' '.join(batch)}{here}")
    if not status.get("remediationPlan"):
        lines.append("  <empty>")
    progress = inner.get("currentBatchRemediationProgress") or {}
    if progress:
        lines.append(
            f"Current Batch {current} (started {inner.get('currentBatchStartedAt', '-')}):"
        )
        rows = [("CLUSTER", "STATE", "POLICY INDEX", "FIRST COMPLIANT")]
        rows += [
            (
                c,
                str(p.get("state", "")),
                str(p.get("policyIndex", "-")),
                str(p.get("firstCompliantAt", "-")),
            )
            for c, p in sorted(progress.items())
        ]
        lines += _table(rows)
    done = status.get("clusters") or []
    if done:
        lines.append("Clusters:")
        for c in done:
            policy = (c.get("currentPolicy") or {}).get("name")
            lines.append(
                f"  {c.get('name')}: {c.get('state')}" + (f" (at {policy})" if policy else "")
            )
    return "\n".join(lines) + "\n"


def _subset_rule(subset: Mapping[str, Any], total: int) -> str:
    for field in ("replicas", "minReplicas", "maxReplicas"):
        if field in subset:
            break
    else:
        return "unspecified: an even share of what the specified subsets leave"
    parts = []
    for field in ("replicas", "minReplicas", "maxReplicas"):
        value = subset.get(field)
        if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
            parts.append(f"{field} {value} of {total} = {(total * int(value[:-1]) + 50) // 100}")
        elif value is not None:
            parts.append(f"{field} {value}")
    return ", ".join(parts)


def describe_distribution(doc: Mapping[str, Any]) -> str:
    """`gitfleet explain distribution NAME`: the allocation per subset and cluster, and why."""
    meta, spec, status = doc.get("metadata") or {}, doc.get("spec") or {}, doc.get("status") or {}
    w = spec.get("workload") or {}
    total = int(status.get("replicas", spec.get("replicas", 0)) or 0)
    lines = [
        f"ReplicaDistribution {meta.get('namespace')}/{meta.get('name')}: "
        f"{w.get('apiVersion')} {w.get('kind')} {w.get('name')}",
        f"Replicas: {status.get('replicas', '-')} (placed {status.get('placedReplicas', '-')}, "
        f"not placed {status.get('unplacedReplicas', '-')})",
        "Conditions:",
        *_conditions(status.get("conditions") or []),
    ]
    subsets = {s.get("name"): s for s in (spec.get("topology") or {}).get("subsets") or []}
    minmax = any("minReplicas" in s or "maxReplicas" in s for s in subsets.values())
    lines.append(
        "Mode: "
        + (
            "min/max (subsets filled in spec order up to their caps)"
            if minmax
            else "specific (fixed and percentage values first, the rest shared; extra "
            "replicas go to subsets that already run more, then the last names)"
        )
    )
    for entry in status.get("subsetStatuses") or []:
        name = entry.get("name")
        members = entry.get("clusters") or []
        why = _subset_rule(subsets.get(name) or {}, total)
        part = f", partition {entry['partition']}" if "partition" in entry else ""
        lines.append(f"Subset {name}: {entry.get('replicas')} replicas{part} ({why})")
        if not members:
            lines.append("  no placed cluster: these replicas are not placed")
            continue
        n = len(members)
        lines.append(
            f"  split evenly over {n} cluster(s): {entry.get('replicas')} // {n} each, the "
            "remainder to the clusters that ran more before, then the last names"
        )
        for c in members:
            p = f" partition {c['partition']}" if "partition" in c else ""
            lines.append(f"  {c.get('name')}: {c.get('replicas')}{p}")
    if status.get("unassignedClusters"):
        lines.append(
            f"Unassigned (placed, in no subset, 0 replicas): {', '.join(status['unassignedClusters'])}"
        )
    for o in status.get("overlappingClusters") or []:
        lines.append(
            f"Overlap: {o.get('cluster')} matches {', '.join(o.get('subsets') or [])}; the first wins"
        )
    if status.get("heldClusters"):
        lines.append(
            f"Held (no last good result while invalid): {', '.join(status['heldClusters'])}"
        )
    return "\n".join(lines) + "\n"
