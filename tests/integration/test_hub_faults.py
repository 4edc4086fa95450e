"""Fault tests for the hub loop against real Git: a reconciler killed mid-pass and restarted, a
`git daemon` remote that goes down and comes back, a force-pushed source branch, no-op passes,
and the audit commands (`history`, `status`) over the result.

Remotes are bare repositories in temp dirs (with `core.logAllRefUpdates=always`, so the remote's
reflog proves the output branch only ever moved forward) or a `git daemon` on 127.0.0.1. The
helpers here (`World`, `Daemon`, the output-chain checks) are shared with `test_hub_race.py`.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest

from reconciler.loop import Hub, HubConfig
from tests.helpers.fleetfiles import format_cluster, format_placement, write_tree
from tests.helpers.gitrepo import git, init_bare, init_work
from tests.helpers.hubs import Clock
from tests.integration.fleet_helpers import ROOT, run_cli

OUTPUT = "gitfleet/rendered"
FLEET = """apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: faults
spec:
  clusterEligibility: AssumeJoined
"""
POLICY = """  policy:
    placementType: PickAll
    affinity:
      clusterAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          clusterSelectorTerms:
            - labelSelector: {{matchLabels: {{env: {env}}}}}
  strategy:
    rollingUpdate: {{maxUnavailable: "100%"}}  # these tests are about the hub, not rollouts
"""
NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}\n"
CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  namespace: {ns}
data:
  rev: "{rev}"
"""
CONFIGMAPS = 5
REORDERED = """data:
  rev: "0"
metadata:
  namespace: web
  name: cm0
kind: ConfigMap
apiVersion: v1
"""


def format_placement_on(name: str, env: str) -> str:
    """Placement `name` of Namespace `name` on every cluster labelled `env`, all at once."""
    return format_placement(name, spec=POLICY.format(env=env))


def fleet_files() -> dict[str, str]:
    """Three clusters; `web` goes to the two prod clusters, `tools` to the dev one."""
    files = {"fleet.yaml": FLEET, "README.md": "# fleet\n"}
    for name, env in (("east", "prod"), ("west", "prod"), ("lab", "dev")):
        files[f"clusters/{name}.yaml"] = format_cluster(name, env)
    for name, env in (("web", "prod"), ("tools", "dev")):
        files[f"placements/{name}.yaml"] = format_placement_on(name, env)
        files[f"resources/{name}/namespace.yaml"] = NAMESPACE.format(ns=name)
    for i in range(CONFIGMAPS):
        files[f"resources/web/cm{i}.yaml"] = CONFIGMAP.format(name=f"cm{i}", ns="web", rev=0)
    files["resources/tools/cm.yaml"] = CONFIGMAP.format(name="cm", ns="tools", rev=0)
    return files


@dataclass
class World:
    """A bare remote at `remote`, a working clone `work` that plays the fleet's authors."""

    tmp: Path
    remote: Path
    work: Path
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def create(cls, tmp: Path, remote: Path | None = None) -> World:
        remote = init_bare(remote or tmp / "remote.git")
        git(remote, "config", "core.logAllRefUpdates", "always")
        world = cls(tmp, remote, init_work(tmp / "work"))
        world.commit(dict(fleet_files()), "fleet")
        return world

    def commit(self, files: dict[str, str | None], message: str) -> str:
        """Write (None: delete) `files`, commit and push main; return the new source commit."""
        with self.lock:
            write_tree(self.work, files)
            git(self.work, "add", "-A")
            git(self.work, "commit", "-qm", message)
            git(self.work, "push", "-q", str(self.remote), "HEAD:refs/heads/main")
            return git(self.work, "rev-parse", "HEAD")

    def edit(self, n: int) -> str:
        """Source commit `n`: changes exactly one ConfigMap of `web`."""
        name = f"cm{n % CONFIGMAPS}"
        text = CONFIGMAP.format(name=name, ns="web", rev=n)
        return self.commit({f"resources/web/{name}.yaml": text}, f"edit {n}")

    def hub(self, name: str, clock: Clock, **config: bool) -> Hub:
        return Hub(HubConfig(str(self.remote), self.tmp / name, **config), clock=clock)


