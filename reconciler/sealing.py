"""Secrets on the output branch: each one encrypted for the cluster that receives it.

Runs in the pass after overrides and replica distribution, before the rollout (so content
hashes, bindings and the index all describe the ciphertext). For every cluster a placement
targets, each core `v1` Secret among its manifests becomes an `EncryptedSecret` document
(`gitfleet.api.sealed`): its placeholders are replaced by the values `renderers.sops` kept in
the snapshot's `SealedValues`, and the Secret (canonical JSON) is encrypted with age to the
cluster's recipient (MemberCluster annotation `gitfleet.io/age-recipient`) and the hub's own.
The file keeps the Secret's name and index identity; its content hash is of the ciphertext
document, never of a value.

Determinism: age encryption is randomised, so the previous output's file for the same cluster,
placement and object is reused byte for byte when the hub can decrypt it to the same plaintext
for the same recipients; a no-op pass therefore writes identical bytes and commits nothing.

Refusals (that object on that cluster only; it keeps its previous file, already ciphertext): a
cluster without a valid recipient, a Secret whose values are in clear (reached the output
through an envelope or an override) unless `spec.secrets.allowPlaintext`. Messages name the
Secret and the cluster, never a value. Called by `reconciler.pass_`.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from contextlib import suppress
from dataclasses import replace
from typing import Any

import yaml

from gitfleet.api import MemberCluster
from gitfleet.api.canonical import canonical_json, content_hash
from gitfleet.api.output import object_path
from gitfleet.api.sealed import AGE_RECIPIENT_ANNOTATION, ENCRYPTED_SECRET_KIND
from gitfleet.load.agecrypt import AgeKey, encrypt, is_recipient
from gitfleet.load.model import FleetSnapshot
from gitfleet.load.sealedvalues import VALUE_FIELDS, SealedValues, plaintext_fields
from gitfleet.load.yamlio import dump_yaml
from reconciler.isolate import hold
from reconciler.manifests import Manifest
from reconciler.placement import PlacementPlan
from reconciler.rollkept import frozen, thawed
from reconciler.schedule.clusters import ClusterView
from reconciler.stagememo import IdentityMemo, StageMemo, changed_keys

API_VERSION = "gitfleet.io/v1alpha1"
MAX_VERIFIED = 200_000
"""Reuse checks remembered across passes: (digest of the previous file, recipients, keyed MAC
of the plaintext) -> the file's content hash, for files that decrypted to that plaintext; a
long-running hub parses and decrypts each file once, not once per pass (~0.15 ms each)."""
_verified: OrderedDict[tuple[str, str, str], str] = OrderedDict()
MAX_REPORTED = 20
"""Clusters whose sealing failures are listed in one placement's errors."""


def _is_secret_manifest(m: Manifest) -> bool:
    return m.identity.get("apiVersion") == "v1" and m.identity.get("kind") == "Secret"


def _show(identity: Mapping[str, str]) -> str:
    ns = identity.get("namespace")
    return f"Secret {ns + '/' if ns else ''}{identity.get('name', '')}"


