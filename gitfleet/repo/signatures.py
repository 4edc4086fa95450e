"""Commit signatures: git's own verification (SSH or GPG) against a given set of allowed keys.

`check_signatures(repo, tip, exclude, policy)` asks git (`git log --format=%G?`) for its
verdict on every commit of `tip` not reachable from the `exclude` commits (only `tip` when there
are none; only the first-parent chain when the policy says so). The allowed keys are bytes the
caller took from a trusted place (the last verified commit, or the operator's file): SSH mode
writes them to a private `gpg.ssh.allowedSignersFile`; GPG mode imports them into a private,
empty GnuPG home with `trust-model always` (the keyring holds only the allowed keys). The other
signature formats are switched off for the call (`gpg.<format>.program=false`), so a GPG
signature never counts in SSH mode and the reverse; only git's `G` verdict is good.
`sign_commit` re-creates a commit with an SSH signature (`git commit-tree -S`, `gpg.format=ssh`,
`user.signingKey`); `CommitFiles` reads files at any commit through one `git cat-file --batch`.
Called by `gitfleet.repo.trust` (the hub), the agent, `gitwrite` and `gitfleet plan`.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from gitfleet.repo.commitwalk import first_parents
from gitfleet.repo.gitcmd import GitError, run_git
from gitfleet.repo.objects import ObjectReader
from gitfleet.repo.workdir import SYMLINK_MESSAGE

_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_FORMAT = "--format=%H%x00%G?%x00%GS%x00%GK%x00"
_FIELDS = 4
GPG_ARMOR = b"-----BEGIN PGP PUBLIC KEY BLOCK-----"
MAX_CHECKED = 10_000
"""Commits one check may list; more is an error (nothing is verified, the tip is held)."""

VERDICTS = {
    "G": "good signature by an allowed key",
    "B": "bad signature (the commit was changed after signing)",
    "U": "signed by a key that is not allowed",
    "X": "signature has expired",
    "Y": "signed by an expired key",
    "R": "signed by a revoked key",
    "E": "the signature cannot be checked (unknown key or wrong signature format)",
    "N": "not signed",
}


@dataclass(frozen=True)
class TrustPolicy:
    """Which signatures count: the format, the allowed keys and what `origin` they came from."""

    mode: str
    """SSH or GPG."""
    allowed: bytes
    """SSH: allowed-signers file content; GPG: ASCII-armored public keys."""
    origin: str = field(compare=False)
    """Where the keys were read, for messages (`governance/allowed_signers at 1a2b3c4d5e6f`)."""
    first_parent: bool = False


@dataclass(frozen=True)
class Signature:
    """git's verdict on one commit."""

    commit: str
    verdict: str
    """`%G?`: G good, B bad, U untrusted key, X/Y expired, R revoked, E cannot check, N none."""
    signer: str
    key: str

    @property
    def good(self) -> bool:
        return self.verdict == "G"

    def describe(self) -> str:
        """`commit 1a2b3c4d5e6f: signed by a key that is not allowed (key SHA256:...)`."""
        what = VERDICTS.get(self.verdict, f"verification result {self.verdict!r}")
        who = f" (key {self.key})" if self.key and not self.good else ""
        return f"commit {self.commit[:12]}: {what}{who}"


def operator_policy(path: Path) -> TrustPolicy:
    """The policy of an operator's `--allowed-signers FILE`: SSH allowed-signers, or GPG when
    the file holds ASCII-armored public keys. OSError when it cannot be read."""
    data = Path(path).read_bytes()
    mode = "GPG" if GPG_ARMOR in data else "SSH"
    return TrustPolicy(mode, data, f"--allowed-signers {path}")


def check_signatures(
    repo: Path, tip: str, exclude: Sequence[str], policy: TrustPolicy
) -> list[Signature]:
    """git's verdict on each commit of `tip` not reachable from any of `exclude` (newest
    first); no `exclude`: `tip` alone. GitError when git or gpg cannot run, or when more than
    MAX_CHECKED commits would be checked."""
    args = ["log", _FORMAT, "--no-color", f"--max-count={MAX_CHECKED + 1}"]
    args += ["--first-parent"] if policy.first_parent else []
    args += [] if exclude else ["--no-walk"]
    revs = [tip, *(f"^{commit}" for commit in exclude)]
    with _verifier(policy) as (config, env):
        out = run_git(repo, [*args, "--end-of-options", *revs], config=config, env=env)
    fields = out.stdout.decode("utf-8", "replace").split("\0")
    found = [
        Signature(*(f.strip() for f in fields[i : i + _FIELDS]))
        for i in range(0, len(fields) - _FIELDS + 1, _FIELDS)
    ]
    if len(found) > MAX_CHECKED:
        raise GitError(f"more than {MAX_CHECKED} commits to verify at once")
    return found


class LinkedFile(GitError):
    """A file asked of `CommitFiles` is a symbolic link in that commit."""


_REGULAR = (b"100644", b"100755", b"100664")


def _tree_entry(tree: bytes, name: bytes, id_size: int) -> tuple[bytes, str] | None:
    """(mode, object id) of the entry `name` of a raw tree object ("<mode> <name>\\0<id>"
    records), None when it has none."""
    at = 0
    while at < len(tree):
        space, nul = tree.find(b" ", at), tree.find(b"\0", at)
        if space < 0 or nul < space:
            raise GitError("git cat-file returned a malformed tree")
        if tree[space + 1 : nul] == name:
            return tree[at:space], tree[nul + 1 : nul + 1 + id_size].hex()
        at = nul + 1 + id_size
    return None


