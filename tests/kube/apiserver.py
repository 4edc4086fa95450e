"""A real etcd and kube-apiserver on 127.0.0.1 for the tests, the way controller-runtime's envtest
runs them: no kubelet, no controller-manager, no scheduler.

`missing_tools()` says which binary is absent (the tests then skip with that one-line reason).
`Etcd.start(dir)` runs etcd with a temp data dir on free ports; `ApiServer.start(dir, etcd,
prefix)` runs kube-apiserver against it (its own `--etcd-prefix`, so two API servers can share
one etcd), with a self-signed serving certificate (`--cert-dir`), a generated bearer token in the
`system:masters` group (`--token-auth-file`, RBAC authorisation), a generated service-account key,
and writes a kubeconfig. Start-up waits are bounded; on a failed start the error carries the end
of the process log (the logs stay in the test's temp dir). `stop()` terminates, then kills.
"""

from __future__ import annotations

import secrets
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

STARTUP_SECONDS = 90.0
TOOLS = ("etcd", "kube-apiserver", "openssl")


def missing_tools() -> str | None:
    """The one-line skip reason when a binary the real API server needs is absent."""
    for tool in TOOLS:
        if shutil.which(tool) is None:
            hint = " (hack/tools.sh builds it)" if tool != "openssl" else ""
            return f"{tool} is not installed{hint}"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _help(program: str) -> str:
    done = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=30)
    return done.stdout + done.stderr


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@dataclass
class Process:
    """A started server process with its log file."""

    proc: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)

    def failed(self, what: str) -> AssertionError:
        self.stop()
        return AssertionError(f"{what}; log {self.log}:\n{_tail(self.log)}")


def _spawn(argv: list[str], log: Path) -> Process:
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    return Process(proc, log)


def _wait(process: Process, what: str, probe: object) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        if process.proc.poll() is not None:
            raise process.failed(f"{what} exited with {process.proc.returncode} while starting")
        if callable(probe) and probe():
            return
        if time.monotonic() > deadline:
            raise process.failed(f"{what} was not ready after {STARTUP_SECONDS:.0f}s")
        time.sleep(0.25)


@dataclass
class Etcd:
    """A single-member etcd."""

    url: str
    process: Process

    @classmethod
    def start(cls, work: Path) -> Etcd:
        client, peer = free_port(), free_port()
        url, peer_url = f"http://127.0.0.1:{client}", f"http://127.0.0.1:{peer}"
        argv = ["etcd", "--name=default", f"--data-dir={work / 'etcd-data'}"]
        argv += [f"--listen-client-urls={url}", f"--advertise-client-urls={url}"]
        argv += [f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}"]
        argv += [f"--initial-cluster=default={peer_url}", "--log-level=warn"]
        if "--unsafe-no-fsync" in _help("etcd"):  # etcd >= 3.5 (Debian's 3.4 has no such flag)
            argv.append("--unsafe-no-fsync")
        process = _spawn(argv, work / "etcd.log")

        def healthy() -> bool:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                    return b'"true"' in response.read()
            except (OSError, urllib.error.URLError):
                return False

        _wait(process, "etcd", healthy)
        return cls(url, process)

    def stop(self) -> None:
        self.process.stop()


@dataclass
class ApiServer:
    """A kube-apiserver, its admin token and the kubeconfig that uses it."""

    url: str
    token: str
    kubeconfig: Path
    process: Process

    @classmethod
    def start(cls, work: Path, etcd: Etcd, prefix: str) -> ApiServer:
        work.mkdir(parents=True, exist_ok=True)
        port, token = free_port(), secrets.token_hex(24)
        (work / "tokens.csv").write_text(f'{token},gitfleet-test,1,"system:masters"\n')
        key, pub = work / "sa.key", work / "sa.pub"
        subprocess.run(
            ["openssl", "genrsa", "-out", str(key), "2048"], check=True, capture_output=True
        )
        subprocess.run(
            ["openssl", "rsa", "-in", str(key), "-pubout", "-out", str(pub)],
            check=True,
            capture_output=True,
        )
        argv = ["kube-apiserver", f"--etcd-servers={etcd.url}", f"--etcd-prefix=/{prefix}"]
        argv += [
            f"--secure-port={port}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
        ]
        argv += [f"--cert-dir={work / 'certs'}", f"--token-auth-file={work / 'tokens.csv'}"]
        argv += ["--authorization-mode=RBAC", "--service-cluster-ip-range=10.0.0.0/24"]
        argv += ["--service-account-issuer=https://kubernetes.default.svc"]
        argv += [f"--service-account-key-file={pub}", f"--service-account-signing-key-file={key}"]
        argv += ["--disable-admission-plugins=ServiceAccount", "--allow-privileged=true"]
        process = _spawn(argv, work / "kube-apiserver.log")
        url = f"https://127.0.0.1:{port}"
        ca = work / "certs" / "apiserver.crt"

        def ready() -> bool:
            if not ca.exists():
                return False
            request = urllib.request.Request(
                f"{url}/readyz", headers={"Authorization": f"Bearer {token}"}
            )
            context = ssl.create_default_context(cafile=str(ca))
            try:
                with urllib.request.urlopen(request, timeout=2, context=context) as response:
                    return bool(response.status == 200)
            except (OSError, urllib.error.URLError, ssl.SSLError):
                return False

        _wait(process, "kube-apiserver", ready)
        kubeconfig = work / "kubeconfig"
        kubeconfig.write_text(_kubeconfig(url, ca, token, prefix))
        return cls(url, token, kubeconfig, process)

    def stop(self) -> None:
        self.process.stop()


def _kubeconfig(url: str, ca: Path, token: str, name: str) -> str:
    return f"""apiVersion: v1
kind: Config
clusters:
- name: {name}
  cluster:
    server: {url}
    certificate-authority: {ca}
users:
- name: admin
  user:
    token: {token}
contexts:
- name: {name}
  context:
    cluster: {name}
    user: admin
current-context: {name}
"""
