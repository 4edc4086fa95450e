"""Signed commits end to end with real keys (`ssh-keygen -t ed25519`), real signed commits
(`git -c gpg.format=ssh commit -S`), the real hub loop against a bare remote and the agent
against the in-memory cluster: only verified source commits are reconciled, keys come from the
last verified commit (never from the commit being checked), the hub signs its output and an agent
that requires it refuses an unsigned output commit."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gitfleet.agent.gitloop import Agent, AgentConfig
from gitfleet.agent.inventory import read_applied_commit
from gitfleet.agent.memory import InMemoryCluster
from reconciler.loop import Hub, HubConfig, PassReport
from tests.helpers.gitrepo import copy_work, init_bare
from tests.helpers.signing import (
    commit_signed,
    format_signer_line,
    make_sign_options,
    make_ssh_key,
    read_verdict,
)
from tests.helpers.signing import git_as_t as git
from tests.integration.fleet_helpers import Result, run_cli

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
OUTPUT = "gitfleet/rendered"
SIGNERS = "governance/allowed_signers"
DEPLOYMENT = "resources/web/deployment.yaml"
VERIFIED = f"""
  verification:
    mode: SSH
    allowedSignersFile: {SIGNERS}
"""


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(args, cwd=cwd, check=True, capture_output=True, text=True, env=env)
    return done.stdout.strip()


@dataclass
class World:
    tmp: Path
    remote: Path
    work: Path

    def key(self, name: str) -> Path:
        """A fresh ed25519 key pair; returns the private key file."""
        return make_ssh_key(self.tmp / "keys", name)

    def signer_line(self, name: str) -> str:
        return format_signer_line(name, self.key(name))

    def allow(self, *names: str) -> None:
        target = self.work / SIGNERS
        target.parent.mkdir(exist_ok=True)
        target.write_text("".join(self.signer_line(n) for n in names))

    def commit(self, message: str, signer: str | None = None) -> str:
        return commit_signed(self.work, message, self.key(signer) if signer else None)

    def push(self) -> None:
        git(self.work, "push", "-q", "--force", str(self.remote), "HEAD:refs/heads/main")

    def scale(self, replicas: int) -> None:
        path = self.work / DEPLOYMENT
        text = path.read_text()
        current = next(line for line in text.splitlines() if "replicas:" in line)
        path.write_text(text.replace(current, f"  replicas: {replicas}"))

    def hub(self, name: str = "hub", **options: object) -> Hub:
        config = HubConfig(str(self.remote), self.tmp / name, **options)  # type: ignore[arg-type]
        return Hub(config, clock=lambda: NOW)

    def reconcile_once(self, *flags: str | Path) -> Result:
        """`gitfleet reconcile --once` on the remote, as a real subprocess, with `flags`."""
        cache = self.tmp / "cli"
        return run_cli(
            self.tmp, "reconcile", "--repo", self.remote, "--once", "--cache-dir", cache, *flags
        )

    def rendered_replicas(self) -> str:
        text = git(
            self.remote, "show", f"{OUTPUT}:clusters/eu-1/web/deployment.apps_web_frontend.yaml"
        )
        return next(line.split(":")[1].strip() for line in text.splitlines() if "replicas" in line)

    def output(self) -> str:
        return git(self.remote, "rev-parse", OUTPUT)

    def render(self) -> str:
        """Every file of the output but the hub's own status (a held source adds only that)."""
        listing = git(self.remote, "ls-tree", "-r", OUTPUT).splitlines()
        return "\n".join(line for line in listing if not line.endswith("\tstatus/hub.yaml"))


@pytest.fixture
def world(tmp_path: Path) -> World:
    remote = init_bare(tmp_path / "remote.git")
    work = copy_work(ROOT / "examples/quickstart", tmp_path / "work")
    fleet = work / "fleet.yaml"
    fleet.write_text(fleet.read_text() + VERIFIED)
    w = World(tmp_path, remote, work)
    w.allow("alice")
    w.commit("fleet with verification", "alice")
    w.push()
    return w


def held(report: PassReport, commit: str, why: str) -> None:
    assert report.outcome == "source-verification-failed", report
    assert report.message.startswith("SourceVerificationFailed: "), report.message
    assert f"commit {commit[:12]}: {why}" in report.message, report.message


