"""The agent's input: `clusters/<me>/index.yaml` plus one manifest a file, validated.

`load_directory` checks every path (inside `clusters/<me>/`, no `..`, no absolute or odd
segments), parses `index.yaml` as a `ClusterIndex` and each listed file as exactly one object
whose identity and content hash match its index entry. A bad path or a missing/invalid index is
a `DirectoryError` (the agent then applies nothing and keeps the last state); a bad object file
only fails that object (`Desired.error`). A Secret arrives as an `EncryptedSecret` document
(`gitfleet.api.sealed`): its hash is checked on the ciphertext document, then it is decrypted
with the agent's age key and must hold exactly the Secret the index names; without a key, or
with a key that cannot open it, that object fails (no value is ever part of a message). Called
by `gitfleet.agent.run`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, ValidationError

from gitfleet.agent.client import identity_of
from gitfleet.api import DEFAULT_LIMITS, ApplyStrategy, KubeModel
from gitfleet.api.canonical import content_hash
from gitfleet.api.sealed import ENCRYPTED_SECRET_KIND, EncryptedSecret
from gitfleet.load import decode_text, parse_documents
from gitfleet.load.agecrypt import AgeKey

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_KEY = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)?$")
_FILE = re.compile(r"^[a-z0-9][a-z0-9._-]*\.yaml$")
_HASH = re.compile(r"^sha256:[0-9a-f]{64}$")


class IndexObject(KubeModel):
    """One object of a placement in the index."""

    api_version: str
    kind: str
    namespace: str | None = None
    name: str
    file: str = Field(pattern=_FILE.pattern)
    hash: str = Field(pattern=_HASH.pattern)


class IndexPlacement(KubeModel):
    """One placement bound to this cluster."""

    key: str = Field(pattern=_KEY.pattern)
    name: str
    namespace: str | None = None
    resource_snapshot_index: int = Field(ge=0)
    policy_snapshot_index: int | None = Field(default=None, ge=0)
    apply_strategy: ApplyStrategy = Field(default_factory=ApplyStrategy)
    content_hash: str | None = Field(default=None, pattern=_HASH.pattern)
    """The hub's `placement_content_hash` of `objects` (informational: the agent recomputes it)."""
    objects: list[IndexObject] = Field(default_factory=list)


class IndexMeta(KubeModel):
    """metadata: the cluster name."""

    name: str


class ClusterIndex(KubeModel):
    """`clusters/<cluster>/index.yaml` as the reconciler writes it."""

    api_version: Literal["gitfleet.io/v1alpha1"]
    kind: Literal["ClusterIndex"]
    metadata: IndexMeta
    placements: list[IndexPlacement] = Field(default_factory=list)


class DirectoryError(Exception):
    """The directory cannot be trusted as a whole: apply nothing."""


@dataclass(frozen=True)
class Desired:
    """One object to apply: its placement, index entry, manifest (None when unreadable)."""

    placement: IndexPlacement
    entry: IndexObject
    manifest: Mapping[str, Any] | None
    error: str = ""

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """(apiVersion, kind, namespace or '', name) from the index entry."""
        e = self.entry
        return (e.api_version, e.kind, e.namespace or "", e.name)


@dataclass(frozen=True)
class Directory:
    """A validated cluster directory."""

    index: ClusterIndex
    objects: tuple[Desired, ...]


def check_paths(cluster: str, files: Mapping[str, bytes]) -> None:
    """Every path is `clusters/<cluster>/index.yaml` or `clusters/<cluster>/<key>/<file>`."""
    if not _NAME.match(cluster):
        raise DirectoryError(f'cluster name "{cluster}" is not a DNS-1123 label')
    for path in sorted(files):
        parts = path.split("/")
        inside = len(parts) in (3, 4) and parts[:2] == ["clusters", cluster]
        if not inside or "\\" in path or any(p in ("", ".", "..") for p in parts):
            raise DirectoryError(f'path "{path}" is outside clusters/{cluster}/')
        if len(parts) == 3 and parts[2] != "index.yaml":
            raise DirectoryError(f'unexpected file "{path}"')
        if len(parts) == 4 and not (_KEY.match(parts[2]) and _FILE.match(parts[3])):
            raise DirectoryError(f'unexpected file name "{path}"')


