"""The `init` command: create a starter fleet repository from the template shipped inside the
package (`gitfleet/fleet_template/` in an installed wheel, `fleet-repo-template/` in a source
checkout). Registered on `gitfleet.cli.app.main`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click

import gitfleet
from gitfleet.cli.app import main, output_option
from gitfleet.cli.schema import write_schemas
from gitfleet.repo.gitcmd import GitError
from gitfleet.repo.userrepo import init_repository

_PACKAGE = Path(gitfleet.__file__).resolve().parent


def template_dir() -> Path:
    """Where the fleet repository template is: package data first, then the source tree."""
    for candidate in (_PACKAGE / "fleet_template", _PACKAGE.parent / "fleet-repo-template"):
        if (candidate / "fleet.yaml").is_file():
            return candidate
    raise click.ClickException(
        "the fleet repository template is not installed with gitfleet "
        f"(looked in {_PACKAGE / 'fleet_template'}); reinstall the package"
    )


def _refuse_occupied(directory: Path) -> None:
    """An existing directory may hold only `.git` (an empty repository); nothing else."""
    if not directory.exists():
        return
    if not directory.is_dir():
        raise click.ClickException(f"{directory} exists and is not a directory")
    others = sorted(p.name for p in directory.iterdir() if p.name != ".git")
    if others:
        shown = ", ".join(others[:5]) + (", ..." if len(others) > 5 else "")
        raise click.ClickException(
            f"{directory} is not empty ({shown}); init needs a new or empty directory "
            "(an empty git repository is fine)"
        )


@main.command()
@click.argument("directory", type=click.Path(path_type=Path), default=".", required=False)
@click.option("--git", "make_git", is_flag=True, help="Also `git init` it (branch main).")
@output_option
def init(directory: Path, make_git: bool, fmt: str) -> None:
    """Create a starter fleet repository in DIRECTORY (default: the current directory, which
    must be empty or an empty git repository)."""
    _refuse_occupied(directory)
    source = template_dir()
    if make_git and not (directory / ".git").exists():
        try:
            init_repository(directory)
        except GitError as exc:
            raise click.ClickException(str(exc)) from None
    shutil.copytree(source, directory, dirs_exist_ok=True, symlinks=False)
    schemas = write_schemas(directory / ".schemas")  # the installed version's schemas, for editors
    shown = str(directory)
    if fmt == "json":
        doc = {"created": shown, "git": (directory / ".git").exists(), "schemas": len(schemas)}
        click.echo(json.dumps(doc, sort_keys=True))
        return
    click.echo(f"created a fleet repository in {shown}")
    click.echo("next: edit clusters/, resources/ and placements/, then")
    click.echo(f"  gitfleet validate {shown}")
    if (directory / ".git").exists():
        click.echo(f"  git -C {shown} add -A && git -C {shown} commit -m 'fleet'")
