"""age encryption for Secrets, through `pyrage` (the Python binding of the rust `age` crate).

gitfleet writes no cryptography of its own: `encrypt` / `decrypt` call pyrage (X25519 recipients,
ASCII armor). `AgeKey` is an identity read from an age key file (`AGE-SECRET-KEY-1...` lines, '#'
comments, as `age-keygen` and SOPS write them): the hub's (SOPS decryption, re-encryption, reuse
of its earlier ciphertext) or an agent's (decryption at apply time). Its `ref` gives the
placeholder that stands for a Secret value inside the reconcile pass: an HMAC-SHA256 keyed with a
key derived from the identity, so the pass's hashes and snapshots never contain a plain hash of a
value (a low-entropy value could be brute-forced from one). Nothing here ever puts a key or a
value into an exception message or a repr. Used by `renderers.sops`, `reconciler.sealing` and
`gitfleet.agent.desired`.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyrage

REF_PREFIX = "gfsealed"
"""Placeholders are `gfsealed` + 64 hex digits: valid base64, so a Secret's `data` stays valid."""
_REF = re.compile(r"^gfsealed[0-9a-f]{64}$")
_RECIPIENT = re.compile(r"^age1[02-9ac-hj-np-z]{58}$")
_IDENTITY = re.compile(r"^AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}$")


class AgeKeyError(Exception):
    """An age key file cannot be used; the message names the file, never its content."""


class AgeKey:
    """One or more age identities from a key file; the first one's recipient is this key's."""

    def __init__(self, identities: Sequence[Any], source: str) -> None:
        self._identities = list(identities)
        self.source = source
        """Where the key came from (a file path), for messages."""
        self.recipient = str(self._identities[0].to_public())
        seed = hashlib.sha256(b"gitfleet sealed-value ref v1\0" + str(identities[0]).encode())
        self._mac_key = seed.digest()

    def __repr__(self) -> str:
        return f"AgeKey(recipient={self.recipient!r}, source={self.source!r})"

    def __eq__(self, other: object) -> bool:
        """The same identities (so the same placeholders and the same files opened)."""
        if not isinstance(other, AgeKey):
            return NotImplemented
        mine, theirs = self._identities, other._identities
        return self is other or [str(i) for i in mine] == [str(i) for i in theirs]

    def __hash__(self) -> int:
        return hash(self.recipient)

    def ref(self, value: str) -> str:
        """The placeholder standing for `value` in the pass (keyed: not a plain hash)."""
        mac = hmac.new(self._mac_key, value.encode("utf-8"), hashlib.sha256).hexdigest()
        return REF_PREFIX + mac

    def decrypt(self, armored: str) -> bytes | None:
        """The plaintext of an armored age file, or None when this key cannot open it."""
        try:
            return bytes(pyrage.decrypt(armored.encode("ascii"), self._identities))
        except (pyrage.DecryptError, UnicodeEncodeError, ValueError, TypeError):
            return None


def read_key(path: Path) -> AgeKey:
    """The identities of an age key file; `AgeKeyError` when unreadable or without a key."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AgeKeyError(f"cannot read age key file {path}: {exc.__class__.__name__}") from None
    lines = [line.strip() for line in text.splitlines()]
    keys = [line for line in lines if line and not line.startswith("#")]
    if not keys or not all(_IDENTITY.match(k) for k in keys):
        raise AgeKeyError(
            f"age key file {path} must hold AGE-SECRET-KEY-1... lines (and '#' comments) only"
        )
    try:
        identities = [pyrage.x25519.Identity.from_str(k) for k in keys]
    except pyrage.IdentityError:
        raise AgeKeyError(f"age key file {path} holds an invalid age identity") from None
    return AgeKey(identities, str(path))


def is_recipient(text: str) -> bool:
    """Whether `text` is an age X25519 recipient (`age1...`) that pyrage accepts."""
    if not _RECIPIENT.match(text):
        return False
    try:
        pyrage.x25519.Recipient.from_str(text)
    except pyrage.RecipientError:
        return False
    return True


def is_ref(value: object) -> bool:
    """Whether `value` is a sealed-value placeholder (`AgeKey.ref`)."""
    return isinstance(value, str) and _REF.match(value) is not None


def encrypt(plaintext: bytes, recipients: Sequence[str]) -> str:
    """`plaintext` as an ASCII-armored age file for `recipients` (each `is_recipient`)."""
    parsed = [pyrage.x25519.Recipient.from_str(r) for r in recipients]
    return bytes(pyrage.encrypt(plaintext, parsed, armored=True)).decode("ascii")


def generate_identity() -> tuple[str, str]:
    """A new (identity, recipient) pair, as `age-keygen` would write them."""
    identity = pyrage.x25519.Identity.generate()
    return str(identity), str(identity.to_public())
