"""Formats a `plan.Plan` for people and machines: markdown (for a pull-request comment, with one
collapsible section per group of clusters with identical changes, kept under GitHub's comment
size by cutting only between whole sections), plain text (terminal) and JSON. Called by the CLI.
"""

from __future__ import annotations

import json
import re
from typing import Any

from reconciler.plan import ObjectChange, PlacementChanges, Plan
from reconciler.rollout.stagedreport import preview_lines, runs_markdown

MAX_MARKDOWN_CHARS = 60_000
"""GitHub comments are capped at 65,536 characters; longer plans are cut with a note."""
_BACKTICKS = re.compile(r"`{3,}")
MIN_SECTION_CHARS = 1_500
"""A cluster section is started only with at least this much room left."""
TRUNCATED = (
    "**plan truncated**: {dropped} section(s) not shown to stay under GitHub's comment size; "
    "the full plan is in the job artifact (`gitfleet plan --output markdown --max-chars 0`)."
)


def to_json(plan: Plan, base: str, head: str) -> str:
    doc: dict[str, Any] = {
        "base": base,
        "head": head,
        "totals": plan.totals(),
        "errors": list(plan.errors),
        "placements": [
            {
                "placement": p.key,
                "clustersGained": p.gained,
                "clustersLost": p.lost,
                "counts": p.counts(),
                "clusters": {
                    c: [{"file": o.file, "change": o.change, "diff": o.diff} for o in changes]
                    for c, changes in p.clusters.items()
                },
            }
            for p in plan.placements
        ],
    }
    if plan.group_upgrades:
        doc["clusterGroupUpgrades"] = [
            {
                "clusterGroupUpgrade": g.key,
                "change": g.change,
                "batches": [list(b) for b in g.batches],
                "condition": g.progressing,
                "startsOnMerge": g.starts,
                "ops": list(g.ops),
            }
            for g in plan.group_upgrades
        ]
    if plan.deletions_held:
        doc["deletionsHeld"] = [
            {
                "placement": h.key,
                "removedObjects": h.removed_objects,
                "totalObjects": h.total_objects,
                "removedClusters": h.removed_clusters,
                "totalClusters": h.total_clusters,
                "message": h.message(),
            }
            for h in plan.deletions_held
        ]
    if plan.runs:
        doc["updateRuns"] = [
            {"path": r.path, "preview": preview_lines(r.doc, r.current)} for r in plan.runs
        ]
    return json.dumps(doc, indent=2, sort_keys=True)


def _group_upgrade_lines(plan: Plan, markdown: bool) -> list[str]:
    out: list[str] = []
    for g in plan.group_upgrades:
        name = f"`{g.key}`" if markdown else g.key
        out.append(f"{'### ' if markdown else ''}ClusterGroupUpgrade {name} ({g.change})")
        if g.starts:
            warn = "merging this starts the upgrade (enable is true)"
            out.append(f"**Warning: {warn}**" if markdown else f"  warning: {warn}")
        if g.progressing:
            out.append(f"{'- ' if markdown else '  '}{g.progressing}")
        for i, batch in enumerate(g.batches, start=1):
            out.append(f"{'- ' if markdown else '  '}batch {i}: {' '.join(batch)}")
        for op in g.ops:
            out.append(f"{'- ' if markdown else '  '}label op: {op}")
        if markdown:
            out.append("")
    return out


def _names(clusters: list[str], shown: int = 10) -> str:
    listed = ", ".join(clusters[:shown])
    return listed + (f" (+{len(clusters) - shown} more)" if len(clusters) > shown else "") or "-"


def _cluster_groups(p: PlacementChanges) -> list[tuple[list[str], list[ObjectChange]]]:
    """Clusters whose changes to placement `p` are identical (same files, kinds and diffs once
    the cluster's own path is taken out), in the order of their first cluster; each group's
    changes with `clusters/*/` in the diff headers when it has more than one cluster."""
    groups: dict[tuple[tuple[str, str, str], ...], list[str]] = {}
    for cluster, changes in p.clusters.items():
        prefix = f"clusters/{cluster}/"
        key = tuple((o.file, o.change, o.diff.replace(prefix, "clusters/*/")) for o in changes)
        groups.setdefault(key, []).append(cluster)
    out = []
    for key, clusters in groups.items():
        if len(clusters) == 1:
            out.append((clusters, p.clusters[clusters[0]]))
        else:
            out.append((clusters, [ObjectChange(f, c, d) for f, c, d in key]))
    return out


def _details(clusters: list[str], changes: list[ObjectChange], budget: int | None) -> str:
    """One collapsible section; its diff is cut at whole lines (never the fences or the
    closing tag) when the section would not fit in `budget` characters."""
    summary = ", ".join(f"{o.change} {o.file}" for o in changes[:3])
    summary += f" (+{len(changes) - 3} more)" if len(changes) > 3 else ""
    if len(clusters) == 1:
        who = f"{clusters[0]}: "
    else:
        more = f", … (+{len(clusters) - 5})" if len(clusters) > 5 else ""
        who = f"same change on {len(clusters)} clusters: {', '.join(clusters[:5])}{more} — "
    head = [f"<details><summary>{who}{summary}</summary>", ""]
    if len(clusters) > 1:
        head += [f"Clusters: {', '.join(clusters)}", ""]
    body = "".join(o.diff for o in changes).rstrip("\n")
    fence = "`" * max(3, 1 + max((len(run) for run in _BACKTICKS.findall(body)), default=0))
    tail = [fence, "", "</details>", ""]
    text = "\n".join([*head, f"{fence}diff", body, *tail])
    if budget is None or len(text) <= budget:
        return text
    room = budget - len("\n".join([*head, f"{fence}diff", "", *tail])) - 60
    lines, used = [], 0
    for line in body.splitlines():
        if used + len(line) + 1 > room:
            break
        lines.append(line)
        used += len(line) + 1
    cut = len(body.splitlines()) - len(lines)
    lines.append(f"... {cut} more diff line(s) not shown (plan truncated)")
    return "\n".join([*head, f"{fence}diff", *lines, *tail])


