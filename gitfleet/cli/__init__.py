"""The `gitfleet` command: parse arguments, call the library, print results. Nothing else.

Commands: `init` (copy the starter fleet repository), `validate` (run the pass, write nothing,
list every error), `render` (run the pass offline and write the output tree to a directory),
`explain`, `approve` and `updaterun stop|run` (staged rollouts), `reconcile` (the hub loop on Git), `plan` (what a change does), `status` (describe a
placement or cluster), `history` (the audit trail), `agent`. One module per group of commands;
each registers on `main` from `gitfleet.cli.app`.
Exit code 0 when there is no error, 1 when the fleet has user errors, 2 for bad usage. `run`
(the console script) ends the process without freeing its heap (`gitfleet.quickexit`).
"""

from gitfleet.cli import agent, deploy, fleet, hub, init, rollout, schema
from gitfleet.cli.app import main
from gitfleet.quickexit import run_quickly


def run() -> None:
    """The console script and `python -m gitfleet`: `main`, then a quick exit
    (`gitfleet.quickexit`)."""
    run_quickly(main)


__all__ = ["agent", "deploy", "fleet", "hub", "init", "main", "rollout", "run", "schema"]