class CommitFiles:
    """Files read at any commit (`commit:path`) through one `git cat-file --batch` process,
    started on the first read; a context manager (closing stops the process). Given a shared
    `ObjectReader` (the hub's mirror), it reads through that one and leaves it running."""

    def __init__(self, repo: Path, objects: ObjectReader | None = None) -> None:
        self._repo = repo
        self._objects = objects or ObjectReader(repo)
        self._shared = objects is not None
        """A reader handed in (the hub mirror's) is shared: `close` leaves it running."""

    def read(self, commit: str, path: str) -> bytes | None:
        """The content of `path` at `commit` (None when it is not a regular file there: absent,
        a folder or a submodule). LinkedFile when it is a symbolic link (never followed: the
        link's text is no file's content). GitError when the git process stops (the next
        read starts another). Two objects are read: the folder's tree (for the file's mode)
        and the blob it names."""
        if any(ch in path for ch in "\n\r") or not _HEX.fullmatch(commit):
            raise GitError(f"refused file {path!r} at {commit!r}")
        folder, _, name = path.rpartition("/")
        tree = self._object(f"{commit}:{folder}", path, commit)
        if tree is None or tree[0] != b"tree":
            return None
        entry = _tree_entry(tree[1], name.encode(), len(commit) // 2)
        if entry is None:
            return None
        mode, oid = entry
        if mode == b"120000":
            raise LinkedFile(f"{path} at {commit[:12]} is a symbolic link: {SYMLINK_MESSAGE}")
        blob = self._object(oid, path, commit) if mode in _REGULAR else None
        return blob[1] if blob is not None and blob[0] == b"blob" else None

    def _object(self, name: str, path: str, commit: str) -> tuple[bytes, bytes] | None:
        """(type, content) of the object `name` (`<commit>:<folder>` or an id); None when it
        is missing."""
        try:
            return self._objects.read(name)
        except GitError as exc:
            raise GitError(f"{exc} ({path!r} at {commit[:12]})") from None

    def close(self) -> None:
        if not self._shared:
            self._objects.close()

    def __enter__(self) -> CommitFiles:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def first_parent_chain(repo: Path, tip: str, trusted: str) -> list[str]:
    """The first-parent commits of `tip` not reachable from `trusted`, oldest first (the
    walk `commitwalk.learn_history` made, when it did)."""
    walked = first_parents(tip, trusted)
    if walked is not None:
        return [found.commit for found in reversed(walked)]
    out = run_git(
        repo, ["rev-list", "--first-parent", "--reverse", "--end-of-options", tip, f"^{trusted}"]
    )
    return out.stdout.decode("ascii", "replace").split()


@contextmanager
def _verifier(policy: TrustPolicy) -> Iterator[tuple[dict[str, str], dict[str, str]]]:
    """git config and environment that make only `policy`'s keys and format verify."""
    with tempfile.TemporaryDirectory(prefix="gitfleet-verify-") as tmp:
        home = Path(tmp) / "gnupg"
        home.mkdir(mode=0o700)
        signers = Path(tmp) / "allowed_signers"
        config = {"gpg.x509.program": "false", "log.showSignature": "false"}
        if policy.mode == "SSH":
            signers.write_bytes(policy.allowed)
            config["gpg.openpgp.program"] = "false"
        elif policy.mode == "GPG":
            signers.write_bytes(b"")
            _import_keys(home, policy)
        else:
            raise GitError(f"unknown verification mode {policy.mode!r}")
        config["gpg.ssh.allowedSignersFile"] = str(signers)
        yield config, {"GNUPGHOME": str(home)}


def _import_keys(home: Path, policy: TrustPolicy) -> None:
    """Import the armored public keys into the private GnuPG home (no agent is started)."""
    (home / "gpg.conf").write_text("trust-model always\n", encoding="ascii")
    try:
        done = subprocess.run(
            ["gpg", "--homedir", str(home), "--batch", "--no-autostart", "--quiet", "--import"],
            input=policy.allowed,
            capture_output=True,
            timeout=60,
            check=False,
            env={**os.environ, "GNUPGHOME": str(home)},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"cannot run gpg to read the keys of {policy.origin}: {exc}") from exc
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        raise GitError(f"gpg cannot import the keys of {policy.origin}: {' '.join(tail)}")


def sign_commit(repo: Path, commit: str, key: Path) -> str:
    """The same commit (tree, parents, author, committer, dates, message) signed with the SSH
    private key file `key`; a new object id. GitError when signing fails."""
    raw = run_git(repo, ["cat-file", "commit", commit]).stdout
    header, _, message = raw.partition(b"\n\n")
    env: dict[str, str] = {}
    parents: list[str] = []
    tree = ""
    for line in header.decode("utf-8", "surrogateescape").splitlines():
        name, _, value = line.partition(" ")
        if name == "tree":
            tree = value
        elif name == "parent":
            parents += ["-p", value]
        elif name in ("author", "committer"):
            who, _, stamp = value.rpartition("> ")
            person, _, email = who.partition(" <")
            role = name.upper()
            env |= {f"GIT_{role}_NAME": person, f"GIT_{role}_EMAIL": email}
            env[f"GIT_{role}_DATE"] = stamp
    config = {"gpg.format": "ssh", "user.signingKey": str(Path(key).absolute())}
    out = run_git(
        repo,
        ["commit-tree", "-S", *parents, "-F", "-", tree],
        stdin=message,
        env=env,
        config=config,
    )
    return out.stdout.decode("ascii", "replace").strip()
