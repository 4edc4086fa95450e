"""Keys in the deploy manifests (`gitfleet.deploy.KeyRefs`): the hub's age identity, its signing
key and the allowed signers are mounted read-only from the objects named (one key each), their
paths reach the container as the flags the commands read — checked by parsing the printed args
with the real `reconcile` and `agent` commands against files laid out as the mounts would —
and no key material is ever in the manifests. A writable /tmp exists under the read-only root."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest

from gitfleet.cli import main
from gitfleet.deploy import KeyRefs, agent_manifests, hub_manifests

SSH = "ssh://git@git.example.com/platform/fleet.git"
ALL_HUB_KEYS = KeyRefs("hub-age", "hub-sign", "source-signers")


def pod(docs: list[dict[str, Any]]) -> dict[str, Any]:
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    spec: dict[str, Any] = deployment["spec"]["template"]["spec"]
    return spec


def files_at(spec: dict[str, Any]) -> dict[str, str]:
    """Mounted file path -> the object (kind/name) and key it comes from."""
    volumes = {v["name"]: v for v in spec["volumes"]}
    files: dict[str, str] = {}
    for mount in spec["containers"][0]["volumeMounts"]:
        volume = volumes[mount["name"]]
        source = volume.get("secret") or volume.get("configMap") or {}
        name = source.get("secretName") or source.get("name")
        for item in source.get("items", []):
            kind = "Secret" if "secret" in volume else "ConfigMap"
            files[f"{mount['mountPath']}/{item['path']}"] = f"{kind}/{name}:{item['key']}"
    return files


def flag_value(args: list[str], flag: str) -> str | None:
    return args[args.index(flag) + 1] if flag in args else None


def test_no_keys_mounts_none_and_passes_no_key_flags() -> None:
    for docs in (hub_manifests(SSH), agent_manifests("eu-1", SSH)):
        spec = pod(docs)
        args = spec["containers"][0]["args"]
        assert not {"--age-key-file", "--sign-key", "--allowed-signers"} & set(args)
        assert "--require-signed-output" not in args
        assert not [f for f in files_at(spec) if not f.startswith("/etc/gitfleet/git/")]


def test_hub_keys_are_mounted_from_the_named_objects_and_passed_as_flags() -> None:
    spec = pod(hub_manifests(SSH, keys=ALL_HUB_KEYS))
    args, files = spec["containers"][0]["args"], files_at(spec)
    expected = {
        "--age-key-file": "Secret/hub-age:age.key",
        "--sign-key": "Secret/hub-sign:ssh-privatekey",
        "--allowed-signers": "ConfigMap/source-signers:allowed_signers",
    }
    for flag, source in expected.items():
        path = flag_value(args, flag)
        assert path is not None and files[path] == source, (flag, args, files)
    mounts = spec["containers"][0]["volumeMounts"]
    assert all(m["readOnly"] for m in mounts if m["mountPath"].startswith("/etc/gitfleet/"))
    secrets = [v["secret"] for v in spec["volumes"] if "secret" in v]
    assert all(s["defaultMode"] == 0o440 for s in secrets)


@pytest.mark.parametrize(
    ("keys", "present", "absent"),
    [
        (KeyRefs(age_key_secret="a"), ["--age-key-file"], ["--sign-key", "--allowed-signers"]),
        (KeyRefs(sign_key_secret="s"), ["--sign-key"], ["--age-key-file", "--allowed-signers"]),
        (KeyRefs(allowed_signers_configmap="c"), ["--allowed-signers"], ["--sign-key"]),
    ],
)
def test_each_hub_key_alone(keys: KeyRefs, present: list[str], absent: list[str]) -> None:
    args = pod(hub_manifests(SSH, keys=keys))["containers"][0]["args"]
    assert all(f in args for f in present) and not any(f in args for f in absent), args


def test_agent_keys_and_signed_output() -> None:
    keys = KeyRefs(age_key_secret="eu-1-age", allowed_signers_configmap="hub-signer")
    spec = pod(agent_manifests("eu-1", SSH, keys=keys))
    args, files = spec["containers"][0]["args"], files_at(spec)
    assert files[str(flag_value(args, "--age-key-file"))] == "Secret/eu-1-age:age.key"
    signers = str(flag_value(args, "--allowed-signers"))
    assert files[signers] == "ConfigMap/hub-signer:allowed_signers"
    assert "--require-signed-output" in args
    only_age = pod(agent_manifests("eu-1", SSH, keys=KeyRefs(age_key_secret="k")))
    assert "--require-signed-output" not in only_age["containers"][0]["args"]


def test_an_agent_is_never_given_a_signing_key() -> None:
    with pytest.raises(ValueError, match="hub only"):
        agent_manifests("eu-1", SSH, keys=KeyRefs(sign_key_secret="hub-sign"))


def test_a_writable_tmp_under_the_read_only_root() -> None:
    for docs in (hub_manifests(SSH, keys=ALL_HUB_KEYS), agent_manifests("eu-1", SSH)):
        spec = pod(docs)
        container = spec["containers"][0]
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        tmp = next(m for m in container["volumeMounts"] if m["mountPath"] == "/tmp")
        assert not tmp.get("readOnly")
        assert {"name": tmp["name"], "emptyDir": {}} in spec["volumes"]


def test_manifests_hold_names_never_key_material() -> None:
    keys = KeyRefs(age_key_secret="eu-1-age", allowed_signers_configmap="hub-signer")
    text = json.dumps([hub_manifests(SSH, keys=ALL_HUB_KEYS), agent_manifests("c", SSH, keys=keys)])
    for marker in ("AGE-SECRET-KEY", "BEGIN OPENSSH", "ssh-ed25519 ", "PGP"):
        assert marker not in text


def parse(command: str, args: list[str], root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Parse `args` (as printed in a manifest) with the real command, every /etc/gitfleet/ path
    moved under `root`, after creating the files the mounts would hold there."""
    monkeypatch.setenv("SOPS_AGE_KEY_FILE", "")  # the hub's --age-key-file callback sets it
    monkeypatch.delenv("SOPS_AGE_KEY_FILE")
    moved = [a.replace("/etc/gitfleet/", f"{root}/etc/gitfleet/") for a in args]
    group = main.commands[command]
    assert isinstance(group, click.Group)
    with group.make_context(command, moved[1:]) as ctx:
        assert ctx.params["repo"] == SSH


@pytest.mark.parametrize("component", ["hub", "agent"])
def test_the_commands_accept_the_printed_flags_and_paths(
    component: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if component == "hub":
        docs = hub_manifests(SSH, keys=ALL_HUB_KEYS)
    else:
        keys = KeyRefs(age_key_secret="k", allowed_signers_configmap="c")
        docs = agent_manifests("eu-1", SSH, keys=keys)
    spec = pod(docs)
    for path in files_at(spec):
        target = tmp_path / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("placeholder\n")
    args = spec["containers"][0]["args"]
    parse(args[0], args, tmp_path, monkeypatch)
    with pytest.raises(click.BadParameter, match="does not exist"):
        parse(args[0], args, tmp_path / "elsewhere", monkeypatch)
