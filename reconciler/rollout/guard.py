"""One run's unexpected failure is that run's error, never the pass's.

The rollout drivers (`reconciler.rollout.drivers`) step many runs in one pass: staged update runs,
cluster group upgrades. An exception raised while one run is stepped (a bug, or input no rule
foresaw) is caught around that run alone: the run keeps its previous status and state documents
(its memory), moves no cluster this pass, and gets a user error at its own file and line; every
other run goes on. As in `reconciler.isolate` (the same guard for one placement's work), the
message names the exception type and the innermost code location only: exception text can carry
input values, and those may be secret. Called by `reconciler.rollout.staged`,
`reconciler.rollout.cgu` and (for a driver that fails outside any run) `reconciler.rollstage`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gitfleet.api.errors import describe_exception

Located = tuple[str, int | None, str, str]
"""(file, line, field path, message): a driver's user error."""


def run_fault(source: str, file: str, line: int | None, exc: BaseException) -> Located:
    """The located error of run `source` whose step raised `exc`."""
    return (
        file,
        line,
        "",
        f"internal error while driving {source}: {describe_exception(exc)}; it keeps its "
        "previous status and moves no cluster this pass",
    )


def driver_fault(name: str, exc: BaseException) -> str:
    """The message of a driver that failed outside any one run."""
    return (
        f"internal error in the rollout driver {name}: {describe_exception(exc)}; its runs keep "
        "their previous status and move no cluster this pass"
    )


def kept(prior: Mapping[str, bytes], paths: Iterable[str]) -> dict[str, bytes]:
    """The previous output's bytes of `paths` (those it had)."""
    return {p: prior[p] for p in paths if p in prior}


def kept_under(prior: Mapping[str, bytes], prefixes: tuple[str, ...]) -> dict[str, bytes]:
    """Every previous output file under one of `prefixes`."""
    return {p: data for p, data in prior.items() if p.startswith(prefixes)} if prefixes else {}
