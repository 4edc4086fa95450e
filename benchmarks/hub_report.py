"""The Git scenario benchmark's summary rows and markdown table.

`summarise` turns one scenario's trial dicts into medians, minima and maxima; `render_markdown`
prints the table: the hub's CPU, the same without its fetch and push steps (`pass_cpu`: what the
pass, its reading and its commit cost; issue 18 measures the push apart), and the remote Git
server's CPU when `bench_hub.py --git-daemon` measured it (`gitDaemon` in the summary), then
where the pass step of each scenario goes, stage by stage (`render_stages`, from the hub's
`PassReport.stage_cpu_timings`), and what each scenario's commit writes, by part of the output
tree (`render_written`, from `hub_checks.written_bytes`). Called by `benchmarks/bench_hub.py`
and `benchmarks/compare.py`.
"""

from __future__ import annotations

import statistics
from typing import Any

from benchmarks.hub_checks import PARTS
from reconciler.pass_ import STAGES


def _stat(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def pass_cpu(row: dict[str, Any]) -> float:
    """A trial's hub CPU less its fetch and push steps: the pass, its reading and its commit."""
    return float(row.get("cpuSeconds", 0.0)) - float(row.get("transportCpuSeconds", 0.0))


def summarise(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-scenario figures from trial dicts (seconds, files, bytesAdded, maxRssMiB, outcome)."""
    return {
        "scenario": name,
        "trials": len(rows),
        "seconds": _stat([r["seconds"] for r in rows]),
        "cpuSeconds": _stat([r.get("cpuSeconds", 0.0) for r in rows]),
        "passCpuSeconds": _stat([pass_cpu(r) for r in rows]),
        "commitSeconds": _stat([r.get("commitSeconds", 0.0) for r in rows]),
        "pushSeconds": _stat([r.get("pushSeconds", 0.0) for r in rows]),
        "serverCpuSeconds": _stat([r.get("serverCpuSeconds", 0.0) for r in rows]),
        "files": _stat([r["files"] for r in rows]),
        "bytesAdded": _stat([r["bytesAdded"] for r in rows]),
        "maxRssMiB": max(r["maxRssMiB"] for r in rows),
        "outcomes": sorted({r["outcome"] for r in rows}),
        "stageCpuSeconds": stage_medians(rows),
        "writtenBytes": written_medians(rows),
    }


def _part_medians(rows: list[dict[str, Any]], field: str) -> dict[str, float]:
    """Median of each part of the trials' `field` ((name, value) pairs), over the trials that
    have one, the parts in the order the trials give them ({} when none has)."""
    made = [dict(r[field]) for r in rows if r.get(field)]
    order = dict.fromkeys(name for m in made for name in m)
    return {name: statistics.median(m.get(name, 0) for m in made) for name in order}


def written_medians(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Median bytes of each part of the output the trials' commits added (their `written`;
    {} when none committed, or for the cold pass, which writes everything)."""
    return _part_medians(rows, "written")


def stage_medians(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Median CPU seconds of each stage of the pure pass over the trials that ran one (their
    `stage_cpu`, in the pass's order; {} when none did)."""
    return _part_medians(rows, "stage_cpu")


def _parts_table(
    summary: dict[str, Any], key: str, order: tuple[str, ...], title: str, scale: float, digits: int
) -> list[str]:
    """A table of each scenario's `key` (a mapping of parts to medians), its columns the parts
    any row has, in `order` (a JSON round trip sorts keys) and then by name, each value times
    `scale`, and their sum; rows without one are left out ([] when none has one)."""
    rows = [s for s in summary["scenarios"] if s.get(key)]
    if not rows:
        return []
    found = {n for s in rows for n in s[key]}
    names = [n for n in order if n in found] + sorted(found.difference(order))
    lines = [
        "",
        title,
        "",
        "| scenario | " + " | ".join(names) + " | sum |",
        "|---|" + "---|" * (len(names) + 1),
    ]
    for s in rows:
        values = [s[key].get(n, 0) * scale for n in names]
        cells = " | ".join(f"{x:.{digits}f}" for x in [*values, sum(values)])
        lines.append(f"| {s['scenario']} | {cells} |")
    return lines


def render_stages(summary: dict[str, Any]) -> list[str]:
    """Where the pass step goes: each scenario's median CPU ms per stage (rows that ran a
    pass), and the stages' sum."""
    title = "where the pass step goes (median CPU ms per stage, `reconciler.pass_.STAGES`):"
    return _parts_table(summary, "stageCpuSeconds", STAGES, title, 1000, 1)


def render_written(summary: dict[str, Any]) -> list[str]:
    """What each scenario's commit writes: the median KiB of its new objects by part of the
    output tree (before compression: what `git fast-import` hashes and deflates, and the push
    sends), and their sum."""
    title = "what each commit writes (new objects, median KiB by part of the output tree):"
    return _parts_table(summary, "writtenBytes", PARTS, title, 1 / 1024, 0)


def render_markdown(summary: dict[str, Any]) -> str:
    """The table printed to stdout."""
    served = bool(summary.get("gitDaemon"))
    server_head = " remote git CPU s |" if served else ""
    lines = [
        f"fleet `{summary['size']}` (seed {summary['seed']}): {summary['fleet']}",
        "",
        "| scenario | trials | median s | min s | max s | CPU s (median) | without fetch, push |"
        + server_head
        + " commit s | push s | files changed (median) | KiB added (median) | peak RSS MiB | outcome |",
        "|---|---|---|---|---|---|---|" + ("---|" if served else "") + "---|---|---|---|---|---|",
    ]
    for s in summary["scenarios"]:
        t, steps = s["seconds"], [s["cpuSeconds"], s["commitSeconds"], s["pushSeconds"]]
        steps[1:1] = [s["passCpuSeconds"]] + ([s["serverCpuSeconds"]] if served else [])
        lines.append(
            f"| {s['scenario']} | {s['trials']} | {t['median']:.3f} | {t['min']:.3f} | {t['max']:.3f} | "
            + " | ".join(f"{x['median']:.3f}" for x in steps)
            + f" | {s['files']['median']:.0f} | {s['bytesAdded']['median'] / 1024:.0f} | {s['maxRssMiB']:.0f} | {', '.join(s['outcomes'])} |"
        )
    lines += render_stages(summary)
    lines += render_written(summary)
    c = summary["checks"]
    if "failed" in c:
        return "\n".join([*lines, "", f"**CHECK FAILED, the run does not count**: {c['failed']}"])
    lines += [
        "",
        f"check 1 (incremental clusters/ == fresh full render): {c['incremental']}",
        f"check 2 (same tree id in {c['processes']} processes): {c['treeIds']}",
        f"check 3 (no-op pass makes no commit): {c['noop']}",
    ]
    return "\n".join(lines)
