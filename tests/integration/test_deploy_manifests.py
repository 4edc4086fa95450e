"""`gitfleet agent manifests` and `gitfleet reconcile manifests` through the real CLI: the
objects a cluster needs, least-privilege RBAC (no wildcards; the hub has no API access at all),
Git credentials only referenced by Secret name, and the agent/reconcile commands still demand
--repo when they run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.fleet_helpers import run_cli

SSH = "ssh://git@git.example.com/platform/fleet.git"
HTTPS = "https://git.example.com/platform/fleet.git"


def manifests(tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    result = run_cli(tmp_path, *args)
    assert result.code == 0, result.output
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def by_kind(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in docs}


def container(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return by_kind(docs)["Deployment"]["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.parametrize("url", [SSH, HTTPS])
def test_agent_manifests(tmp_path: Path, url: str) -> None:
    docs = manifests(tmp_path, "agent", "manifests", "--cluster", "eu-1", "--repo", url)
    kinds = by_kind(docs)
    expected = {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment"}
    assert expected <= set(kinds)
    assert ("ConfigMap" in kinds) == (url == HTTPS)  # the askpass helper for https
    rules = kinds["ClusterRole"]["rules"]
    assert all("*" not in r["apiGroups"] + r["resources"] + r["verbs"] for r in rules)
    assert not any("escalate" in r["verbs"] or "bind" in r["verbs"] for r in rules)
    c = container(docs)
    assert c["args"][:5] == ["agent", "--repo", url, "--cluster", "eu-1"]
    assert c["securityContext"]["runAsNonRoot"] and c["securityContext"]["readOnlyRootFilesystem"]
    secret = next(
        v for v in kinds["Deployment"]["spec"]["template"]["spec"]["volumes"] if "secret" in v
    )
    assert secret["secret"]["secretName"] == "gitfleet-git"
    text = json.dumps(docs)
    assert "password:" not in text and "BEGIN OPENSSH" not in text


def test_agent_manifests_with_chosen_resources(tmp_path: Path) -> None:
    args = [
        "agent",
        "manifests",
        "--cluster",
        "eu-1",
        "--repo",
        SSH,
        "--resource",
        "apps/deployments",
    ]
    docs = manifests(
        tmp_path, *args, "--resource", "configmaps", "--image", "reg.example/gitfleet:1"
    )
    rules = by_kind(docs)["ClusterRole"]["rules"]
    placed = {
        (r["apiGroups"][0], res) for r in rules for res in r["resources"] if "delete" in r["verbs"]
    }
    assert placed == {("apps", "deployments"), ("", "configmaps"), ("", "namespaces")}
    assert container(docs)["image"] == "reg.example/gitfleet:1"


def test_hub_manifests_have_no_api_access(tmp_path: Path) -> None:
    docs = manifests(tmp_path, "reconcile", "manifests", "--repo", SSH)
    kinds = by_kind(docs)
    assert not {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} & set(kinds)
    assert kinds["ServiceAccount"]["automountServiceAccountToken"] is False
    assert container(docs)["args"][:3] == ["reconcile", "--repo", SSH]


def test_json_output_is_a_list(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "reconcile", "manifests", "--repo", SSH, "--output", "json")
    doc = json.loads(result.stdout)
    assert doc["kind"] == "List" and doc["items"]


@pytest.mark.parametrize("command", ["agent", "reconcile"])
def test_running_still_needs_repo(tmp_path: Path, command: str) -> None:
    result = run_cli(tmp_path, command, "--once")
    assert result.code == 2
    assert "Missing option '--repo'" in result.stderr


def test_key_objects_by_name_through_the_cli(tmp_path: Path) -> None:
    keys = ["--age-key-secret", "hub-age", "--sign-key-secret", "hub-sign"]
    keys += ["--allowed-signers-configmap", "source-signers"]
    docs = manifests(tmp_path, "reconcile", "manifests", "--repo", SSH, *keys)
    args = container(docs)["args"]
    assert args[args.index("--age-key-file") + 1] == "/etc/gitfleet/age/age.key"
    assert args[args.index("--sign-key") + 1] == "/etc/gitfleet/sign/ssh-privatekey"
    assert args[args.index("--allowed-signers") + 1] == "/etc/gitfleet/signers/allowed_signers"
    volumes = by_kind(docs)["Deployment"]["spec"]["template"]["spec"]["volumes"]
    named = {
        v.get("secret", {}).get("secretName") or v.get("configMap", {}).get("name") for v in volumes
    }
    assert {"hub-age", "hub-sign", "source-signers"} <= named
    agent = manifests(
        tmp_path,
        "agent",
        "manifests",
        "--cluster",
        "eu-1",
        "--repo",
        SSH,
        "--age-key-secret",
        "eu-1-age",
        "--allowed-signers-configmap",
        "hub-signer",
    )
    agent_args = container(agent)["args"]
    assert "--require-signed-output" in agent_args and "--age-key-file" in agent_args


@pytest.mark.parametrize("name", ["Hub_Key", "../x", "-rf", ""])
def test_key_object_names_are_checked(tmp_path: Path, name: str) -> None:
    result = run_cli(tmp_path, "reconcile", "manifests", "--repo", SSH, "--age-key-secret", name)
    assert result.code == 2, result.output
    assert "--age-key-secret" in result.stderr and "RFC 1123" in result.stderr
