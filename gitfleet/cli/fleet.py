"""Commands on a fleet folder or revision: `validate`, `render`, `explain`. Registered on `gitfleet.cli.app.main`."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click
import yaml

from gitfleet.cli.app import (
    Run,
    _now,
    _print_errors,
    _summary,
    fleet_argument,
    hub_key_option,
    main,
    now_option,
    one_pass,
    output_option,
    ref_option,
    reports_option,
    run_pass,
    status_option,
)
from gitfleet.cli.progress import quiet_option, stages
from gitfleet.repo.outdir import OutputError, read_output, write_output
from reconciler import describe
from reconciler.output import placement_key
from reconciler.state import State, read_state


@main.command()
@fleet_argument
@ref_option
@status_option
@now_option
@output_option
@quiet_option
@click.option("--strict", is_flag=True, help="Treat warnings as errors (exit 1), e.g. in CI.")
@hub_key_option
@one_pass
def validate(
    fleet: Path, ref: str | None, status_dir: Path | None, now: str | None, fmt: str, strict: bool
) -> None:
    """Load FLEET and run the full pass without writing; list every error as FILE:LINE: field: message.

    Also prints `warning:` lines for input that is accepted but probably not meant (a selector
    that finds nothing, an unknown PickFixed cluster, a field gitfleet does not implement) and
    `note:` lines about how input was read; `--strict` makes warnings errors."""
    run = run_pass(fleet, ref, status_dir, State(), _now(now), lint=True)
    _print_held(run, fmt)
    _report(run, fmt, "valid", strict, lint=True)


def _print_held(run: Run, fmt: str) -> None:
    """Deletions the mass-deletion guard holds, and placements whose rollout is held (External
    strategy, no update run targets them)."""
    if fmt != "text":
        return
    for hold in run.result.deletion_holds:
        click.echo(f"DELETION HELD: placement {hold.key}: {hold.message()}")
    for key, plan in sorted(run.result.plans.items()):
        if plan.rollout_note:
            click.echo(f"placement {key}: {plan.rollout_note}")


@main.command()
@fleet_argument
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory to write the output tree to.",
)
@ref_option
@status_option
@reports_option
@now_option
@output_option
@quiet_option
@click.option("--fresh", is_flag=True, help="Ignore the state/ a previous render left in --out.")
@hub_key_option
@one_pass
def render(
    fleet: Path,
    out_dir: Path,
    ref: str | None,
    status_dir: Path | None,
    reports_dir: Path | None,
    now: str | None,
    fmt: str,
    fresh: bool,
) -> None:
    """Render FLEET offline into OUT: clusters/, status/ and state/ as on the output branch."""
    prior = State()
    if not fresh and out_dir.is_dir():
        prior, problems = read_state(read_output(out_dir, ""))
        for problem in problems:
            click.echo(f"warning: {problem}", err=True)
    run = run_pass(fleet, ref, status_dir, prior, _now(now), reports_dir)
    try:
        with stages() as stage:
            stage(f"write {out_dir}")
            written = write_output(out_dir, run.result.files)
    except (OutputError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    if fmt == "text":
        click.echo(
            f"wrote {out_dir}: {len(written.written)} changed, {len(written.unchanged)} unchanged, {len(written.removed)} removed"
        )
    _print_held(run, fmt)
    _report(run, fmt, "rendered")


def _report(
    run: Run,
    fmt: str,
    verb: str,
    strict: bool = False,
    lint: bool = False,
    extra: Sequence[str] = (),
) -> None:
    """Errors (and for `validate`, notes and warnings: the loader's plus `extra`), a summary
    line, the exit code (1 on errors, or on warnings with `strict`)."""
    if not lint:
        _report_errors(run, fmt, verb)
        return
    warnings = [*map(str, run.fleet.warnings), *extra]
    failed = bool(run.errors) or (strict and bool(warnings))
    if fmt == "json":
        summary = _summary(run)
        summary["warnings"] = warnings
        summary["notes"] = [str(n) for n in run.fleet.notes]
        click.echo(json.dumps(summary, indent=2, sort_keys=True))
    else:
        _print_errors(run.errors)
        for note in run.fleet.notes:
            click.echo(f"note: {note}", err=True)
        for warning in warnings:
            click.echo(f"{'error' if strict else 'warning'}: {warning}", err=True)
        s = _summary(run)
        click.echo(
            f"{verb if not failed else 'errors found'}: {s['clusters']} cluster(s), "
            f"{s['placements']} placement(s), {s['resources']} resource(s), "
            f"{len(run.errors)} error(s), {len(warnings)} warning(s)"
        )
    sys.exit(1 if failed else 0)


def _report_errors(run: Run, fmt: str, verb: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(_summary(run), indent=2, sort_keys=True))
    else:
        _print_errors(run.errors)
        s = _summary(run)
        click.echo(
            f"{verb if not run.errors else 'errors found'}: {s['clusters']} cluster(s), "
            f"{s['placements']} placement(s), {s['resources']} resource(s), {len(run.errors)} error(s)"
        )
    sys.exit(1 if run.errors else 0)


@main.command()
@click.argument("what", type=click.Choice(["placement", "distribution"]))
@click.argument("name")
@click.argument(
    "fleet",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=".",
    required=False,
)
@click.option(
    "--namespace",
    "-n",
    default="",
    help="The namespace of a ResourcePlacement or ReplicaDistribution.",
)
@click.option("--cluster", help="Explain only this cluster.")
@ref_option
@status_option
@now_option
@click.option(
    "--output", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@quiet_option
@hub_key_option
@one_pass
def explain(
    what: str,
    name: str,
    fleet: Path,
    namespace: str,
    cluster: str | None,
    ref: str | None,
    status_dir: Path | None,
    now: str | None,
    fmt: str,
) -> None:
    """Why each cluster was or was not picked: the first filter that rejected it (KubeFleet's
    reason strings), its scores and its rank. `explain distribution NAME -n NAMESPACE`: a
    ReplicaDistribution's allocation per subset and cluster, and the rule behind each number."""
    run = run_pass(fleet, ref, status_dir, State(), _now(now))
    if what == "distribution":
        _explain_distribution(run, name, namespace, fmt)
        return
    key = placement_key(name, namespace)
    if key not in run.result.explanations:
        raise click.ClickException(
            f"placement {key} is not in the fleet (or failed to load: run `gitfleet validate`)"
        )
    rows = describe.explanation_rows(run.result.explanations[key], cluster)
    if cluster is not None and not rows:
        raise click.ClickException(f"cluster {cluster} is not a member of the fleet")
    click.echo(
        json.dumps({"placement": key, "clusters": rows}, indent=2, sort_keys=True)
        if fmt == "json"
        else describe.describe_explanations(key, rows),
        nl=False,
    )


def _explain_distribution(run: Run, name: str, namespace: str, fmt: str) -> None:
    path = f"status/replicadistributions/{namespace or 'default'}/{name}.yaml"
    data = run.result.files.get(path)
    if data is None:
        raise click.ClickException(
            f"ReplicaDistribution {namespace or 'default'}/{name} is not in the fleet (or failed "
            "to load: run `gitfleet validate`); give its namespace with -n"
        )
    doc = yaml.safe_load(data)
    click.echo(
        json.dumps(doc.get("status") or {}, indent=2, sort_keys=True)
        if fmt == "json"
        else describe.describe_distribution(doc),
        nl=False,
    )