class Sealer:
    """Encrypts one pass's Secrets per cluster, reusing the previous ciphertext when it can."""

    def __init__(
        self,
        sealed: SealedValues,
        clusters: Mapping[str, MemberCluster],
        prior_output: Mapping[str, bytes],
        allow_plaintext: bool,
    ) -> None:
        self._sealed = sealed
        self._clusters = clusters
        self._prior = prior_output
        self._allow_plaintext = allow_plaintext
        self._objects: dict[str, dict[str, Any]] = {}

    def _object(self, m: Manifest) -> dict[str, Any]:
        found = self._objects.get(m.hash)
        if found is None:
            found = self._objects[m.hash] = dict(yaml.load(m.data, Loader=yaml.CSafeLoader))
        return found

    def recipient(self, cluster: str) -> str | None:
        """The cluster's age recipient when declared and valid."""
        member = self._clusters.get(cluster)
        annotations = (member.metadata.annotations or {}) if member is not None else {}
        value = annotations.get(AGE_RECIPIENT_ANNOTATION)
        return value if value is not None and is_recipient(value) else None

    def seal(self, cluster: str, key: str, m: Manifest) -> Manifest | str:
        """The Secret manifest `m` for `cluster` as an EncryptedSecret, `m` itself when it
        may travel in clear, or why it cannot be sent (naming no value)."""
        obj = self._object(m)
        try:
            opened, count = self._sealed.unseal(obj)
        except KeyError:
            return f"{_show(m.identity)} holds sealed values this hub did not decrypt"
        if count == 0 and not plaintext_fields(obj):
            return m  # no values at all: nothing to protect
        if count == 0:
            if self._allow_plaintext:
                return m
            return (
                f"{_show(m.identity)} has values in clear (through an envelope or an override): "
                "refused; encrypt it with SOPS, or set Fleet spec.secrets.allowPlaintext: true"
            )
        hub = self._sealed.key
        target = self.recipient(cluster)
        if hub is None or target is None:
            return (
                f"{_show(m.identity)} is not sent to cluster {cluster}: its MemberCluster has no "
                f"valid age recipient (annotation {AGE_RECIPIENT_ANNOTATION}: age1...)"
            )
        recipients = [target] if target == hub.recipient else [target, hub.recipient]
        plaintext = canonical_json(opened).encode("utf-8")
        reused = self._reuse(object_path(cluster, key, m.file), recipients, plaintext, hub)
        if reused is not None:
            digest, data = reused
        else:
            body = _document(opened, recipients, encrypt(plaintext, recipients))
            data, digest = dump_yaml(body).encode("utf-8"), content_hash(body)
        return Manifest(m.file, data, m.identity, digest)

    def _reuse(
        self, path: str, recipients: list[str], plaintext: bytes, hub: AgeKey
    ) -> tuple[str, bytes] | None:
        """(content hash, bytes) of the previous file at `path` when it holds this plaintext
        for these recipients."""
        data = self._prior.get(path)
        if data is None:
            return None
        memo = (
            hashlib.sha256(data).hexdigest(),
            " ".join(recipients),
            hub.ref(plaintext.decode("utf-8")),
        )
        found = _verified.get(memo)
        if found is not None:
            with suppress(KeyError):
                _verified.move_to_end(memo)
            return found, data
        try:
            body = yaml.load(data, Loader=yaml.CSafeLoader)
            spec = body["spec"]
            if body.get("kind") != ENCRYPTED_SECRET_KIND or spec["recipients"] != recipients:
                return None
            if hub.decrypt(str(spec["ciphertext"])) != plaintext:
                return None
        except (yaml.YAMLError, KeyError, TypeError, AttributeError):
            return None
        found = _verified[memo] = content_hash(body)
        with suppress(KeyError):
            if len(_verified) > MAX_VERIFIED:
                _verified.popitem(last=False)
        return found, data


def _document(secret: Mapping[str, Any], recipients: list[str], ciphertext: str) -> dict[str, Any]:
    meta = secret.get("metadata") or {}
    metadata = {"name": str(meta.get("name", ""))}
    if meta.get("namespace"):
        metadata["namespace"] = str(meta["namespace"])
    keys = sorted({str(k) for f in VALUE_FIELDS for k in (secret.get(f) or {})})
    return {
        "apiVersion": API_VERSION,
        "kind": ENCRYPTED_SECRET_KIND,
        "metadata": metadata,
        "spec": {"keys": keys, "recipients": recipients, "ciphertext": ciphertext},
    }


_has_secret: IdentityMemo[bool] = IdentityMemo()
"""Manifest tuple -> whether it holds a Secret; plans reuse their tuples from pass to pass
(`reconciler.placememo`), so most are looked at once."""
_ANY_SECRET: StageMemo[bool] = StageMemo()
"""Placement key -> whether its manifests hold a Secret, with the manifests it looked at."""


