"""SSH commit signing with real keys for test fixtures: ed25519 key pairs (`ssh-keygen`),
allowed-signers lines, commits signed with `git -c gpg.format=ssh commit -S`, and git's own
verdict on a commit's signature.

Called by tests/integration/test_signed_commits.py.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers.gitrepo import git

SIGNER_DOMAIN = "example.invalid"


def make_ssh_key(folder: Path, name: str) -> Path:
    """The private key file of the ed25519 key pair `folder/name` (comment `name`), generated
    with no passphrase the first time it is asked for."""
    path = folder / name
    path.parent.mkdir(exist_ok=True)
    if not path.exists():
        argv = ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)]
        subprocess.run(argv, check=True, capture_output=True)
    return path


def format_signer_line(name: str, key: Path) -> str:
    """The allowed-signers line that lets principal `name@example.invalid` sign with `key`."""
    public = key.with_suffix(".pub").read_text().split()
    return f"{name}@{SIGNER_DOMAIN} {public[0]} {public[1]}\n"


def make_sign_options(key: Path) -> list[str]:
    """The `git -c` options that make `-S` sign with the SSH key `key`."""
    return ["-c", "gpg.format=ssh", "-c", f"user.signingkey={key}"]


def git_as_t(cwd: Path, *args: str) -> str:
    """Run git in `cwd` as `t <t@example.invalid>`, the author of the signing tests."""
    return git(cwd, *args, user="t", email=f"t@{SIGNER_DOMAIN}")


def commit_signed(work: Path, message: str, key: Path | None) -> str:
    """Stage everything in `work` and commit it (empty allowed) as `t`, signed with `key` when
    given; return the new commit id."""
    git_as_t(work, "add", "-A")
    sign = [*make_sign_options(key), "commit", "-S"] if key is not None else ["commit"]
    git_as_t(work, *sign, "-q", "--allow-empty", "-m", message)
    return git_as_t(work, "rev-parse", "HEAD")


def read_verdict(repo: Path, signers: Path, rev: str) -> str:
    """Git's `%G?` for `rev` in `repo` checked against the allowed-signers file `signers`
    (G: good signature)."""
    argv = ["git", "-c", f"gpg.ssh.allowedSignersFile={signers}", "log", "-1", "--format=%G?"]
    done = subprocess.run([*argv, rev], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout.strip()
