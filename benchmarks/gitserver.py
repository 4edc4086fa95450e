"""A `git daemon` on 127.0.0.1 serving the benchmark's remote, and the CPU its children used.

With a remote given as a path, the hub's `git push` starts the receiving `git receive-pack`
(and its connectivity walk of the whole old tree) as its own child, so the hub's CPU figure
includes what a Git server would spend. `bench_hub.py --git-daemon` serves the remote through
`GitDaemon` instead (git://127.0.0.1, which the hub admits on loopback only) and reports the
server's CPU separately: `cpu_seconds()` is the daemon's own plus its reaped children's user and
system time (`/proc/<pid>/stat`), read once no child of it is left running. Linux only.
Called by `benchmarks/bench_hub.py`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class GitDaemon:
    """`git daemon --enable=receive-pack` serving `base` until `stop()`."""

    def __init__(self, base: Path) -> None:
        exec_path = subprocess.run(
            ["git", "--exec-path"], capture_output=True, text=True, check=True
        ).stdout.strip()
        program = shutil.which("git-daemon", path=exec_path)
        if program is None:
            raise RuntimeError("--git-daemon: git daemon is not installed")
        self.base, self.port = base, free_port()
        # git-daemon itself, not `git daemon` (a parent that would only wait for it)
        argv = [program, "--export-all", "--enable=receive-pack", f"--base-path={base}"]
        argv += ["--listen=127.0.0.1", f"--port={self.port}", "--reuseaddr", str(base)]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._wait_listening()

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("--git-daemon: git daemon did not start") from None
                time.sleep(0.05)

    def url(self, repo: Path) -> str:
        """The git:// URL of `repo` (a directory under the served base)."""
        return f"git://127.0.0.1:{self.port}/{repo.relative_to(self.base).as_posix()}"

    def cpu_seconds(self, settle: float = 5.0) -> float:
        """User + system CPU seconds of the daemon and every child it has reaped, after
        waiting (at most `settle` s) until none of its children is still running."""
        deadline = time.monotonic() + settle
        while self._children() and time.monotonic() < deadline:
            time.sleep(0.005)
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
        return (utime + stime + cutime + cstime) / TICKS

    def _children(self) -> list[int]:
        found = []
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    stat = Path(entry.path, "stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == self.proc.pid:
                    found.append(int(entry.name))
        return found

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
