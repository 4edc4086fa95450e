"""The only code in gitfleet that runs git or writes output trees.

Read views of a fleet repository (`WorkdirTree`, `GitTree`, both satisfying the `Tree` protocol),
the hardened git runner (`run_git`, `git_env`, `redact_url`) and the output-tree writer
(`write_output`, `read_output`). Imports only `gitfleet.api`.
"""

from gitfleet.repo.gitcmd import GitError, GitResult, git_env, redact_url, run_git, validate_ref
from gitfleet.repo.gitread import GitTree
from gitfleet.repo.outdir import MARKER, OutputError, WriteResult, read_output, write_output
from gitfleet.repo.tree import Tree, is_contained, is_hidden, relpath_problem
from gitfleet.repo.workdir import WorkdirTree

__all__ = [
    "MARKER",
    "GitError",
    "GitResult",
    "GitTree",
    "OutputError",
    "Tree",
    "WorkdirTree",
    "WriteResult",
    "git_env",
    "is_contained",
    "is_hidden",
    "read_output",
    "redact_url",
    "relpath_problem",
    "run_git",
    "validate_ref",
    "write_output",
]