def _holds_secret(manifests: tuple[Manifest, ...]) -> bool:
    found = _has_secret.get(manifests)
    if found is None:
        found = any(_is_secret_manifest(m) for m in manifests)
        _has_secret.put(manifests, found)
    return found


def _any_secret(plan: PlacementPlan) -> bool:
    """Whether any manifest tuple of the plan holds a Secret, remembered per placement while
    its manifests and per-cluster results are the same (compared as mappings: no walk over
    the clusters in Python). When they are not, but the placement held none last time in
    equal manifests, only the clusters whose results are other objects are looked at (a
    cluster added to a placement of 1,000: one tuple, not 1,000)."""
    inputs = (plan.manifests, frozen(plan.per_cluster))  # a reused plan's: no copy
    found = _ANY_SECRET.get(plan.key, inputs)
    if found is None:
        found = _looked_at(plan, _ANY_SECRET.last(plan.key))
        _ANY_SECRET.put(plan.key, inputs, found)
    return found


def _looked_at(plan: PlacementPlan, last: tuple[tuple[Any, ...], bool] | None) -> bool:
    """`_any_secret` the long way: each distinct manifest tuple looked at once; only those of
    the clusters that changed when `last` (the placement's last inputs and result) held no
    Secret in equal manifests (a placement scheduled again makes them anew: equal tuples, the
    elements mostly the same objects)."""
    per_cluster = plan.per_cluster
    results: Iterable[Any]
    if last is not None and not last[1] and last[0][0] == plan.manifests:
        results = map(per_cluster.get, changed_keys(last[0][1], per_cluster))
    elif _holds_secret(plan.manifests):
        return True
    else:
        results = per_cluster.values()
    seen = {id(plan.manifests)}  # none in it: the clusters that share it are not asked again
    for result in results:
        manifests = result.manifests if result is not None else ()
        if manifests and id(manifests) not in seen:
            seen.add(id(manifests))
            if _holds_secret(manifests):
                return True
    return False


def _seal_plan(plan: PlacementPlan, sealer: Sealer, views: Mapping[str, ClusterView]) -> None:
    if not _any_secret(plan):
        return
    reported = 0
    secrets: dict[int, bool] = {}  # per distinct manifest tuple (most clusters share one)
    for cluster in plan.targeted_clusters():
        manifests = plan.manifests_for(cluster)
        if id(manifests) not in secrets:
            secrets[id(manifests)] = any(_is_secret_manifest(m) for m in manifests)
        if cluster not in views or not secrets[id(manifests)]:
            continue
        out: list[Manifest] = []
        failures: list[tuple[str, str]] = []
        for m in manifests:
            result = sealer.seal(cluster, plan.key, m) if _is_secret_manifest(m) else m
            if isinstance(result, Manifest):
                out.append(result)
            else:
                failures.append((m.file, result))
        current = plan.cluster(cluster)
        failed = (*current.failures, *failures)
        plan.per_cluster = thawed(plan.per_cluster)  # copy on write: it may be a reused plan's
        plan.per_cluster[cluster] = replace(current, manifests=tuple(out), failures=failed)
        if failures and reported < MAX_REPORTED:
            reported += 1
            plan.errors += [
                ("spec.resourceSelectors", f"cluster {cluster}: {msg}") for _, msg in failures[:3]
            ]


def seal_secrets(
    plans: Mapping[str, PlacementPlan],
    fleet: FleetSnapshot,
    views: Mapping[str, ClusterView],
    prior_output: Mapping[str, bytes],
) -> None:
    """Replace every Secret manifest of every placement by its per-cluster ciphertext."""
    allow = fleet.fleet.spec.secrets.allow_plaintext
    sealer = Sealer(fleet.sealed, fleet.clusters, prior_output, allow)
    _has_secret.next_round()
    for plan in plans.values():
        if plan.held:
            continue
        try:
            _seal_plan(plan, sealer, views)
        except Exception as exc:  # one placement's fault fails it alone
            plan.sync_errors.clear()
            hold(plan, "encrypting the Secrets of", exc)


__all__ = ["Sealer", "seal_secrets"]
