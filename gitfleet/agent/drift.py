"""Diff computation of §6.3: cleaning, hub-vs-member JSON diff, `PatchDetail`s, redaction.

`clean` drops the fields irrelevant in a comparison (server-set metadata, status, and labels or
annotations whose key contains `kubernetes.io/`, `k8s.io/`, `kubernetes-fleet.io/` or gitfleet's
own `gitfleet.io/`) and, like the API server, turns a Secret's `stringData` into `data`
(`as_stored`, so a stringData Secret is neither re-applied nor reported as drifted on every pass).
`diff_objects` compares a cleaned hub manifest with a cleaned live object
and returns details sorted by path, with values rendered like Go's `%v`; details of a Secret
under `/data` and `/stringData` have their values redacted, so Secret values never leave the
cluster. Called by `gitfleet.agent.apply`.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from gitfleet.agent import managed
from gitfleet.agent.managed import ALL, Fields
from gitfleet.api import PatchDetail
from gitfleet.api.report import MAX_ENTRIES

REDACTED = "(redacted for security reasons)"
WHOLE_OBJECT = "(the whole object)"
_META_DROP = (
    "name",
    "namespace",
    "generateName",
    "finalizers",
    "managedFields",
    "ownerReferences",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "resourceVersion",
    "selfLink",
    "uid",
    "creationTimestamp",
)
_KEY_MARKERS = ("kubernetes.io/", "k8s.io/", "kubernetes-fleet.io/", "gitfleet.io/")


def as_stored(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `obj` as the API server stores it: a Secret's write-only `stringData` merged
    into `data` (base64), which is what a real server returns (it never returns stringData)."""
    out = copy.deepcopy(dict(obj))
    if out.get("kind") != "Secret" or not isinstance(out.get("stringData"), Mapping):
        return out
    data = dict(out.get("data") or {})
    for key, value in out.pop("stringData").items():
        data[key] = base64.b64encode(str(value).encode()).decode()
    out["data"] = data
    return out


def clean(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `obj` without the fields §6.3 ignores in comparisons (Secrets `as_stored`)."""
    out = as_stored(obj)
    out.pop("status", None)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        for key in _META_DROP:
            meta.pop(key, None)
        for part in ("labels", "annotations"):
            values = meta.get(part)
            if isinstance(values, dict):
                kept = {k: v for k, v in values.items() if not any(m in k for m in _KEY_MARKERS)}
                meta[part] = kept
                if not kept:
                    del meta[part]
    for path in (("spec", "template"), ("spec", "jobTemplate", "spec", "template")):
        node: Any = out
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and isinstance(node.get("metadata"), dict):
            node["metadata"].pop("creationTimestamp", None)
    return out


def diff_objects(
    hub: Any, member: Any, *, secret: bool = False, owned: Fields | None = None
) -> list[PatchDetail]:
    """Differences hub -> member, sorted by path, at most 100; Secret values redacted. With
    `owned` (the live object's `managed.ownership`), a field only the member has is a difference
    only when some field manager set it (server defaults are not)."""
    details: list[PatchDetail] = []
    _walk(hub, member, "", details, owned if owned is not None else ALL)
    details.sort(key=lambda d: d.path)
    if secret:
        details = [_redact(d) for d in details]
    return details[:MAX_ENTRIES]


def missing_object_diff() -> list[PatchDetail]:
    """The single detail reported when the object is not in the member cluster."""
    return [PatchDetail(path="/", value_in_hub=WHOLE_OBJECT)]


def _walk(hub: Any, member: Any, path: str, out: list[PatchDetail], owner: Fields | None) -> None:
    if isinstance(hub, Mapping) and isinstance(member, Mapping):
        for key in sorted(set(hub) | set(member)):
            child = f"{path}/{_escape(str(key))}"
            below = managed.child(owner, str(key))
            if key not in member:
                out.append(PatchDetail(path=child, value_in_hub=go_value(hub[key])))
            elif key not in hub:
                if below is not None:
                    out.append(PatchDetail(path=child, value_in_member=go_value(member[key])))
            else:
                _walk(hub[key], member[key], child, out, below)
        return
    if isinstance(hub, list) and isinstance(member, list):
        for i in range(max(len(hub), len(member))):
            child = f"{path}/{i}"
            if i >= len(member):
                out.append(PatchDetail(path=child, value_in_hub=go_value(hub[i])))
                continue
            below = managed.item(owner, i, member[i])
            if i >= len(hub):
                if below is not None:
                    out.append(PatchDetail(path=child, value_in_member=go_value(member[i])))
            else:
                _walk(hub[i], member[i], child, out, below)
        return
    if not _equal(hub, member):
        out.append(
            PatchDetail(
                path=path or "/", value_in_member=go_value(member), value_in_hub=go_value(hub)
            )
        )


def _equal(left: Any, right: Any) -> bool:
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    return bool(left == right)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _redact(detail: PatchDetail) -> PatchDetail:
    if not detail.path.startswith(("/data", "/stringData")):
        return detail
    return PatchDetail(
        path=detail.path,
        value_in_member=REDACTED if detail.value_in_member else detail.value_in_member,
        value_in_hub=REDACTED if detail.value_in_hub else detail.value_in_hub,
    )


def go_value(value: Any) -> str:
    """`value` as Go's `fmt.Sprint` prints decoded JSON (`map[a:1 b:[x y]]`, `<nil>`, `1e+06`)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, Mapping):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    return str(value)


def _go_float(value: float) -> str:
    """Go's %v of a float64: shortest digits, exponent form when exp < -4 or >= 6."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(str(d) for d in digits)
    exp = len(text) + int(exponent) - 1
    prefix = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return prefix + format(Decimal(repr(abs(value))).normalize(), "f")
