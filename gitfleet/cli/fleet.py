"""Commands on a fleet folder or revision: `validate`, `render`, `explain`. Registered on `gitfleet.cli.app.main`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import yaml

from gitfleet.cli.app import (
    Run,
    _now,
    _print_errors,
    _summary,
    fleet_argument,
    main,
    now_option,
    output_option,
    ref_option,
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
def validate(
    fleet: Path, ref: str | None, status_dir: Path | None, now: str | None, fmt: str
) -> None:
    """Load FLEET and run the full pass without writing; list every error as FILE:LINE: field: message."""
    run = run_pass(fleet, ref, status_dir, State(), _now(now))
    _warn_staged_runs(run)
    _report(run, fmt, "valid")


def _warn_staged_runs(run: Run) -> None:
    """Staged update runs load and validate, but no pass executes them on this version."""
    runs = [("ClusterStagedUpdateRun", "", n) for n in run.fleet.update_runs]
    runs += [("StagedUpdateRun", ns, n) for ns, n in run.fleet.staged_update_runs]
    for key in sorted(runs):
        origin = run.fleet.origins.get(key)
        where = f"{origin.file}:{origin.line}: " if origin else ""
        name = f"{key[1]}/{key[2]}" if key[1] else key[2]
        click.echo(
            f"warning: {where}{key[0]} {name}: staged update runs are not executed yet (this "
            "version validates them but the rollout stage for External placements is not built)",
            err=True,
        )


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
@now_option
@output_option
@quiet_option
@click.option("--fresh", is_flag=True, help="Ignore the state/ a previous render left in --out.")
def render(
    fleet: Path,
    out_dir: Path,
    ref: str | None,
    status_dir: Path | None,
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
    run = run_pass(fleet, ref, status_dir, prior, _now(now))
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
    _report(run, fmt, "rendered")


def _report(run: Run, fmt: str, verb: str) -> None:
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