def load_directory(
    cluster: str, files: Mapping[str, bytes], key: AgeKey | None = None
) -> Directory:
    """The validated directory; `DirectoryError` when paths or the index are bad. `key`: the
    agent's age identity, which opens the cluster's EncryptedSecret files."""
    check_paths(cluster, files)
    index_path = f"clusters/{cluster}/index.yaml"
    if index_path not in files:
        raise DirectoryError(f"{index_path} is missing")
    index = _parse_index(index_path, files[index_path])
    if index.metadata.name != cluster:
        raise DirectoryError(
            f'{index_path}: metadata.name: is "{index.metadata.name}", expected "{cluster}"'
        )
    keys = [p.key for p in index.placements]
    if len(set(keys)) != len(keys):
        raise DirectoryError(f"{index_path}: placements: a placement key is listed twice")
    objects: list[Desired] = []
    seen: dict[tuple[str, str, str, str], str] = {}
    for placement in index.placements:
        for entry in placement.objects:
            desired = _object(cluster, placement, entry, files, key)
            if desired.identity in seen:
                message = f"the object is listed twice (also by placement {seen[desired.identity]})"
                desired = Desired(placement, entry, None, message)
            seen.setdefault(desired.identity, placement.key)
            objects.append(desired)
    return Directory(index, tuple(objects))


def _parse_index(path: str, data: bytes) -> ClusterIndex:
    body = _single_document(path, data)
    try:
        return ClusterIndex.model_validate(body)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise DirectoryError(f"{path}: {where}: {first['msg']}") from None


def _single_document(path: str, data: bytes) -> dict[str, Any]:
    text, error = decode_text(path, data)
    if text is None:
        raise DirectoryError(str(error))
    docs, errors = parse_documents(path, text, DEFAULT_LIMITS)
    if errors:
        raise DirectoryError(str(errors[0]))
    if len(docs) != 1 or not isinstance(docs[0].body, dict):
        raise DirectoryError(f"{path}: must hold exactly one YAML mapping document")
    return dict(docs[0].body)


def _object(
    cluster: str,
    placement: IndexPlacement,
    entry: IndexObject,
    files: Mapping[str, bytes],
    key: AgeKey | None = None,
) -> Desired:
    path = f"clusters/{cluster}/{placement.key}/{entry.file}"
    if path not in files:
        return Desired(placement, entry, None, f"{path} is missing")
    try:
        body = _single_document(path, files[path])
    except DirectoryError as exc:
        return Desired(placement, entry, None, str(exc))
    if content_hash(body) != entry.hash:
        return Desired(placement, entry, None, f"{path}: content hash differs from index.yaml")
    if body.get("kind") == ENCRYPTED_SECRET_KIND:
        opened = _decrypt(path, body, key)
        if isinstance(opened, str):
            return Desired(placement, entry, None, opened)
        body = opened
    if identity_of(body) != (entry.api_version, entry.kind, entry.namespace or "", entry.name):
        return Desired(placement, entry, None, f"{path}: object identity differs from index.yaml")
    return Desired(placement, entry, body)


def _decrypt(path: str, body: Mapping[str, Any], key: AgeKey | None) -> dict[str, Any] | str:
    """The Secret inside an EncryptedSecret document, or why it cannot be had."""
    try:
        doc = EncryptedSecret.model_validate(body)
    except ValidationError:
        return f"{path}: not a valid EncryptedSecret document"
    if key is None:
        return f"{path}: an encrypted Secret, and this agent has no age key (--age-key-file)"
    plaintext = key.decrypt(doc.spec.ciphertext)
    if plaintext is None:
        return (
            f"{path}: this agent's age key ({key.recipient}) cannot decrypt it; it is "
            f"encrypted to {', '.join(doc.spec.recipients)}"
        )
    try:
        secret = json.loads(plaintext)
    except ValueError:
        return f"{path}: the decrypted Secret is not JSON"
    if not isinstance(secret, dict) or secret.get("kind") != "Secret":
        return f"{path}: the decrypted document is not a Secret"
    return secret
