"""The collector policy of one-pass commands (`reconciler.heap.one_pass_heap`, `gitfleet.cli.app.one_pass`):
set for the command's duration, the caller's thresholds back after it, also when it fails."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from gitfleet.cli.app import one_pass
from reconciler.heap import OLD_THRESHOLD, YOUNG_THRESHOLD, one_pass_heap


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*before)


def test_set_during_and_restored_after(thresholds: tuple[int, int, int]) -> None:
    with one_pass_heap():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, thresholds[1], OLD_THRESHOLD)
    assert gc.get_threshold() == thresholds


@pytest.mark.parametrize("error", [ValueError("bad"), SystemExit(1)])
def test_restored_when_the_command_fails_or_exits(
    thresholds: tuple[int, int, int], error: BaseException
) -> None:
    with pytest.raises(type(error)), one_pass_heap():
        raise error
    assert gc.get_threshold() == thresholds


def test_a_decorated_command_runs_under_it(thresholds: tuple[int, int, int]) -> None:
    seen: list[tuple[int, int, int]] = []

    @click.command()
    @click.option("--code", type=int, default=0)
    @one_pass
    def command(code: int) -> None:
        seen.append(gc.get_threshold())
        raise SystemExit(code)

    result = CliRunner().invoke(command, ["--code", "3"])
    assert result.exit_code == 3
    assert seen == [(YOUNG_THRESHOLD, thresholds[1], OLD_THRESHOLD)]
    assert gc.get_threshold() == thresholds
