"""`Mirror`: the private bare repository a reconciler or agent works in, tied to one remote.

`Mirror.open(cache_dir, url)` admits the URL (`remote.check_url`), creates or reopens a bare
repository at `cache_dir` (refusing one made for another remote) and then offers: `fetch`
(explicit refspecs, no tags, no submodules, pruned), `resolve`, `is_ancestor`, `list_refs`,
`list_tips` (every ref under a prefix with its object type, in one call) and `tip_commit`,
`update_ref` (compare-and-swap), `maintain` (auto gc), `log` (commits with parsed trailers,
for `gitfleet history`) and `push_fast_forward` (lease on the expected old value plus a local
ancestry check, never a plain force; a moved branch is reported as `rejected`, not raised).
Like `git push` to a configured remote, a successful push moves the local ref an earlier
`fetch` refspec maps the branch to (the remote-tracking ref), so the next fetch neither
downloads the pushed objects again nor re-checks their connectivity against the previous tip
(a walk of its whole tree, see benchmarks/README.md "Push cost at fleet-1k"). Every call runs
with `GIT_DIR` pinned to the mirror, network calls with the remote's single allowed protocol and
`-c protocol.allow=never` hardening; all messages are redacted. Writes of trees and commits go
through `gitwrite.commit_files`/`replace_tree` on `Mirror.path`. `Mirror.objects` holds the
long-running `cat-file` processes of the hub's readers (`objects.ObjectReader`; restarted when
`maintain` removed packs). Called by the reconciler loop, the agent and the CLI.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitfleet.repo.commitlog import LogEntry as LogEntry
from gitfleet.repo.commitlog import log_args, parse_log
from gitfleet.repo.faststream import ZERO_OID
from gitfleet.repo.gitcmd import (
    GitError,
    GitResult,
    known_ancestor,
    last_lines,
    redact_url,
    remember_commit,
    run_git,
    validate_ref,
)
from gitfleet.repo.gitwrite import check_path
from gitfleet.repo.objects import ObjectReader
from gitfleet.repo.packs import fold_small_packs
from gitfleet.repo.remote import RemoteURL, check_url

_REFSPEC = re.compile(r"(\+?)(refs/[^:]+):(refs/[^:]+)")
_MISSING_REF = re.compile(r"couldn't find remote ref (\S+)")
_URL_KEY = "gitfleet.url"
_GIT_INT = re.compile(r"(-?[0-9]+)([kmg]?)")
_SCALE = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


@dataclass(frozen=True)
class PushResult:
    """Outcome of a fast-forward push: `ok`, or `rejected` because the branch moved."""

    ok: bool
    rejected: bool
    message: str


@dataclass(frozen=True)
class FetchResult:
    """Source refs of exact refspecs the remote did not have (their local copies removed)."""

    missing: tuple[str, ...] = ()


class Mirror:
    """A bare repository at `path` that fetches from and pushes to one admitted remote."""

    def __init__(self, path: Path, remote: RemoteURL, *, timeout: float = 120.0) -> None:
        self._path = path
        self._remote = remote
        self._timeout = timeout
        self._refspecs: dict[str, tuple[str, str]] = {}
        """Refspecs already checked (`_check_refspec`): a loop fetches the same ones each pass."""
        self._tracking: dict[str, str] = {}
        """Remote ref (or glob) -> local ref, from every refspec `fetch` was given."""
        self._gc_limits: tuple[int, int] | None = None
        """`gc.auto` and `gc.autoPackLimit` as git reads them (read at the first `maintain`)."""
        self.objects = ObjectReader(path)
        """Long-running `cat-file` processes for the long-running hub's readers (`objects.py`;
        none starts until something is read)."""

    @classmethod
    def open(
        cls, cache_dir: Path, url: str, *, base: Path | None = None, timeout: float = 120.0
    ) -> Mirror:
        """Admit `url`, then create or reopen the bare repository at `cache_dir`."""
        remote = check_url(url, base=base)
        path = Path(cache_dir).absolute()
        mirror = cls(path, remote, timeout=timeout)
        if (path / "HEAD").is_file() and (path / "objects").is_dir():
            recorded = mirror._git(["config", "--get", _URL_KEY], check=False)
            raw = recorded.stdout.decode("utf-8", "replace").strip()
            known = redact_url(raw)
            if known != remote.redacted:
                raise GitError(f"{path} is a mirror of {known or 'another repository'!r}")
            if raw != known:  # written by an older version that kept query tokens
                mirror._git(["config", _URL_KEY, known])
            return mirror
        path.mkdir(parents=True, exist_ok=True)
        if any(path.iterdir()):
            raise GitError(f"{path} exists and is not a gitfleet mirror")
        run_git(path, ["init", "--bare", "--quiet"], env={"GIT_DIR": str(path)})
        mirror._git(["config", _URL_KEY, remote.redacted])
        return mirror

    @property
    def path(self) -> Path:
        return self._path

    @property
    def url(self) -> str:
        """The remote, redacted (safe for logs and status)."""
        return self._remote.redacted

    def fetch(
        self, refspecs: Sequence[str], *, prune: bool = True, maintenance: bool = True
    ) -> FetchResult:
        """Fetch `refspecs` (`[+]refs/...:refs/...`, globs allowed). An exact source ref the
        remote lacks is skipped and its local destination deleted (a branch not created yet).
        `maintenance=False`: git does not start `maintenance run --auto` after the fetch (one
        more process, ~2-7 ms of git CPU, more with more packs) — for a caller that runs
        `maintain` itself after every fetch."""
        pending = {self._check_refspec(spec): spec for spec in refspecs}
        self._tracking.update(pending.keys())
        missing: list[str] = []
        quiet = {} if maintenance else _NO_AUTO_MAINTENANCE
        while pending:
            args = ["fetch", "--no-tags", "--no-recurse-submodules", "--no-write-fetch-head"]
            args += ["--prune"] if prune else []
            result = self._network([*args, "--", self._remote.url, *pending.values()], quiet)
            gone = _MISSING_REF.findall(result.stderr)
            if result.returncode == 0:
                break
            sources = {src for src, _dst in pending if src in gone or _short(src) in gone}
            if not sources:
                raise GitError(f"git fetch from {self.url} failed: {_tail(result.stderr)}")
            for src, dst in [key for key in pending if key[0] in sources]:
                missing.append(src)
                self._git(["update-ref", "-d", "--", dst], check=False)
                del pending[(src, dst)]
        return FetchResult(tuple(sorted(missing)))

    def resolve(self, ref: str) -> str | None:
        """The commit `ref` names in the mirror, or None when it does not exist."""
        validate_ref(self._path, ref)
        result = self._git(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
            check=False,
        )
        text = result.stdout.decode("ascii", "replace").strip()
        return text if result.returncode == 0 and text else None

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """True when `ancestor` is reachable from `descendant` (equal counts). GitError when
        either does not resolve."""
        return self._descends(self._must_resolve(ancestor), self._must_resolve(descendant))

    def _descends(self, first: str, second: str) -> bool:
        """`merge-base --is-ancestor` on two resolved commit ids (no git when the pass knows:
        the same commit, or one this process wrote on top of `first`)."""
        if known_ancestor(self._path, first, second):
            return True
        result = self._git(["merge-base", "--is-ancestor", first, second], check=False)
        if result.returncode not in (0, 1):
            raise GitError(f"git merge-base failed: {_tail(result.stderr)}")
        return result.returncode == 0

    def list_refs(self, prefix: str) -> dict[str, str]:
        """Refs under `prefix` (e.g. `refs/remotes/origin/gitfleet/status/`) -> commit, sorted."""
        return {name: oid for name, (oid, _kind) in self.list_tips(prefix).items()}

    def list_tips(self, prefix: str) -> dict[str, tuple[str, str]]:
        """Refs under `prefix` -> (object id, object type) from one `for-each-ref`, sorted by
        name: the hub lists every remote-tracking ref of a pass at once (`reconciler.loop`)."""
        if not prefix.startswith("refs/") or any(ch in prefix for ch in "*?[\\ \t\n"):
            raise GitError(f"invalid ref prefix {prefix!r}")
        fmt = "--format=%(objectname) %(objecttype) %(refname)"
        out = self._git(["for-each-ref", fmt, "--", prefix])
        refs: dict[str, tuple[str, str]] = {}
        for line in out.stdout.decode("utf-8", "replace").splitlines():
            oid, _, rest = line.partition(" ")
            kind, _, name = rest.partition(" ")
            refs[name] = (oid, kind)
        return dict(sorted(refs.items()))

    def tip_commit(self, tips: Mapping[str, tuple[str, str]], ref: str) -> str | None:
        """The commit `ref` names, from a `list_tips` listing; git peels it only when it names
        another kind of object (None: no such ref, or no commit)."""
        oid, kind = tips.get(ref, ("", ""))
        if kind == "commit":
            remember_commit(self._path, oid)  # later peels of this id need no git
            return oid
        return self.resolve(ref) if oid else None

    def update_ref(self, ref: str, new: str | None, old: str | None) -> None:
        """Set (or delete, `new=None`) `ref` only if it currently equals `old` (None: absent)."""
        if not ref.startswith("refs/"):
            raise GitError(f"invalid ref {ref!r}: a full refs/... name is required")
        validate_ref(self._path, ref)
        expected = old if old is not None else ZERO_OID
        if new is None:
            self._git(["update-ref", "-d", "--", ref, expected])
        else:
            self._git(["update-ref", "--", ref, self._must_resolve(new), expected])

    def log(
        self, ref: str, *, paths: Sequence[str] = (), max_count: int | None = None
    ) -> list[LogEntry]:
        """Commits reachable from `ref` (newest first), optionally only those touching `paths`."""
        for path in paths:
            check_path(path)
        commit = self._must_resolve(ref)
        out = self._git([*log_args(max_count), "--end-of-options", commit, "--", *paths])
        return parse_log(out.stdout)

    def push_fast_forward(
        self, local_commit: str, remote_branch: str, expected_old: str | None
    ) -> PushResult:
        """Push `local_commit` to `refs/heads/<remote_branch>` if the remote branch still is
        `expected_old` (None: must not exist) and `local_commit` descends from it."""
        branch = remote_branch.removeprefix("refs/heads/")
        target = f"refs/heads/{branch}"
        validate_ref(self._path, target)
        new = self._must_resolve(local_commit)
        old = self._must_resolve(expected_old) if expected_old is not None else None
        if old is not None and not self._descends(old, new):
            return PushResult(False, True, f"{target}: {new[:12]} does not descend from {old[:12]}")
        args = ["push", "--porcelain", "--no-verify", "--recurse-submodules=no"]
        args.append(f"--force-with-lease={target}:{old or ''}")
        result = self._network([*args, "--", self._remote.url, f"{new}:{target}"])
        outcome = _push_outcome(result, target, self.url)
        if outcome.ok:
            self._track(target, new)
        return outcome

    def tracking_ref(self, remote_ref: str) -> str | None:
        """The local ref a `fetch` refspec of this mirror maps `remote_ref` to (None: none).
        An exact refspec wins over a glob; among globs, the first fetched."""
        exact = self._tracking.get(remote_ref)
        if exact is not None and "*" not in remote_ref:
            return exact
        for src, dst in self._tracking.items():
            head, star, tail = src.partition("*")
            middle = remote_ref[len(head) : len(remote_ref) - len(tail)]
            if star and middle and remote_ref == head + middle + tail:
                return dst.replace("*", middle, 1)
        return None

    def _track(self, remote_ref: str, commit: str) -> None:
        """After a successful push: the remote ref is `commit`, so its remote-tracking ref is
        too. A failure is harmless (the next fetch sets the ref), so it is not raised. (A push
        to a remote named with `-c remote.<name>.url/fetch` moves it too, but costs ~9 ms more
        git CPU than this `update-ref` at fleet-1k: measured, not taken.)"""
        local = self.tracking_ref(remote_ref)
        if local is not None:
            self._git(["update-ref", "-m", "gitfleet push", "--", local, commit], check=False)

    def maintain(self) -> None:
        """`git gc --auto`: fold the loose objects (fewer than 100 per write) or packs that
        fast-import and fetch leave per commit (call between passes). Git is not started when
        the repository is below both of `gc --auto`'s thresholds (`_gc_due`). Small packs of
        the hub's commits are folded first (`packs.fold_small_packs`)."""
        if fold_small_packs(self._path):
            self.objects.restart()  # its packs were removed: list them afresh
        if not self._gc_due():
            return
        self.objects.restart()
        run_git(
            self._path,
            ["gc", "--auto", "--quiet"],
            env={"GIT_DIR": str(self._path)},
            config={"gc.autoDetach": "false"},
            timeout=self._timeout,
        )

    def _gc_due(self) -> bool:
        """Whether `gc --auto` could act, by its own two tests: more local packs without a
        `.keep` than `gc.autoPackLimit`, or more loose objects in `objects/17` than
        `gc.auto` / 256 (git samples that one directory). The settings are read once."""
        if self._gc_limits is None:
            self._gc_limits = self._read_gc_limits()
        loose_limit, pack_limit = self._gc_limits
        if loose_limit <= 0:
            return False
        packs = self._path / "objects" / "pack"
        kept = 0
        if pack_limit > 0 and packs.is_dir():
            names = {entry.name for entry in packs.iterdir()}
            kept = sum(1 for n in names if n.endswith(".pack") and n[:-5] + ".keep" not in names)
        if pack_limit > 0 and kept > pack_limit:
            return True
        sample = self._path / "objects" / "17"
        loose = sum(1 for e in sample.iterdir() if len(e.name) == 38) if sample.is_dir() else 0
        return loose > -(-loose_limit // 256)

    def _read_gc_limits(self) -> tuple[int, int]:
        """(`gc.auto`, `gc.autoPackLimit`): git's defaults unless configured (an integer,
        optionally with a k, m or g suffix, as git reads it; anything else: run gc always)."""
        found = self._git(["config", "--get-regexp", r"^gc\.auto(packlimit)?$"], check=False)
        limits = {"gc.auto": 6700, "gc.autopacklimit": 50}
        for line in found.stdout.decode("utf-8", "replace").splitlines():
            key, _, text = line.partition(" ")
            match = _GIT_INT.fullmatch(text.strip().lower())
            if key in limits:
                limits[key] = int(match[1]) * _SCALE[match[2]] if match else 1
        return limits["gc.auto"], limits["gc.autopacklimit"]

    def _must_resolve(self, ref: str) -> str:
        commit = self.resolve(ref)
        if commit is None:
            raise GitError(f"unknown revision {redact_url(ref)!r} in mirror of {self.url}")
        return commit

    def _check_refspec(self, spec: str) -> tuple[str, str]:
        known = self._refspecs.get(spec)
        if known is not None:
            return known
        match = _REFSPEC.fullmatch(spec)
        if match is None or spec.count("*") not in (0, 2):
            raise GitError(f"invalid refspec {spec!r}: expected [+]refs/...:refs/...")
        for side in (match.group(2), match.group(3)):
            check = self._git(["check-ref-format", "--refspec-pattern", side], check=False)
            if check.returncode != 0 or side.count("*") > 1:
                raise GitError(f"invalid refspec {spec!r}: {side!r} is not a valid ref pattern")
        sides = self._refspecs[spec] = (match.group(2), match.group(3))
        return sides

    def _git(self, args: Sequence[str], *, check: bool = True) -> GitResult:
        return run_git(self._path, args, check=check, env={"GIT_DIR": str(self._path)})

    def _network(self, args: Sequence[str], config: Mapping[str, str] | None = None) -> GitResult:
        env = {"GIT_DIR": str(self._path), **self._remote.env()}
        return run_git(
            self._path,
            args,
            check=False,
            env=env,
            config={**self._remote.config(), **(config or {})},
            timeout=self._timeout,
        )


_NO_AUTO_MAINTENANCE = {"maintenance.auto": "false", "gc.auto": "0"}
"""`-c` options that stop `git fetch` from starting `git maintenance run --auto` (git 2.29+;
`gc --auto` before it): `Mirror.maintain` does that job for the hub."""


_LOST_RACE = "failed to update ref"


def _push_outcome(result: GitResult, target: str, url: str) -> PushResult:
    """Read `git push --porcelain` output for `target`: ok, rejected (moved) or GitError."""
    for line in result.stdout.decode("utf-8", "replace").splitlines():
        flag, _, rest = line.partition("\t")
        refs, _, summary = rest.partition("\t")
        if not refs.endswith(f":{target}"):
            continue
        summary = redact_url(summary)
        if flag in (" ", "*", "=") and result.returncode == 0:
            return PushResult(True, False, f"{target}: {summary}")
        if flag == "!" and summary.startswith("[rejected]"):
            return PushResult(False, True, f"{target}: {summary}")
        if flag == "!" and summary.startswith("[remote rejected]") and _LOST_RACE in summary:
            # The lease held when checked, but another writer's update landed first inside
            # receive-pack: the branch moved, exactly like a [rejected] push.
            return PushResult(False, True, f"{target}: {summary}")
        raise GitError(f"push of {target} to {url} refused: {summary}")
    raise GitError(f"git push to {url} failed: {_tail(result.stderr)}")


def _short(ref: str) -> str:
    return ref.removeprefix("refs/heads/")


def _tail(text: str) -> str:
    return last_lines(redact_url(text), 3)
