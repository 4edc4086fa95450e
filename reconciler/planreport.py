"""Formats a `plan.Plan` for people and machines: markdown (for a pull-request comment, with one
collapsible section per cluster), plain text (terminal) and JSON. Called by the CLI.
"""

from __future__ import annotations

import json
from typing import Any

from reconciler.plan import Plan

MAX_MARKDOWN_CHARS = 60_000
"""GitHub comments are capped at 65,536 characters; longer plans are cut with a note."""


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


def _names(clusters: list[str]) -> str:
    shown = ", ".join(clusters[:10])
    return shown + (f" (+{len(clusters) - 10} more)" if len(clusters) > 10 else "") or "-"


def to_markdown(plan: Plan, base: str, head: str) -> str:
    t = plan.totals()
    out = [
        f"## gitfleet plan: `{base[:12]}` → `{head[:12]}`",
        "",
        f"**{t['placements']}** placement(s) change on **{t['clusters']}** cluster(s): "
        f"{t['added']} object(s) added, {t['changed']} changed, {t['removed']} removed; "
        f"{t['errors']} error(s).",
        "",
    ]
    if plan.errors:
        out += ["### Errors", "", *(f"- `{e}`" for e in plan.errors), ""]
    if plan.placements:
        out += [
            "| placement | clusters gained | clusters lost | added | changed | removed |",
            "|---|---|---|---|---|---|",
        ]
        for p in plan.placements:
            c = p.counts()
            out.append(
                f"| `{p.key}` | {_names(p.gained)} | {_names(p.lost)} | {c['added']} | {c['changed']} | {c['removed']} |"
            )
        out.append("")
    out += _group_upgrade_lines(plan, markdown=True)
    for p in plan.placements:
        out += [f"### `{p.key}`", ""]
        for cluster, changes in p.clusters.items():
            summary = ", ".join(f"{o.change} {o.file}" for o in changes[:3])
            summary += f" (+{len(changes) - 3} more)" if len(changes) > 3 else ""
            body = "".join(o.diff for o in changes)
            out += [
                f"<details><summary>{cluster}: {summary}</summary>",
                "",
                "```diff",
                body.rstrip("\n"),
                "```",
                "",
                "</details>",
                "",
            ]
    text = "\n".join(out)
    if len(text) > MAX_MARKDOWN_CHARS:
        text = (
            text[:MAX_MARKDOWN_CHARS]
            + "\n\n_(plan cut: too long for one comment; run `gitfleet plan --output text` locally)_\n"
        )
    return text


def to_text(plan: Plan, base: str, head: str) -> str:
    t = plan.totals()
    out = [
        f"plan {base[:12]} -> {head[:12]}: {t['placements']} placement(s), {t['clusters']} cluster(s), "
        f"+{t['added']} ~{t['changed']} -{t['removed']}, {t['errors']} error(s)"
    ]
    out += [f"error: {e}" for e in plan.errors]
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
