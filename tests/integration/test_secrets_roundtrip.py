"""A SOPS/age Secret through hub and agents, with real Git, the real `sops` and in-memory clusters.

The fleet holds a Secret encrypted with `sops --age` to the hub's key. The hub decrypts it and
re-encrypts it per cluster (EncryptedSecret on the output branch); each agent decrypts with its
own key and applies the Secret. Then every blob of every commit of every ref of the remote,
every commit message, the hub's and agents' results and logs, and the output of `gitfleet
render` and `gitfleet plan` are scanned for the plaintext values (as written, base64 and
decoded). Skipped (with the reason) only where the `sops` binary is missing: hack/tools.sh
builds it.
"""

from __future__ import annotations

import base64
import logging
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gitfleet.agent.gitloop import Agent
from gitfleet.agent.memory import InMemoryCluster
from gitfleet.cli import main
from gitfleet.load.agecrypt import AgeKey, generate_identity, read_key
from reconciler.loop import Hub
from tests.helpers.agents import make_agent
from tests.helpers.fleetfiles import format_cluster, format_placement, format_settings, write_tree
from tests.helpers.gitrepo import commit_all, git, init_bare, init_work, show_output
from tests.helpers.hubs import Clock, make_hub

SOPS = shutil.which("sops")
pytestmark = pytest.mark.skipif(
    SOPS is None, reason="the sops binary is not installed (hack/tools.sh builds it)"
)

PASSWORD = "zebra-quokka-7731-stringdata"
TOKEN = "PLATYPUS-9f3e-data-value"
VALUES = (PASSWORD, TOKEN)

RECIPIENT = "  annotations:\n    gitfleet.io/age-recipient: {recipient}\n"
SECRET = """apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: app
type: Opaque
stringData:
  password: {password}
data:
  token: {token}
"""
SECRET_FILE = "secret_app_db.yaml"


def encodings(value: str) -> list[bytes]:
    """The forms a value could leak in: as written, base64 (with and without padding)."""
    encoded = base64.b64encode(value.encode())
    return [value.encode(), encoded, encoded.rstrip(b"=")]


def sops_encrypt(path: Path, recipient: str) -> None:
    assert SOPS is not None
    argv = [SOPS, "--encrypt", "--age", recipient, "--encrypted-regex", "^(data|stringData)$"]
    subprocess.run([*argv, "--in-place", str(path)], check=True, capture_output=True)


def keys(tmp: Path) -> dict[str, Path]:
    out = {}
    for name in ("hub", "c1", "c2", "other"):
        identity, _ = generate_identity()
        out[name] = tmp / f"{name}.key"
        out[name].write_text(f"# {name}\n{identity}\n")
    return out


def recipient(key_file: Path) -> str:
    return read_key(key_file).recipient


@pytest.fixture()
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    key_files = keys(tmp_path)
    monkeypatch.setenv("SOPS_AGE_KEY_FILE", str(key_files["hub"]))
    remote = init_bare(tmp_path / "remote.git")
    work = init_work(tmp_path / "work")
    files = {
        f"clusters/{name}.yaml": format_cluster(name, "prod")
        + RECIPIENT.format(recipient=recipient(key_files[name]))
        for name in ("c1", "c2")
    }
    files["clusters/c3.yaml"] = format_cluster("c3", "prod")  # no recipient
    token = base64.b64encode(TOKEN.encode()).decode()
    files["resources/app.yaml"] = format_settings("app", "mode", "live")
    files["resources/db.sops.yaml"] = SECRET.format(password=PASSWORD, token=token)
    files["placements/app.yaml"] = format_placement("app")
    write_tree(work, files)
    sops_encrypt(work / "resources/db.sops.yaml", recipient(key_files["hub"]))
    commit_all(work, "fleet with a SOPS secret", push_to=remote)
    return {"remote": remote, "work": work, "tmp": tmp_path, **key_files}


