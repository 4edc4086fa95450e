"""The `schema` command: print or write the JSON Schema of the kinds gitfleet reads (generated
from the models by `gitfleet.api.schema`). Registered on `gitfleet.cli.app.main`.
"""

from __future__ import annotations

from pathlib import Path

import click

from gitfleet.api.schema import kind_schemas, schema_text
from gitfleet.cli.app import main


def write_schemas(directory: Path) -> list[str]:
    """Write `<Kind>.json` for every kind into `directory`; the file names written."""
    directory.mkdir(parents=True, exist_ok=True)
    names = []
    for kind, schema in kind_schemas().items():
        path = directory / f"{kind}.json"
        text = schema_text(schema)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        names.append(path.name)
    return names


@main.command("schema")
@click.argument("kind", required=False)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write <Kind>.json for every kind into this directory instead of printing one.",
)
def schema_cmd(kind: str | None, out_dir: Path | None) -> None:
    """Print the JSON Schema of KIND (e.g. ClusterResourcePlacement), or write every kind's
    schema into --out (editor support: `# yaml-language-server: $schema=<file>`)."""
    schemas = kind_schemas()
    if out_dir is not None:
        if kind is not None:
            raise click.UsageError("give either KIND or --out, not both")
        names = write_schemas(out_dir)
        click.echo(f"wrote {len(names)} schema(s) to {out_dir}")
        return
    if kind is None or kind not in schemas:
        known = ", ".join(schemas)
        raise click.UsageError(
            f"KIND must be one of: {known}" if kind else f"KIND? one of: {known}"
        )
    click.echo(schema_text(schemas[kind]), nl=False)
