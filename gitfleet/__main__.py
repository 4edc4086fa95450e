"""`python -m gitfleet`: the same as the `gitfleet` console script."""

from gitfleet.cli import run

run()
