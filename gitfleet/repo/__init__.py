"""The only code in gitfleet that runs git or writes output trees.

Read views of a fleet repository (`WorkdirTree`, `GitTree`, both satisfying the `Tree` protocol),
the hardened git runner (`run_git`, `git_env`, `redact_url`), the output-tree writer
(`write_output`, `read_output`), commits without a working tree (`commit_files`, `replace_tree`),
the bare `Mirror` of a remote (fetch, fast-forward push, log) with URL admission (`check_url`)
and commit-message trailers. Imports only `gitfleet.api`.
"""

from gitfleet.repo.gitcmd import (
    GitError,
    GitResult,
    git_env,
    redact_url,
    resolve_revision,
    run_git,
    validate_ref,
)
from gitfleet.repo.gitread import GitTree
from gitfleet.repo.gitwrite import (
    CommitResult,
    Identity,
    PathError,
    blob_id,
    commit_files,
    replace_tree,
)
from gitfleet.repo.mirror import FetchResult, LogEntry, Mirror, PushResult
from gitfleet.repo.outdir import MARKER, OutputError, WriteResult, read_output, write_output
from gitfleet.repo.remote import RemoteURL, check_url
from gitfleet.repo.trailers import compose_message, format_trailers, parse_trailers
from gitfleet.repo.tree import Tree, is_contained, is_hidden, relpath_problem
from gitfleet.repo.userrepo import init_repository, is_repository, origin_url
from gitfleet.repo.workdir import WorkdirTree

__all__ = [
    "MARKER",
    "CommitResult",
    "FetchResult",
    "GitError",
    "GitResult",
    "GitTree",
    "Identity",
    "LogEntry",
    "Mirror",
    "OutputError",
    "PathError",
    "PushResult",
    "RemoteURL",
    "Tree",
    "WorkdirTree",
    "WriteResult",
    "blob_id",
    "check_url",
    "commit_files",
    "compose_message",
    "format_trailers",
    "git_env",
    "init_repository",
    "is_contained",
    "is_hidden",
    "is_repository",
    "origin_url",
    "parse_trailers",
    "read_output",
    "redact_url",
    "relpath_problem",
    "replace_tree",
    "resolve_revision",
    "run_git",
    "validate_ref",
    "write_output",
]