def _held_blocks(plan: Plan) -> list[str]:
    """Held deletions, first in the comment: merging does not remove these without approval."""
    if not plan.deletions_held:
        return []
    lines = [
        f"> [!WARNING]\n> **Deletion held** for {len(plan.deletions_held)} placement(s): "
        "merging keeps their previous output until the deletion is approved.\n>"
    ]
    lines += [f"> - `{h.key}`: {h.message()}" for h in plan.deletions_held]
    return ["\n".join(lines) + "\n"]


def _markdown_blocks(plan: Plan, base: str, head: str, waves: tuple[str, ...]) -> list[str]:
    """The comment as indivisible blocks: truncation happens only between two of them."""
    t = plan.totals()
    blocks = _held_blocks(plan)
    blocks += [
        f"## gitfleet plan: `{base[:12]}` → `{head[:12]}`\n\n"
        f"**{t['placements']}** placement(s) change on **{t['clusters']}** cluster(s): "
        f"{t['added']} object(s) added, {t['changed']} changed, {t['removed']} removed; "
        f"{t['errors']} error(s).\n"
    ]
    if waves:
        blocks.append(
            "Rollout (the change reaches these clusters first):\n\n"
            + "\n".join(f"- {line}" for line in waves)
            + "\n"
        )
    if plan.errors:
        blocks += ["### Errors\n", *(f"- `{e}`" for e in plan.errors), ""]
    if plan.placements:
        blocks.append(
            "| placement | clusters gained | clusters lost | added | changed | removed |\n"
            "|---|---|---|---|---|---|"
        )
        for p in plan.placements:
            c = p.counts()
            blocks.append(
                f"| `{p.key}` | {_names(p.gained)} | {_names(p.lost)} | {c['added']} | {c['changed']} | {c['removed']} |"
            )
        blocks.append("")
    lines = _group_upgrade_lines(plan, markdown=True)
    if lines:
        blocks.append("\n".join(lines))
    return blocks


def to_markdown(
    plan: Plan,
    base: str,
    head: str,
    max_chars: int | None = MAX_MARKDOWN_CHARS,
    waves: tuple[str, ...] = (),
) -> str:
    """The plan as a pull-request comment: identical per-cluster changes shown once with their
    clusters; at most `max_chars` characters (None: no limit), cut only between sections, with a
    closing line that says the plan was truncated."""
    budget = None if max_chars is None else max_chars - len(TRUNCATED) - 200
    out: list[str] = []
    used, dropped = 0, 0
    for block in _markdown_blocks(plan, base, head, waves):
        if budget is not None and (dropped or used + len(block) + 1 > budget):
            dropped += 1
            continue
        out.append(block)
        used += len(block) + 1
    for p in plan.placements:
        title = f"### `{p.key}`\n"
        for i, (clusters, changes) in enumerate(_cluster_groups(p)):
            room = None if budget is None else budget - used - (len(title) + 1) * (i == 0)
            if room is not None and (dropped or room < MIN_SECTION_CHARS):
                dropped += 1
                continue
            section = _details(clusters, changes, room)
            if i == 0:
                section = title + "\n" + section
            out.append(section)
            used += len(section) + 1
            if budget is not None and "(plan truncated)" in section:
                dropped += 1
    runs = "\n".join(runs_markdown(plan.runs))
    if runs:
        if budget is not None and (dropped or used + len(runs) + 1 > budget):
            dropped += 1
        else:
            out.append(runs)
    text = "\n".join(out)
    if dropped:
        text = text.rstrip("\n") + "\n\n" + TRUNCATED.format(dropped=dropped) + "\n"
    return text


def to_text(plan: Plan, base: str, head: str) -> str:
    t = plan.totals()
    out = [
        f"plan {base[:12]} -> {head[:12]}: {t['placements']} placement(s), {t['clusters']} cluster(s), "
        f"+{t['added']} ~{t['changed']} -{t['removed']}, {t['errors']} error(s)"
    ]
    out += [f"DELETION HELD: placement {h.key}: {h.message()}" for h in plan.deletions_held]
    out += [f"error: {e}" for e in plan.errors]
    for run in plan.runs:
        out += preview_lines(run.doc, run.current)
    out += _group_upgrade_lines(plan, markdown=False)
    for p in plan.placements:
        c = p.counts()
        out.append(
            f"placement {p.key}: gained [{', '.join(p.gained)}] lost [{', '.join(p.lost)}] +{c['added']} ~{c['changed']} -{c['removed']}"
        )
        for cluster, changes in p.clusters.items():
            for o in changes:
                out.append(f"  {cluster}: {o.change} {o.file}")
                out += [f"    {line}" for line in o.diff.splitlines()]
    return "\n".join(out) + "\n"
