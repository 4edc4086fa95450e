"""Secret values inside the hub: placeholders in the pass, plaintext only in `SealedValues`.

A Secret decrypted from a SOPS file enters the fleet snapshot with every `data` / `stringData`
value replaced by its placeholder (`AgeKey.ref`, a keyed MAC); the values themselves stay in the
snapshot's `SealedValues`, which only `reconciler.sealing` opens, to encrypt each Secret for the
cluster that receives it. So selection hashes, resource snapshots, override memos, status and
plans see placeholders, never values. `plaintext_fields` finds the fields of a Secret that hold
values in clear (what the loader refuses unless `spec.secrets.allowPlaintext`). Used by
`renderers.sops`, `gitfleet.load.snapshot` and `reconciler.sealing`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitfleet.api.meta import key_path
from gitfleet.api.sealed import AGE_RECIPIENT_ANNOTATION
from gitfleet.load.agecrypt import AgeKey, is_recipient, is_ref

VALUE_FIELDS = ("data", "stringData")


def is_secret(body: Mapping[str, Any]) -> bool:
    """Whether `body` is a core `v1` Secret."""
    return body.get("apiVersion") == "v1" and body.get("kind") == "Secret"


ENVELOPE_KINDS = ("ResourceEnvelope", "ClusterResourceEnvelope")


def _wrapped(body: Mapping[str, Any]) -> list[str]:
    """`plaintext_fields` of the objects a ResourceEnvelope / ClusterResourceEnvelope wraps."""
    data = body.get("data")
    if not isinstance(data, Mapping):
        return []
    out = []
    for name, obj in data.items():
        if isinstance(obj, Mapping):
            out += [f"data{key_path(str(name))}.{f}" for f in plaintext_fields(obj)]
    return out


def plaintext_fields(body: Mapping[str, Any]) -> list[str]:
    """The value fields (`data`, `stringData`) of a Secret holding a value that is not a
    placeholder, also inside an envelope (`data["db.yaml"].stringData`); [] for other kinds
    and for Secrets without values."""
    api_version = str(body.get("apiVersion", ""))
    if body.get("kind") in ENVELOPE_KINDS and api_version.startswith(
        "placement.kubernetes-fleet.io/"
    ):
        return _wrapped(body)
    if not is_secret(body):
        return []
    out = []
    for field in VALUE_FIELDS:
        values = body.get(field)
        if (isinstance(values, Mapping) and any(not is_ref(v) for v in values.values())) or (
            values is not None and not isinstance(values, Mapping)
        ):
            out.append(field)
    return out


def recipient_issue(annotations: Mapping[str, str] | None) -> tuple[str, str] | None:
    """(field, message) when a MemberCluster's `gitfleet.io/age-recipient` annotation is set
    but is not an age X25519 recipient (the cluster then gets no Secret)."""
    value = (annotations or {}).get(AGE_RECIPIENT_ANNOTATION)
    if value is None or is_recipient(value):
        return None
    field = "metadata.annotations" + key_path(AGE_RECIPIENT_ANNOTATION)
    return field, (
        "is not an age X25519 recipient (age1... as `age-keygen -y` prints it): this cluster "
        "is sent no Secret"
    )


class SealedValues:
    """The hub's key and placeholder -> plaintext value; its repr shows only a count."""

    def __init__(self, key: AgeKey | None = None) -> None:
        self.key = key
        self._values: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"SealedValues({len(self._values)} value(s))"

    def __eq__(self, other: object) -> bool:
        """The same key and the same placeholders for the same values (the hub compares two
        loads of its source this way: `reconciler.lastpass`)."""
        if not isinstance(other, SealedValues):
            return NotImplemented
        return self.key == other.key and self._values == other._values

    __hash__ = None  # type: ignore[assignment]  # mutable: `seal` adds values

    def __len__(self) -> int:
        return len(self._values)

    def seal(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of the Secret `body` with its string values replaced by placeholders (the
        values are kept here). Non-string values are left for the payload checks to refuse."""
        if self.key is None:
            raise ValueError("sealing needs the hub's age key")
        out = dict(body)
        for field in VALUE_FIELDS:
            values = body.get(field)
            if not isinstance(values, Mapping):
                continue
            sealed = {}
            for name, value in values.items():
                if isinstance(value, str):
                    ref = self.key.ref(value)
                    self._values[ref] = value
                    sealed[name] = ref
                else:
                    sealed[name] = value
            out[field] = sealed
        return out

    def unseal(self, obj: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
        """A copy of `obj` with placeholders replaced by their values, and how many were
        replaced. `KeyError` for a placeholder this store does not hold."""
        out = dict(obj)
        count = 0
        for field in VALUE_FIELDS:
            values = obj.get(field)
            if not isinstance(values, Mapping):
                continue
            opened = {}
            for name, value in values.items():
                if is_ref(value):
                    opened[name] = self._values[value]
                    count += 1
                else:
                    opened[name] = value
            out[field] = opened
        return out, count