def test_signed_tip_reconciles_unsigned_tip_is_held(world: World) -> None:
    hub = world.hub()
    first = hub.run_once()
    assert (first.outcome, first.errors) == ("committed", ()), first
    world.scale(3)
    signed = world.commit("scale to 3", "alice")
    world.push()
    assert hub.run_once().outcome == "committed"
    assert world.rendered_replicas() == "3"
    good = world.render()

    world.scale(7)
    unsigned = world.commit("scale to 7, unsigned")
    world.push()
    for attempt in (hub, hub, world.hub("restarted")):
        held(attempt.run_once(), unsigned, "not signed")
    assert world.render() == good and world.rendered_replicas() == "3"

    # A signed tip on top does not launder the unsigned commit under it.
    world.scale(8)
    world.commit("scale to 8, signed on top", "alice")
    world.push()
    report = hub.run_once()
    held(report, unsigned, "not signed")
    assert world.render() == good

    # Replacing the unsigned commits with a signed one (moving the branch back) proceeds.
    git(world.work, "reset", "-q", "--hard", signed)
    world.scale(9)
    world.commit("scale to 9, signed", "alice")
    world.push()
    assert hub.run_once().outcome == "committed"
    assert world.rendered_replicas() == "9"


def test_a_key_not_in_the_allowed_file_is_held(world: World) -> None:
    hub = world.hub()
    assert hub.run_once().outcome == "committed"
    good = world.render()
    world.scale(4)
    mallory = world.commit("scale by mallory", "mallory")
    world.push()
    held(hub.run_once(), mallory, "signed by a key that is not allowed")
    assert world.render() == good


def test_a_key_added_in_the_unverified_commit_itself_does_not_count(world: World) -> None:
    hub = world.hub()
    assert hub.run_once().outcome == "committed"
    good = world.render()
    world.allow("alice", "mallory")
    world.scale(6)
    sneaky = world.commit("mallory allows herself", "mallory")
    world.push()
    report = hub.run_once()
    held(report, sneaky, "signed by a key that is not allowed")
    assert f"{SIGNERS} at " in report.message
    # Turning verification off in an unverified commit does not count either.
    fleet = world.work / "fleet.yaml"
    fleet.write_text(fleet.read_text().replace("mode: SSH", "mode: None"))
    off = world.commit("verification off", "mallory")
    world.push()
    held(hub.run_once(), sneaky, "signed by a key that is not allowed")
    assert world.render() == good and off


def test_keys_change_only_through_verified_commits(world: World) -> None:
    hub = world.hub()
    assert hub.run_once().outcome == "committed"
    # alice allows bob and bob commits right after: both arrive in one pass.
    world.allow("alice", "bob")
    world.commit("alice adds bob", "alice")
    world.scale(5)
    world.commit("bob scales", "bob")
    world.push()
    assert hub.run_once().outcome == "committed"
    assert world.rendered_replicas() == "5"
    # alice removes bob; a commit bob signs afterwards no longer counts.
    world.allow("alice")
    world.commit("alice removes bob", "alice")
    world.scale(6)
    late = world.commit("bob after removal", "bob")
    world.push()
    held(hub.run_once(), late, "signed by a key that is not allowed")
    assert world.rendered_replicas() == "5"


@pytest.mark.parametrize("commits", ["All", "FirstParent"])
def test_merges_of_unsigned_branches(world: World, commits: str) -> None:
    fleet = world.work / "fleet.yaml"
    fleet.write_text(fleet.read_text() + f"    commits: {commits}\n")
    world.commit(f"commits: {commits}", "alice")
    world.push()
    hub = world.hub()
    assert hub.run_once().outcome == "committed"
    git(world.work, "checkout", "-q", "-b", "feature")
    world.scale(3)
    contributor = world.commit("an unsigned contribution")
    git(world.work, "checkout", "-q", "main")
    sign = make_sign_options(world.key("alice"))
    git(world.work, *sign, "merge", "-q", "--no-ff", "-S", "-m", "merge (signed)", "feature")
    world.push()
    report = hub.run_once()
    if commits == "FirstParent":
        assert report.outcome == "committed", report
        assert world.rendered_replicas() == "3"
    else:
        held(report, contributor, "not signed")