def make_cluster_agent(
    world: dict[str, Path], name: str, clock: Clock, cluster: InMemoryCluster
) -> Agent:
    key: AgeKey | None = read_key(world[name]) if name in world else None
    cache = world["tmp"] / f"agent-{name}"
    return make_agent(
        world["remote"], name, cache, clock, cluster, heartbeat=timedelta(hours=9), age_key=key
    )


def all_blobs_and_messages(remote: Path) -> list[bytes]:
    """Every object (blobs, trees, commits with their messages) reachable from any ref."""
    listed = subprocess.run(
        ["git", "--git-dir", str(remote), "rev-list", "--all", "--objects"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    ids = sorted({line for line in listed if len(line) == 40})
    batch = subprocess.run(
        ["git", "--git-dir", str(remote), "cat-file", "--batch"],
        input="\n".join(ids).encode() + b"\n",
        check=True,
        capture_output=True,
    ).stdout
    assert len(ids) > 20
    assert b"EncryptedSecret" in batch and b"sops:" in batch  # the scan sees the output and source
    return [batch]


def assert_no_values(where: str, chunks: list[bytes] | list[str]) -> None:
    for chunk in chunks:
        data = chunk.encode() if isinstance(chunk, str) else chunk
        for value in VALUES:
            for form in encodings(value):
                assert form not in data, f"{where} holds a Secret value"


def converge(hub: Hub, agents: dict[str, Agent], rounds: int = 6) -> list[str]:
    """Hub and agents in turn until quiet; their results as text (the logs)."""
    logs = []
    for _ in range(rounds):
        logs.append(repr(hub.run_once()))
        logs += [repr(a.run_once()) for a in agents.values()]
    return logs


def test_sops_secret_round_trip_never_leaks(
    world: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    remote, tmp = world["remote"], world["tmp"]
    clock = Clock()
    hub = make_hub(remote, tmp / "hub", clock)
    clusters = {n: InMemoryCluster() for n in ("c1", "c2", "c3")}
    agents = {n: make_cluster_agent(world, n, clock, clusters[n]) for n in clusters}
    logs = converge(hub, agents)

    # Each agent with a key applied the real Secret; the output holds ciphertext only.
    for name in ("c1", "c2"):
        secret = next(o for o in clusters[name].objects() if o["kind"] == "Secret")
        assert base64.b64decode(secret["data"]["password"]).decode() == PASSWORD
        assert base64.b64decode(secret["data"]["token"]).decode() == TOKEN
        doc = yaml.safe_load(show_output(remote, f"clusters/{name}/app/{SECRET_FILE}"))
        assert doc["kind"] == "EncryptedSecret"
        assert doc["spec"]["keys"] == ["password", "token"]
        assert doc["spec"]["recipients"] == [recipient(world[name]), recipient(world["hub"])]
        index = yaml.safe_load(show_output(remote, f"clusters/{name}/app/index.yaml"))
        entry = next(o for o in index["objects"] if o["file"] == SECRET_FILE)
        assert (entry["kind"], entry["name"]) == ("Secret", "db")

    # Each cluster can read only its own copy.
    c1_doc = yaml.safe_load(show_output(remote, f"clusters/c1/app/{SECRET_FILE}"))
    assert read_key(world["c2"]).decrypt(c1_doc["spec"]["ciphertext"]) is None
    assert read_key(world["c1"]).decrypt(c1_doc["spec"]["ciphertext"]) is not None

    # c3 declares no recipient: an error for that cluster, never a file in clear.
    placed = {o["metadata"]["name"] for o in clusters["c3"].objects()}
    assert "settings" in placed and "db" not in placed
    status = show_output(remote, "status/placements/app.yaml")
    assert "is not sent to cluster c3" in status
    with pytest.raises(subprocess.CalledProcessError):
        show_output(remote, f"clusters/c3/app/{SECRET_FILE}")

    # Determinism: a quiet hub commits nothing, and a fresh hub (new process, empty memory
    # caches) reuses the ciphertext byte for byte.
    tip = git(remote, "rev-parse", "gitfleet/rendered")
    assert hub.run_once().outcome in ("skipped", "unchanged")
    fresh = make_hub(remote, tmp / "hub2", clock)
    assert fresh.run_once().outcome in ("skipped", "unchanged")
    assert git(remote, "rev-parse", "gitfleet/rendered") == tip

    # The CLI's render and plan show no value either.
    runner = CliRunner()
    rendered = runner.invoke(main, ["render", str(world["work"]), "--out", str(tmp / "out")])
    assert rendered.exit_code == 1, rendered.output  # c3's missing recipient is an error
    assert "c3" in rendered.output
    planned = runner.invoke(
        main, ["plan", "--repo", str(world["work"]), "--base", "HEAD", "--head", "HEAD"]
    )
    assert planned.exit_code == 1 and "not sent to cluster c3" in planned.output, planned.output
    written = [p.read_bytes() for p in (tmp / "out").rglob("*") if p.is_file()]
    assert_no_values("render output", [rendered.output, planned.output, *written])
    cache = ["--cache-dir", str(tmp / "cli-cache")]
    shown = [
        runner.invoke(main, ["status", kind, name, "--repo", str(remote), *cache, *fmt])
        for kind, name in (("placement", "app"), ("cluster", "c1"))
        for fmt in ([], ["--output", "json"])
    ]
    shown.append(runner.invoke(main, ["history", "--repo", str(remote), *cache]))
    shown.append(runner.invoke(main, ["reconcile", "--once", "--repo", str(remote), *cache]))
    assert "Secret app/db is not sent to cluster c3" in shown[-1].output
    assert all(r.exit_code in (0, 1) for r in shown), [r.output for r in shown]
    assert_no_values("status, history and reconcile output", [r.output for r in shown])

    assert PASSWORD.encode() not in b"".join(written)
    assert_no_values("the remote's objects", all_blobs_and_messages(remote))
    assert_no_values("hub and agent results", logs)
    assert_no_values("logs", [r.getMessage() for r in caplog.records])


def test_agent_without_the_right_key_fails_that_object_only(world: dict[str, Path]) -> None:
    remote, tmp = world["remote"], world["tmp"]
    clock = Clock()
    hub = make_hub(remote, tmp / "hub", clock)
    clusters = {n: InMemoryCluster() for n in ("c1", "c2")}
    agents = {
        "c1": make_cluster_agent({**world, "c1": world["other"]}, "c1", clock, clusters["c1"]),
        "c2": make_cluster_agent(
            {k: v for k, v in world.items() if k != "c2"}, "c2", clock, clusters["c2"]
        ),
    }
    logs = converge(hub, agents, rounds=4)
    for name in ("c1", "c2"):
        names = {o["metadata"]["name"] for o in clusters[name].objects()}
        assert "settings" in names and "db" not in names
    report = git(remote, "show", "gitfleet/status/c1:report.yaml")
    assert "cannot decrypt it" in report
    report = git(remote, "show", "gitfleet/status/c2:report.yaml")
    assert "this agent has no age key" in report
    assert_no_values("agent reports and results", [*logs, report])


def test_hub_without_its_key_keeps_the_last_good_output(
    world: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    remote, tmp = world["remote"], world["tmp"]
    clock = Clock()
    hub = make_hub(remote, tmp / "hub", clock)
    agents = {"c1": make_cluster_agent(world, "c1", clock, InMemoryCluster())}
    converge(hub, agents, rounds=3)
    before = show_output(remote, f"clusters/c1/app/{SECRET_FILE}")
    monkeypatch.delenv("SOPS_AGE_KEY_FILE")
    (world["work"] / "resources/app.yaml").write_text(format_settings("app", "mode", "maintenance"))
    git(world["work"], "commit", "-qam", "maintenance")
    git(world["work"], "push", "-q", str(remote), "main")
    fresh = make_hub(remote, tmp / "hub-nokey", clock)
    report = fresh.run_once()
    assert any("has no age key" in str(e) for e in report.errors), report
    assert any(e.file == "resources/db.sops.yaml" for e in report.errors)
    assert show_output(remote, f"clusters/c1/app/{SECRET_FILE}") == before
