"""The collector policy of one-pass commands (`reconciler.heap.one_pass_heap`, `gitfleet.cli.app.one_pass`):
no collection for the command's duration, what it made moved to the oldest generation unwalked
when it ends (what someone else froze stays frozen), and the caller's collector state back
after it, also when it fails."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from gitfleet.cli.app import one_pass
from reconciler.heap import one_pass_heap


@pytest.fixture(params=[True, False], ids=["enabled", "disabled"])
def collecting(request: pytest.FixtureRequest) -> Iterator[bool]:
    before = gc.isenabled()
    if request.param:
        gc.enable()
    else:
        gc.disable()
    yield request.param
    if before:
        gc.enable()
    else:
        gc.disable()


def _ids(generation: int) -> set[int]:
    return {id(obj) for obj in gc.get_objects(generation)}


def test_off_during_and_restored_after(collecting: bool) -> None:
    gc.unfreeze()  # what an earlier test (a hub run in-process) froze: it would keep made young
    thresholds = gc.get_threshold()
    with one_pass_heap():
        assert not gc.isenabled()
        made = [[n] for n in range(1000)]  # tracked containers, young when made
        collections = [s["collections"] for s in gc.get_stats()]
    assert gc.isenabled() is collecting
    assert gc.get_threshold() == thresholds
    assert [s["collections"] for s in gc.get_stats()] == collections  # nothing walked at the end
    assert id(made) not in _ids(0) | _ids(1) and id(made) in _ids(2)


def test_what_another_froze_stays_frozen(collecting: bool) -> None:
    kept = [[n] for n in range(100)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with one_pass_heap():
            made = [[n] for n in range(100)]
        assert gc.get_freeze_count() == frozen  # neither thawed nor grown
        assert id(kept) not in _ids(2) and made
        assert gc.isenabled() is collecting
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("error", [ValueError("bad"), SystemExit(1)])
def test_restored_when_the_command_fails_or_exits(collecting: bool, error: BaseException) -> None:
    with pytest.raises(type(error)), one_pass_heap():
        raise error
    assert gc.isenabled() is collecting


def test_a_decorated_command_runs_under_it(collecting: bool) -> None:
    seen: list[bool] = []

    @click.command()
    @click.option("--code", type=int, default=0)
    @one_pass
    def command(code: int) -> None:
        seen.append(gc.isenabled())
        raise SystemExit(code)

    result = CliRunner().invoke(command, ["--code", "3"])
    assert result.exit_code == 3
    assert seen == [False]
    assert gc.isenabled() is collecting
