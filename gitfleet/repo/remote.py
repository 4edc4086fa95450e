"""Remote URL admission for fetch and push: the robustness §5 allow-list, made concrete.

`check_url(url)` accepts only `https://`, `ssh://`, scp-style `[user@]host:path`, `git://` on a
loopback address (tests), `file://` and local paths (made absolute against the operator's
working directory), and refuses transport helpers (`ext::`, `fd::`, any `<name>::`), other
schemes, option-like values (leading `-`, also as host or user), and control characters.
The returned `RemoteURL` carries the one protocol git may use for it (`GIT_ALLOW_PROTOCOL`),
matching `-c protocol.*.allow` hardening, and a redacted form for every message.
Called by `Mirror.open`.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from gitfleet.repo.gitcmd import GitError, redact_url

_HELPER = re.compile(r"[A-Za-z0-9][A-Za-z0-9+.-]*::")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_SCP = re.compile(r"(?:([^@/:\s]+)@)?([^@/:\s\[\]]+|\[[0-9A-Fa-f:.]+\]):(.+)")
_PROTOCOL = {"https": "https", "ssh": "ssh", "scp": "ssh", "git": "git", "file": "file"}


@dataclass(frozen=True)
class RemoteURL:
    """An admitted remote: what git is given, its kind and its redacted spelling."""

    url: str
    kind: str
    """One of https, ssh, scp, git, file."""

    @property
    def redacted(self) -> str:
        return redact_url(self.url)

    @property
    def protocol(self) -> str:
        """The single transport git may use for this remote (GIT_ALLOW_PROTOCOL)."""
        return _PROTOCOL[self.kind]

    def env(self) -> dict[str, str]:
        """Environment additions for a network git call on this remote."""
        return {"GIT_ALLOW_PROTOCOL": self.protocol}

    def config(self) -> dict[str, str]:
        """`-c` hardening for a network git call: only this protocol, no submodules, no hooks."""
        return {
            "protocol.allow": "never",
            f"protocol.{self.protocol}.allow": "always",
            "submodule.recurse": "false",
            "fetch.recurseSubmodules": "false",
            "push.recurseSubmodules": "no",
            "core.hooksPath": "/dev/null",
        }


def check_url(url: str, *, base: Path | None = None) -> RemoteURL:
    """Admit `url` or raise GitError (message redacted). Relative local paths are resolved
    against `base` (default: the current directory)."""
    shown = redact_url(url)
    if not url or url != url.strip():
        raise GitError(f"refused remote {shown!r}: empty or surrounded by whitespace")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise GitError(f"refused remote {shown!r}: contains control characters")
    if url.startswith("-"):
        raise GitError(f"refused remote {shown!r}: option-like value")
    if _HELPER.match(url):
        raise GitError(f"refused remote {shown!r}: transport helpers (<name>::) are not allowed")
    scheme = _SCHEME.match(url)
    if scheme:
        return _check_scheme_url(url, scheme.group(1).lower(), shown)
    first_colon, first_slash = url.find(":"), url.find("/")
    if first_colon > 0 and (first_slash < 0 or first_colon < first_slash):
        return _check_scp(url, shown)
    return RemoteURL(str((base or Path.cwd()) / url) if not url.startswith("/") else url, "file")


def _check_scheme_url(url: str, scheme: str, shown: str) -> RemoteURL:
    """`scheme://...` URLs: https, ssh, file always; git only on a loopback host."""
    if scheme not in ("https", "ssh", "git", "file"):
        raise GitError(f"refused remote {shown!r}: scheme {scheme!r} is not allowed")
    if scheme == "file":
        return RemoteURL(url, "file")
    if any(ch.isspace() for ch in url):
        raise GitError(f"refused remote {shown!r}: contains whitespace")
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        user = parts.username or ""
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError as exc:
        raise GitError(f"refused remote {shown!r}: malformed URL") from exc
    if not host or host.startswith("-") or user.startswith("-"):
        raise GitError(f"refused remote {shown!r}: missing or option-like host or user")
    if scheme == "git" and not _is_loopback(host):
        raise GitError(f"refused remote {shown!r}: git:// is only allowed on a loopback address")
    return RemoteURL(url, scheme)


def _check_scp(url: str, shown: str) -> RemoteURL:
    """scp-style `[user@]host:path`, as git interprets a colon before the first slash."""
    match = _SCP.fullmatch(url)
    if match is None or any(ch.isspace() for ch in url):
        raise GitError(f"refused remote {shown!r}: not a valid [user@]host:path address")
    user, host, path = match.group(1) or "", match.group(2), match.group(3)
    if host.startswith("-") or user.startswith("-") or path.startswith(("-", ":")):
        raise GitError(f"refused remote {shown!r}: option-like host, user or path")
    return RemoteURL(url, "scp")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
