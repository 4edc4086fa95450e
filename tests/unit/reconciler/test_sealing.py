"""`reconciler.sealing.Sealer` and the agent's side of an EncryptedSecret, without sops.

The hub's `SealedValues` is filled directly (as `renderers.sops` does after decrypting), so
these tables run wherever pyrage is installed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitfleet.agent.desired import load_directory
from gitfleet.api import MemberCluster
from gitfleet.api.canonical import content_hash
from gitfleet.load.agecrypt import AgeKey, generate_identity, is_recipient, is_ref, read_key
from gitfleet.load.sealedvalues import SealedValues, plaintext_fields
from gitfleet.load.yamlio import dump_yaml
from reconciler.manifests import Manifest, manifest_of
from reconciler.output import index_doc
from reconciler.sealing import Sealer

VALUE = "okapi-lantern-5532"


def new_key(tmp_path: Path, name: str) -> AgeKey:
    path = tmp_path / f"{name}.key"
    path.write_text(generate_identity()[0] + "\n")
    return read_key(path)


def cluster(name: str, recipient: str | None) -> MemberCluster:
    meta: dict[str, Any] = {"name": name}
    if recipient is not None:
        meta["annotations"] = {"gitfleet.io/age-recipient": recipient}
    return MemberCluster.model_validate(
        {
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": meta,
        }
    )


def secret(**fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db", "namespace": "app"},
        **fields,
    }


@pytest.fixture()
def keys(tmp_path: Path) -> dict[str, AgeKey]:
    return {n: new_key(tmp_path, n) for n in ("hub", "c1", "c2")}


def sealed_manifest(keys: dict[str, AgeKey], value: str = VALUE) -> tuple[SealedValues, Manifest]:
    store = SealedValues(keys["hub"])
    body = store.seal(secret(stringData={"password": value}))
    assert plaintext_fields(body) == [] and is_ref(body["stringData"]["password"])
    return store, manifest_of(body)


def sealer(
    keys: dict[str, AgeKey],
    store: SealedValues,
    prior: dict[str, bytes] | None = None,
    allow: bool = False,
) -> Sealer:
    clusters = {
        "c1": cluster("c1", keys["c1"].recipient),
        "c2": cluster("c2", keys["c2"].recipient),
        "none": cluster("none", None),
        "bad": cluster("bad", "age1notarecipient"),
    }
    return Sealer(store, clusters, prior or {}, allow)


def test_placeholders_are_keyed_not_plain_hashes(keys: dict[str, AgeKey]) -> None:
    ref = keys["hub"].ref(VALUE)
    assert is_ref(ref) and VALUE not in ref
    assert hashlib.sha256(VALUE.encode()).hexdigest() not in ref
    assert keys["c1"].ref(VALUE) != ref  # another key, another placeholder
    assert keys["hub"].ref(VALUE) == ref  # stable for one key
    assert repr(SealedValues(keys["hub"])) == "SealedValues(0 value(s))"
    assert "AGE-SECRET-KEY" not in repr(keys["hub"])


def test_secret_is_encrypted_for_the_cluster_and_the_hub(keys: dict[str, AgeKey]) -> None:
    store, m = sealed_manifest(keys)
    out = sealer(keys, store).seal("c1", "app", m)
    assert isinstance(out, Manifest)
    assert VALUE.encode() not in out.data and out.identity == m.identity and out.file == m.file
    doc = yaml.safe_load(out.data)
    assert doc["kind"] == "EncryptedSecret" and doc["spec"]["keys"] == ["password"]
    assert doc["spec"]["recipients"] == [keys["c1"].recipient, keys["hub"].recipient]
    assert out.hash == content_hash(doc)
    opened = keys["c1"].decrypt(doc["spec"]["ciphertext"])
    assert opened is not None and json.loads(opened)["stringData"] == {"password": VALUE}
    assert keys["c2"].decrypt(doc["spec"]["ciphertext"]) is None


def test_previous_ciphertext_is_reused_byte_for_byte(keys: dict[str, AgeKey]) -> None:
    store, m = sealed_manifest(keys)
    first = sealer(keys, store).seal("c1", "app", m)
    assert isinstance(first, Manifest)
    again = sealer(keys, store).seal("c1", "app", m)
    assert isinstance(again, Manifest) and again.data != first.data  # age is randomised
    prior = {f"clusters/c1/app/{m.file}": first.data}
    reused = sealer(keys, store, prior).seal("c1", "app", m)
    assert isinstance(reused, Manifest)
    assert (reused.data, reused.hash) == (first.data, first.hash)
    # Another value, or another cluster's file, is encrypted anew.
    store2, m2 = sealed_manifest(keys, VALUE + "-rotated")
    changed = sealer(keys, store2, prior).seal("c1", "app", m2)
    assert isinstance(changed, Manifest) and changed.data != first.data
    other = sealer(keys, store, {f"clusters/c2/app/{m.file}": first.data}).seal("c2", "app", m)
    assert isinstance(other, Manifest) and other.data != first.data


def test_recipient_change_encrypts_anew(keys: dict[str, AgeKey], tmp_path: Path) -> None:
    store, m = sealed_manifest(keys)
    first = sealer(keys, store).seal("c1", "app", m)
    assert isinstance(first, Manifest)
    rotated = {**keys, "c1": new_key(tmp_path, "c1-new")}
    out = sealer(rotated, store, {f"clusters/c1/app/{m.file}": first.data}).seal("c1", "app", m)
    assert isinstance(out, Manifest) and out.data != first.data
    assert rotated["c1"].decrypt(yaml.safe_load(out.data)["spec"]["ciphertext"]) is not None


@pytest.mark.parametrize("name", ["none", "bad", "unknown"])
def test_cluster_without_valid_recipient_gets_nothing(keys: dict[str, AgeKey], name: str) -> None:
    store, m = sealed_manifest(keys)
    out = sealer(keys, store).seal(name, "app", m)
    assert out == (
        f"Secret app/db is not sent to cluster {name}: its MemberCluster has no valid age "
        "recipient (annotation gitfleet.io/age-recipient: age1...)"
    )


@pytest.mark.parametrize(
    ("body", "allow", "result"),
    [
        (secret(stringData={"password": VALUE}), False, "refused"),
        (secret(stringData={"password": VALUE}), True, "clear"),
        (secret(data={"password": "b2thcGk="}), False, "refused"),
        (secret(type="kubernetes.io/service-account-token"), False, "clear"),
        (secret(stringData={"password": "gfsealed" + "0" * 64}), False, "unknown"),
    ],
    ids=["plaintext", "plaintext-allowed", "plaintext-data", "no-values", "unknown-placeholder"],
)
def test_secrets_in_clear_are_refused_at_the_output(
    keys: dict[str, AgeKey], body: dict[str, Any], allow: bool, result: str
) -> None:
    m = manifest_of(body)
    out = sealer(keys, SealedValues(keys["hub"]), allow=allow).seal("c1", "app", m)
    if result == "clear":
        assert out is m
    elif result == "refused":
        assert isinstance(out, str) and "has values in clear" in out and VALUE not in out
    else:
        assert out == "Secret app/db holds sealed values this hub did not decrypt"


def test_recipient_check() -> None:
    assert is_recipient(generate_identity()[1])
    for bad in ("", "age1", "age1" + "q" * 58, "AGE-SECRET-KEY-1" + "Q" * 58, "age1notarecipient"):
        assert not is_recipient(bad)


def agent_files(m: Manifest, data: bytes | None = None) -> dict[str, bytes]:
    entry = {"key": "app", "name": "app", "resourceSnapshotIndex": 0, "objects": [m.entry]}
    index = index_doc("c1", [entry])
    return {
        "clusters/c1/index.yaml": dump_yaml(index).encode(),
        f"clusters/c1/app/{m.file}": data if data is not None else m.data,
    }


def test_agent_decrypts_with_its_own_key(keys: dict[str, AgeKey]) -> None:
    store, m = sealed_manifest(keys)
    out = sealer(keys, store).seal("c1", "app", m)
    assert isinstance(out, Manifest)
    files = agent_files(out)
    (desired,) = load_directory("c1", files, keys["c1"]).objects
    assert desired.error == "" and desired.manifest is not None
    assert desired.manifest["stringData"] == {"password": VALUE}
    for key, message in [
        (None, "this agent has no age key"),
        (keys["c2"], f"this agent's age key ({keys['c2'].recipient}) cannot decrypt it"),
    ]:
        (failed,) = load_directory("c1", files, key).objects
        assert failed.manifest is None and message in failed.error
    (tampered,) = load_directory("c1", agent_files(out, out.data + b"# edit\n"), keys["c1"]).objects
    assert tampered.manifest is not None  # a comment does not change the hash, content does
    doc = yaml.safe_load(out.data)
    doc["spec"]["keys"] = ["other"]
    (edited,) = load_directory("c1", agent_files(out, dump_yaml(doc).encode()), keys["c1"]).objects
    assert "content hash differs" in edited.error


def test_agent_refuses_a_ciphertext_naming_another_object(keys: dict[str, AgeKey]) -> None:
    store, m = sealed_manifest(keys)
    out = sealer(keys, store).seal("c1", "app", m)
    assert isinstance(out, Manifest)
    renamed = Manifest(out.file, out.data, {**out.identity, "name": "other"}, out.hash)
    (desired,) = load_directory("c1", agent_files(renamed), keys["c1"]).objects
    assert "object identity differs" in desired.error
