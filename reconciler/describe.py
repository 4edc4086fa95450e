"""`gitfleet status`: placement and cluster status documents as people read them.

Formats the status files of the output tree (`status/placements/<key>.yaml`,
`status/clusters/<name>.yaml`, `clusters/<name>/index.yaml`) the way `kubectl describe crp` and
`kubectl describe membercluster` lay them out. Pure text formatting; called by the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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
        if failed:
            c = failed[0]
            notes.append(
                f"  {name}: {c.get('type')} {c.get('status')} ({c.get('reason')}): {c.get('message')}"
            )
    return _table(rows) + (["", *notes] if notes else [])


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
    selected = status.get("selectedResources") or []
    lines += [f"Selected Resources ({len(selected)}):", *(f"  {_resource(r)}" for r in selected)]
    lines += ["Conditions:", *_conditions(status.get("conditions") or [], kind)]
    lines += ["Per Cluster:", *_per_cluster(status.get("perClusterPlacementStatuses") or [])]
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
            f"Agent:       {agent.get('type')} last heartbeat {agent.get('lastReceivedHeartbeat', '-')}"
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
