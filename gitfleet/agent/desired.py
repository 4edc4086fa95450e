"""The agent's input: `clusters/<me>/` in the output contract's shape (`gitfleet.api.output`).

`load_directory` checks every path (inside `clusters/<me>/`, no `..`, no absolute or odd
segments), parses `index.yaml` as a `ClusterIndex`, each placement's `<key>/index.yaml` as a
`PlacementIndex`, and each listed file as exactly one object whose identity matches its entry;
together a placement's files must match its `contentHash`. A bad path, a missing/invalid index
or an index of another contract version is a `DirectoryError` (the agent then applies nothing
and keeps the last state; the message says which shape it found); a bad object file only fails
that object (`Desired.error`). A Secret arrives as an `EncryptedSecret` document
(`gitfleet.api.sealed`): its hash is taken of the ciphertext document, then it is decrypted
with the agent's age key and must hold exactly the Secret the index names; without a key, or
with a key that cannot open it, that object fails (no value is ever part of a message). Called
by `gitfleet.agent.run`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from gitfleet.agent.client import identity_of
from gitfleet.api import DEFAULT_LIMITS
from gitfleet.api.canonical import content_hash, placement_content_hash
from gitfleet.api.output import (
    CLUSTER_INDEX_KIND,
    FILE_PATTERN,
    INDEX_FILE,
    KEY_PATTERN,
    PLACEMENT_INDEX_KIND,
    ClusterIndex,
    IndexObject,
    IndexPlacement,
    PlacementIndex,
    cluster_index_path,
    object_path,
    placement_index_path,
    shape_problem,
)
from gitfleet.api.sealed import ENCRYPTED_SECRET_KIND, EncryptedSecret
from gitfleet.load import decode_text, parse_documents
from gitfleet.load.agecrypt import AgeKey

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_KEY = re.compile(KEY_PATTERN)
_FILE = re.compile(FILE_PATTERN)


class DirectoryError(Exception):
    """The directory cannot be trusted as a whole: apply nothing."""


M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Desired:
    """One object to apply: its placement, index entry, manifest (None when unreadable)."""

    placement: IndexPlacement
    entry: IndexObject
    manifest: Mapping[str, Any] | None
    error: str = ""
    hash: str = ""
    """`content_hash` of the manifest (the agent annotates applied objects with it)."""

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
        if len(parts) == 3 and parts[2] != INDEX_FILE:
            raise DirectoryError(f'unexpected file "{path}"')
        if len(parts) == 4 and not (_KEY.match(parts[2]) and _FILE.match(parts[3])):
            raise DirectoryError(f'unexpected file name "{path}"')


def load_directory(
    cluster: str, files: Mapping[str, bytes], key: AgeKey | None = None
) -> Directory:
    """The validated directory; `DirectoryError` when paths, the cluster index or a
    placement's object index are bad (a placement whose object list is unknown cannot be
    applied or pruned safely). `key`: the agent's age identity, which opens the cluster's
    EncryptedSecret files."""
    check_paths(cluster, files)
    index_path = cluster_index_path(cluster)
    index = _parse(index_path, files, ClusterIndex, CLUSTER_INDEX_KIND)
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
        for desired in _placement_objects(cluster, placement, files, key):
            if desired.identity in seen:
                message = f"the object is listed twice (also by placement {seen[desired.identity]})"
                desired = Desired(placement, desired.entry, None, message)
            seen.setdefault(desired.identity, placement.key)
            objects.append(desired)
    return Directory(index, tuple(objects))


def _placement_objects(
    cluster: str, placement: IndexPlacement, files: Mapping[str, bytes], key: AgeKey | None
) -> list[Desired]:
    """The objects of one placement. When every file reads, together they must match the
    placement's content hash in the cluster index, else none of them is applied (and none
    pruned); an unreadable file fails alone."""
    path = placement_index_path(cluster, placement.key)
    listed = _parse(path, files, PlacementIndex, PLACEMENT_INDEX_KIND)
    if listed.metadata.name != placement.key:
        raise DirectoryError(
            f'{path}: metadata.name: is "{listed.metadata.name}", expected "{placement.key}"'
        )
    out = [_object(cluster, placement, entry, files, key) for entry in listed.objects]
    if all(d.hash for d in out):
        pairs = [{"file": d.entry.file, "hash": d.hash} for d in out]
        if placement_content_hash(pairs) != placement.content_hash:
            message = (
                f"{path}: the files of placement {placement.key} do not match its contentHash "
                f"in {cluster_index_path(cluster)}"
            )
            out = [
                d if d.manifest is None else Desired(placement, d.entry, None, message, hash=d.hash)
                for d in out
            ]
    return out


def _parse(path: str, files: Mapping[str, bytes], model: type[M], kind: str) -> M:
    if path not in files:
        raise DirectoryError(f"{path} is missing")
    body = _single_document(path, files[path])
    problem = shape_problem(body, kind)
    if problem is not None:
        raise DirectoryError(f"{path}: {problem}")
    try:
        return model.model_validate(body)
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
    """One listed object; `hash` is set whenever its file reads (also when it then fails)."""
    path = object_path(cluster, placement.key, entry.file)
    if entry.file == INDEX_FILE:
        return Desired(placement, entry, None, f"{path}: an index is not an object to apply")
    if path not in files:
        return Desired(placement, entry, None, f"{path} is missing")
    try:
        body = _single_document(path, files[path])
    except DirectoryError as exc:
        return Desired(placement, entry, None, str(exc))
    digest = content_hash(body)
    if body.get("kind") == ENCRYPTED_SECRET_KIND:
        opened = _decrypt(path, body, key)
        if isinstance(opened, str):
            return Desired(placement, entry, None, opened, hash=digest)
        body = opened
    if identity_of(body) != (entry.api_version, entry.kind, entry.namespace or "", entry.name):
        message = f"{path}: object identity differs from its index"
        return Desired(placement, entry, None, message, hash=digest)
    return Desired(placement, entry, body, hash=digest)


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