def test_operator_file_replaces_the_repository_keys(world: World) -> None:
    assert world.hub().run_once().outcome == "committed"
    world.scale(4)
    bob = world.commit("bob, allowed only by the operator", "bob")
    world.push()
    held(world.hub().run_once(), bob, "signed by a key that is not allowed")
    operator = world.tmp / "operator_signers"
    operator.write_text(world.signer_line("bob"))
    allowed = world.hub(allowed_signers=operator).run_once()
    assert allowed.outcome == "committed", allowed
    world.scale(5)
    alice = world.commit("alice, no longer allowed by the operator", "alice")
    world.push()
    held(world.hub(allowed_signers=operator).run_once(), alice, "signed by a key")
    cli = world.reconcile_once("--allowed-signers", operator)
    assert cli.code == 1 and "source-verification-failed" in cli.stdout, cli.output
    assert alice[:12] in cli.stdout


def test_first_pass_checks_the_tip_under_its_own_policy(world: World) -> None:
    world.scale(4)
    unsigned = world.commit("unsigned first commit the hub sees")
    world.push()
    held(world.hub().run_once(), unsigned, "not signed")
    # Nothing is rendered: the output holds only the record of the refusal (`test_source_hold`).
    assert world.render() == "", "no render may be written"
    assert git(world.remote, "ls-tree", "-r", "--name-only", OUTPUT) == "status/hub.yaml"


def test_unreadable_signers_file_fails_closed(world: World) -> None:
    hub = world.hub()
    assert hub.run_once().outcome == "committed"
    (world.work / SIGNERS).unlink()
    gone = world.commit("alice deletes the signers file", "alice")
    world.push()
    # Verified against the file before it (nothing to render: the output stays as it is).
    assert hub.run_once().outcome == "unchanged"
    world.scale(3)
    world.commit("next", "alice")
    world.push()
    report = hub.run_once()
    assert report.outcome == "source-verification-failed", report
    assert f'"{SIGNERS}" is not a file at commit {gone[:12]}' in report.message


def test_signed_output_and_an_agent_that_requires_it(world: World) -> None:
    hub_key = world.key("hub")
    signers = world.tmp / "hub_signers"
    signers.write_text(world.signer_line("hub"))
    hub = world.hub(sign_key=hub_key)
    assert hub.run_once().outcome == "committed"
    signed_output = world.output()
    verdict = read_verdict(world.remote, signers, signed_output)
    assert verdict == "G"

    cluster = InMemoryCluster()
    config = AgentConfig(
        str(world.remote),
        "eu-1",
        world.tmp / "agent",
        require_signed_output=True,
        allowed_signers=signers,
    )
    agent = Agent(config, cluster, clock=lambda: NOW)
    assert agent.run_once().outcome == "pushed"
    assert read_applied_commit(cluster) == signed_output
    live = cluster.get("apps/v1", "Deployment", "web", "frontend")
    assert live is not None and live["spec"]["replicas"] == 2

    # A hub without the key (or anyone running gitfleet with push access) writes the output.
    world.scale(5)
    world.commit("scale to 5", "alice")
    world.push()
    assert world.hub("keyless").run_once().outcome == "committed"
    unsigned = world.output()
    assert git(world.remote, "rev-parse", f"{unsigned}^") == signed_output

    result = agent.run_once()
    assert result.outcome == "refused-unsigned", result
    assert f"commit {unsigned[:12]}: not signed" in result.message
    assert read_applied_commit(cluster) == signed_output
    live = cluster.get("apps/v1", "Deployment", "web", "frontend")
    assert live is not None and live["spec"]["replicas"] == 2
    assert result.report is not None
    condition = next(c for c in result.report.conditions if c.type == "gitfleet.io/DirectoryValid")
    assert condition.reason == "OutputVerificationFailed" and unsigned[:12] in condition.message
    # An agent that does not require signatures applies it (the check is what refuses).
    plain = Agent(
        AgentConfig(str(world.remote), "eu-1", world.tmp / "plain"), cluster, clock=lambda: NOW
    )
    assert plain.run_once().outcome == "pushed"
    live = cluster.get("apps/v1", "Deployment", "web", "frontend")
    assert live is not None and live["spec"]["replicas"] == 5