def rev(repo: Path, ref: str) -> str | None:
    done = subprocess.run(
        ["git", "--git-dir", str(repo), "rev-parse", "--verify", "--quiet", ref],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() or None


def output_chain(repo: Path) -> list[tuple[str, str, int, str]]:
    """The output branch's first-parent chain, oldest first: (commit, tree, parents, source)."""
    trailer = "%(trailers:key=Gitfleet-Source,valueonly,separator=%x2C)"
    out = git(
        repo, "log", "--first-parent", "--reverse", f"--format=%H %T %P|{trailer}%x1e", OUTPUT
    )
    rows = []
    for record in filter(None, (r.strip() for r in out.split("\x1e"))):
        head, _, source = record.partition("|")
        commit, tree, *parents = head.split()
        rows.append((commit, tree, len(parents), source.strip()))
    return rows


def check_output_history(
    remote: Path, *, linear_source: bool = True
) -> list[tuple[str, str, int, str]]:
    """Assert the invariants of the output branch; return its chain (oldest first)."""
    rows = output_chain(remote)
    assert rows, "no output commit"
    assert rows[0][2] == 0 and all(p == 1 for _, _, p, _ in rows[1:]), "output is not linear"
    trees = [tree for _, tree, _, _ in rows]
    duplicates = [rows[i][0] for i in range(1, len(rows)) if trees[i] == trees[i - 1]]
    assert not duplicates, f"no-op output commits: {duplicates}"
    sources = [source for *_, source in rows]
    assert all(len(s) == 40 for s in sources), f"missing Gitfleet-Source trailer: {sources}"
    for older, newer in itertools.pairwise(sources):
        assert not linear_source or is_ancestor(remote, older, newer), (
            f"source went backwards: {older} -> {newer}"
        )
    check_reflog_forward(remote)
    return rows


def is_ancestor(repo: Path, a: str, b: str) -> bool:
    done = subprocess.run(["git", "--git-dir", str(repo), "merge-base", "--is-ancestor", a, b])
    return done.returncode == 0


def check_reflog_forward(remote: Path) -> None:
    """Every update of the output branch the remote recorded was a fast-forward."""
    log = (remote / "logs" / "refs" / "heads" / OUTPUT).read_text().splitlines()
    assert log, "the remote recorded no update of the output branch"
    for line in log:
        old, new = line.split()[:2]
        if set(old) != {"0"}:
            assert is_ancestor(remote, old, new), f"output went backwards: {old} -> {new}"


def fsck(repo: Path) -> None:
    done = subprocess.run(
        ["git", "--git-dir", str(repo), "fsck", "--strict", "--no-dangling"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def manifests(repo: Path, commit: str) -> dict[str, str]:
    """Blob ids of the per-cluster placement files (not index/state/status) at `commit`."""
    out = git(repo, "ls-tree", "-r", commit, "--", "clusters/")
    files = {}
    for line in out.splitlines():
        meta, _, path = line.partition("\t")
        if path.count("/") >= 3:
            files[path] = meta.split()[2]
    return files


def fresh_render(tmp: Path, source_repo: Path, source: str, clock: Clock) -> tuple[Path, str]:
    """Render `source` with a new Hub into a new remote; return (remote, output commit)."""
    remote = init_bare(tmp / "fresh.git")
    git(source_repo, "push", "-q", str(remote), f"{source}:refs/heads/main")
    report = Hub(HubConfig(str(remote), tmp / "fresh-cache"), clock=clock).run_once()
    assert report.outcome == "committed", report
    assert report.output is not None
    return remote, report.output


# --------------------------------------------------------------------------- git daemon


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Daemon:
    """A `git daemon` on 127.0.0.1 serving `base` (pushes allowed) that can be stopped and
    started again on the same port."""

    def __init__(self, base: Path) -> None:
        self.base, self.port = base, free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def start(self) -> None:
        argv = ["git", "daemon", "--export-all", "--enable=receive-pack", "--reuseaddr"]
        argv += [f"--base-path={self.base}", "--listen=127.0.0.1", f"--port={self.port}"]
        self.proc = subprocess.Popen([*argv, str(self.base)], stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    pytest.skip("git daemon did not start listening")
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    exec_path = subprocess.run(["git", "--exec-path"], capture_output=True, text=True).stdout
    if shutil.which("git-daemon", path=exec_path.strip()) is None:
        pytest.skip("git daemon is not installed")
    base = tmp_path / "served"
    base.mkdir()
    served = Daemon(base)
    served.start()
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World.create(tmp_path)


# --------------------------------------------------------------------------- no-op passes


@pytest.mark.parametrize(
    ("case", "files"),
    [
        ("README edit", {"README.md": "# fleet\n\nNow with docs.\n"}),
        (
            "comment in a resource",
            {
                "resources/web/cm0.yaml": "# owned by web\n"
                + CONFIGMAP.format(name="cm0", ns="web", rev=0)
            },
        ),
        ("keys reordered", {"resources/web/cm0.yaml": REORDERED}),
        ("new file nobody selects", {"notes/todo.txt": "nothing rendered\n"}),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_noop_passes_move_nothing(world: World, case: str, files: dict[str, str | None]) -> None:
    clock = Clock()
    hub = world.hub("hub", clock)
    assert hub.run_once().outcome == "committed"
    tip = rev(world.remote, OUTPUT)
    assert hub.run_once().outcome == "skipped"
    assert world.hub("restarted", clock).run_once().outcome == "skipped"  # from the trailers
    world.commit(files, case)
    clock.now += timedelta(hours=1)  # a later clock alone must not produce a commit
    report = hub.run_once()
    assert (report.outcome, report.output, report.errors) == ("unchanged", tip, ()), report
    assert hub.run_once().outcome == "skipped"
    assert world.hub("third", clock).run_once().outcome == "unchanged"
    assert rev(world.remote, OUTPUT) == tip
    assert len(check_output_history(world.remote)) == 1


# --------------------------------------------------------------------------- force-pushed source


def rewrite_unrelated(work: Path) -> None:
    git(work, "checkout", "-q", "--orphan", "rewritten")
    (work / "resources/web/cm0.yaml").write_text(CONFIGMAP.format(name="cm0", ns="web", rev=99))
    git(work, "add", "-A")
    git(work, "commit", "-qm", "a new history")


def rewrite_amended(work: Path) -> None:
    (work / "resources/web/cm0.yaml").write_text(CONFIGMAP.format(name="cm0", ns="web", rev=99))
    git(work, "commit", "-q", "-a", "--amend", "-m", "edit 1, amended")


@pytest.mark.parametrize("rewrite", [rewrite_unrelated, rewrite_amended])
def test_force_pushed_source_stops_until_accepted(world: World, rewrite: object) -> None:
    clock = Clock()
    hub = world.hub("hub", clock)
    world.edit(1)
    assert hub.run_once().outcome == "committed"
    tip = rev(world.remote, OUTPUT)
    assert callable(rewrite)
    rewrite(world.work)
    git(world.work, "push", "-q", "--force", str(world.remote), "HEAD:refs/heads/main")
    new_source = git(world.work, "rev-parse", "HEAD")
    for attempt in (hub, hub, world.hub("restarted", clock)):
        report = attempt.run_once()
        assert report.outcome == "source-rewritten", report
        assert "--accept-source-rewrite" in report.message and new_source[:12] in report.message
    # The refusal is recorded once, on top of the last render: status/hub.yaml and nothing else.
    record = rev(world.remote, OUTPUT)
    assert record is not None and rev(world.remote, f"{OUTPUT}^") == tip
    changed = git(world.remote, "diff", "--name-status", tip, record).splitlines()
    assert changed == ["A\tstatus/hub.yaml"]
    hub_doc = git(world.remote, "show", f"{OUTPUT}:status/hub.yaml")
    assert "reason: SourceRewritten" in hub_doc and f"refusedSource: {new_source}" in hub_doc
    cli = run_cli(
        world.tmp, "reconcile", "--repo", world.remote, "--once", "--cache-dir", world.tmp / "cli"
    )
    assert cli.code == 1 and "source-rewritten" in cli.stdout, cli.output
    assert rev(world.remote, OUTPUT) == record

    accepted = world.hub("hub", clock, accept_source_rewrite=True).run_once()
    assert accepted.outcome == "committed", accepted
    rows = check_output_history(world.remote, linear_source=False)
    assert [r[0] for r in rows[-3:]] == [tip, record, accepted.output]
    assert "status/hub.yaml" not in git(world.remote, "ls-tree", "-r", "--name-only", OUTPUT)
    assert rows[-1][3] == new_source
    rendered = git(world.remote, "show", f"{OUTPUT}:clusters/east/web/configmap_web_cm0.yaml")
    assert "rev: '99'" in rendered or 'rev: "99"' in rendered
    assert hub.run_once().outcome == "skipped"  # the operator's acceptance is on record now


# --------------------------------------------------------------------------- remote down, then up


def test_remote_down_then_up(daemon: Daemon, tmp_path: Path) -> None:
    world = World.create(tmp_path, daemon.base / "fleet.git")
    clock = Clock()
    hub = Hub(HubConfig(daemon.url("fleet.git"), tmp_path / "hub"), clock=clock)
    assert hub.run_once().outcome == "committed"
    tip = rev(world.remote, OUTPUT)
    daemon.stop()
    source = world.edit(1)  # authors keep pushing (to the disk) while the service is down
    down_at = clock.now = clock.now + timedelta(minutes=1)
    for _ in range(3):
        report = hub.run_once()
        assert report.outcome == "source-unavailable", report
        assert f"SourceUnavailable since {down_at.isoformat()}" in report.message
        assert hub.unavailable_since == down_at
        clock.now += timedelta(minutes=1)
    assert rev(world.remote, OUTPUT) == tip
    daemon.start()
    report = hub.run_once()
    assert (report.outcome, report.source) == ("committed", source), report
    assert hub.unavailable_since is None
    rows = check_output_history(world.remote)
    assert [r[0] for r in rows] == [tip, report.output]
    assert hub.run_once().outcome == "skipped"


# --------------------------------------------------------------------------- killed mid-pass


def start_reconciler(url: str, cache: Path, log: Path) -> subprocess.Popen[bytes]:
    """`gitfleet reconcile` polling every 0.2 s, in its own process group (git children too)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    argv = [sys.executable, "-m", "gitfleet", "reconcile", "--repo", url, "--interval", "0.2s"]
    with log.open("ab") as out:
        return subprocess.Popen(
            [*argv, "--cache-dir", str(cache)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_for(predicate: object, what: str, timeout: float = 30.0) -> None:
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def output_count(remote: Path) -> int:
    if rev(remote, OUTPUT) is None:
        return 0
    return int(git(remote, "rev-list", "--count", OUTPUT))


def recorded_source(remote: Path) -> str | None:
    if rev(remote, OUTPUT) is None:
        return None
    return git(remote, "log", "-1", "--format=%(trailers:key=Gitfleet-Source,valueonly)", OUTPUT)


def test_killed_reconciler_restarts_and_converges(daemon: Daemon, tmp_path: Path) -> None:
    world = World.create(tmp_path, daemon.base / "fleet.git")
    url, cache, log = daemon.url("fleet.git"), tmp_path / "cache", tmp_path / "reconcile.log"
    edits = iter(range(1, 1000))
    proc = start_reconciler(url, cache, log)
    try:
        wait_for(lambda: output_count(world.remote) >= 1, "the first output commit")
        # Kill while a pass for a fresh source commit is under way, at different moments.
        for delay in (0.1, 0.35, 0.7):
            before = output_count(world.remote)
            world.edit(next(edits))
            time.sleep(delay)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            world.edit(next(edits))  # the source keeps moving while nobody reconciles
            proc = start_reconciler(url, cache, log)
            wait_for(lambda b=before: output_count(world.remote) > b, "a pass after restart")
        final = world.edit(next(edits))
        wait_for(lambda: recorded_source(world.remote) == final, "convergence on the final source")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text
    fsck(world.remote)
    for mirror in (cache / "mirrors").iterdir():
        fsck(mirror)
    rows = check_output_history(world.remote)
    assert rows[-1][3] == final
    fresh, commit = fresh_render(tmp_path, world.work, final, Clock())
    assert manifests(world.remote, OUTPUT) == manifests(fresh, commit)


# --------------------------------------------------------------------------- history and status


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, dict[str, str]]:
    """Three output commits: initial, a `web` edit (east, west), a `tools` edit (lab); then a
    README edit that commits nothing. Returns the world and the output commits by name."""
    world, clock = World.create(tmp_path_factory.mktemp("audit")), Clock()
    hub = world.hub("hub", clock)
    commits = {"initial": hub.run_once().output or ""}
    world.edit(1)
    commits["web"] = hub.run_once().output or ""
    world.commit({"resources/tools/cm.yaml": CONFIGMAP.format(name="cm", ns="tools", rev=1)}, "t")
    commits["tools"] = hub.run_once().output or ""
    world.commit({"README.md": "# fleet\n\nDocs only.\n"}, "docs")
    assert hub.run_once().outcome == "unchanged"
    assert all(commits.values()) and len(set(commits.values())) == 3
    return world, commits


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), ["tools", "web", "initial"]),
        (("--placement", "web"), ["web", "initial"]),
        (("--placement", "tools"), ["tools", "initial"]),
        (("--placement", "nope"), []),
        (("--cluster", "east"), ["web", "initial"]),
        (("--cluster", "lab"), ["tools", "initial"]),
        (("--placement", "web", "--cluster", "lab"), ["initial"]),
        (("--max", "1"), ["tools"]),
    ],
)
def test_history_lists_exactly_the_commits(
    audited: tuple[World, dict[str, str]], args: tuple[str, ...], expected: list[str]
) -> None:
    world, commits = audited
    cache = world.tmp / "cli-cache"
    result = run_cli(world.tmp, "history", "--repo", world.remote, "--cache-dir", cache, *args)
    assert result.code == 0, result.output
    heads = [line.split()[0] for line in result.stdout.splitlines() if not line.startswith(" ")]
    if not expected:
        assert heads == ["no"] and "no reconciler commits found" in result.stdout
        return
    assert heads == [commits[name][:12] for name in expected], result.stdout
    assert result.stdout.count("by Dev <dev@example.com>") == len(expected)


@pytest.mark.parametrize(
    ("args", "code", "needles"),
    [
        (
            ("placement", "web"),
            0,
            ["Name:                    web", "Placement Type:          PickAll", "east", "west"],
        ),
        (("placement", "tools"), 0, ["Name:                    tools", "lab"]),
        (("cluster", "lab"), 0, ["Name:        lab", "env=dev", "tools"]),
        (("placement", "nope"), 1, ["placement nope has no status in the output"]),
        (("cluster", "nowhere"), 1, ["cluster nowhere has no status in the output"]),
    ],
)
def test_status_describes_from_the_remote(
    audited: tuple[World, dict[str, str]], args: tuple[str, ...], code: int, needles: list[str]
) -> None:
    world, _ = audited
    cache = world.tmp / "cli-cache"
    result = run_cli(world.tmp, "status", *args, "--repo", world.remote, "--cache-dir", cache)
    assert result.code == code, result.output
    missing = [n for n in needles if n not in result.output]
    assert not missing, result.output
