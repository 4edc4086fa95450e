"""Progress of long commands on a terminal: one spinner line per stage (load, schedule and
render, write, ...) with its elapsed time, drawn by rich on stderr, so a 30-second render does
not look hung. Silent when stderr is not a terminal or with `--quiet` (`quiet_option`, shared by
every command that shows progress). Used by `gitfleet.cli.app.run_pass` and the commands.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

_state = {"quiet": False}


def _set_quiet(_ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        _state["quiet"] = True


quiet_option = click.option(
    "--quiet",
    "-q",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_set_quiet,
    help="No progress display on stderr (it is shown only on a terminal anyway).",
)


class Stages:
    """Call with a stage name to finish the current stage and start the next one."""

    def __init__(self, progress: Progress | None) -> None:
        self._progress = progress
        self._task: TaskID | None = None

    def __call__(self, name: str) -> None:
        if self._progress is None:
            return
        self.finish()
        self._task = self._progress.add_task(name, total=None)

    def finish(self) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, total=1, completed=1)
            self._progress.stop_task(self._task)
            self._task = None


def enabled() -> bool:
    """Progress is drawn only on a terminal and without `--quiet`."""
    return not _state["quiet"] and sys.stderr.isatty()


@contextmanager
def stages() -> Iterator[Stages]:
    """A `Stages` that draws on stderr when `enabled()`, else does nothing."""
    if not enabled():
        yield Stages(None)
        return
    columns = (SpinnerColumn(finished_text="✓"), TextColumn("{task.description}"))
    with Progress(
        *columns, TimeElapsedColumn(), console=Console(stderr=True), transient=True
    ) as progress:
        steps = Stages(progress)
        try:
            yield steps
        finally:
            steps.finish()