@dataclass
class Gpg:
    home: Path

    def key(self, email: str) -> str:
        """A fresh ed25519 signing key without passphrase; its fingerprint."""
        run(
            self.home,
            "gpg",
            "--homedir",
            str(self.home),
            "--batch",
            "--passphrase",
            "",
            "--quick-gen-key",
            f"Test <{email}>",
            "ed25519",
            "sign",
            "never",
        )
        listing = run(
            self.home,
            "gpg",
            "--homedir",
            str(self.home),
            "--batch",
            "--with-colons",
            "--list-keys",
            email,
        )
        return next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr"))

    def export(self, fingerprint: str) -> str:
        return run(
            self.home,
            "gpg",
            "--homedir",
            str(self.home),
            "--batch",
            "--armor",
            "--export",
            fingerprint,
        )

    def commit(self, work: Path, message: str, fingerprint: str) -> str:
        env = {**os.environ, "GNUPGHOME": str(self.home)}
        run(
            work,
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            f"user.signingkey={fingerprint}",
            "commit",
            "-q",
            "-a",
            "-S",
            "-m",
            message,
            env=env,
        )
        return git(work, "rev-parse", "HEAD")


@pytest.fixture
def gpg(tmp_path: Path) -> Iterator[Gpg]:
    if shutil.which("gpg") is None:
        pytest.skip("gpg is not installed")
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    yield Gpg(home)
    subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "all"], check=False)


def test_gpg_mode(world: World, gpg: Gpg) -> None:
    carol = gpg.key("carol@example.invalid")
    dave = gpg.key("dave@example.invalid")
    hub = world.hub()
    assert hub.run_once().outcome == "committed"
    (world.work / "governance/keys.asc").write_text(gpg.export(carol))
    fleet = world.work / "fleet.yaml"
    fleet.write_text(
        fleet.read_text().replace("mode: SSH", "mode: GPG").replace(SIGNERS, "governance/keys.asc")
    )
    world.commit("switch to GPG keys", "alice")  # judged by the SSH policy before it
    world.push()
    assert hub.run_once().outcome == "unchanged"
    world.scale(3)
    gpg.commit(world.work, "carol scales", carol)
    world.push()
    assert hub.run_once().outcome == "committed"
    assert world.rendered_replicas() == "3"
    world.scale(4)
    by_dave = gpg.commit(world.work, "dave is not in keys.asc", dave)
    world.push()
    held(hub.run_once(), by_dave, "the signature cannot be checked")
    git(world.work, "reset", "-q", "--hard", "HEAD^")
    world.scale(4)
    by_ssh = world.commit("an SSH signature does not count in GPG mode", "alice")
    world.push()
    held(hub.run_once(), by_ssh, "signed by a key that is not allowed")


def test_cli_flags(world: World) -> None:
    signers = world.tmp / "hub_signers"
    signers.write_text(world.signer_line("hub"))
    done = world.reconcile_once("--sign-key", world.key("hub"))
    assert done.code == 0 and "committed" in done.stdout, done.output
    verdict = read_verdict(world.remote, signers, OUTPUT)
    assert verdict == "G"
    for flags in (["--require-signed-output"], ["--allowed-signers", str(signers)]):
        agent = run_cli(
            world.tmp, "agent", "--repo", world.remote, "--cluster", "eu-1", "--once", *flags
        )
        assert agent.code == 2, agent.output
        assert "--require-signed-output and --allowed-signers go together" in agent.output


def test_plan_shows_what_the_hub_would_hold(world: World) -> None:
    git(world.work, "checkout", "-q", "-b", "pr")
    world.scale(4)
    unsigned = world.commit("an unsigned change")
    text = run_cli(world.work, "plan", "--base", "main", "--head", "pr")
    assert text.code == 0, text.output
    assert f"Signed commits: SourceVerificationFailed: commit {unsigned[:12]}: not signed" in (
        text.stdout
    )
    assert "the hub would hold this change" in text.stdout
    git(world.work, "reset", "-q", "--hard", "main")
    world.scale(4)
    world.commit("a signed change", "alice")
    for fmt, expected in (
        ("text", "Signed commits: 1 new commit(s) verified"),
        ("markdown", "**Signed commits:** 1 new commit(s) verified"),
        ("json", '"signatures": "1 new commit(s) verified"'),
    ):
        done = run_cli(world.work, "plan", "--base", "main", "--head", "pr", "--output", fmt)
        assert done.code == 0 and expected in done.stdout, done.output
