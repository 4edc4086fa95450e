"""`gitfleet.quickexit`: a quick exit keeps what a normal exit shows (status, flushed output,
atexit handlers, temporary directories, running threads) and skips freeing the heap. Each case
runs a real Python process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = f"""
import atexit, os, sys, tempfile, threading, time
sys.path.insert(0, {str(ROOT)!r})
from gitfleet.quickexit import exit_quickly, run_quickly

class Noisy:
    def __del__(self):
        os.write(2, b"freed\\n")

held = Noisy()
"""


def _python(body: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    code = PRELUDE + textwrap.dedent(body)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered, as usual
    return subprocess.run(
        [sys.executable, "-c", code],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        env=env,
    )


@pytest.mark.parametrize(
    ("code", "status", "stderr"),
    [
        ("None", 0, ""),
        ("0", 0, ""),
        ("3", 3, ""),
        ("True", 1, ""),
        ("256 + 7", 7, ""),
        ("-1", 255, ""),
        ("'no fleet here'", 1, "no fleet here\n"),
    ],
)
def test_status_as_systemexit_gives_it(code: str, status: int, stderr: str) -> None:
    quick = _python(f"exit_quickly({code})")
    normal = _python(f"sys.exit({code})")
    assert quick.returncode == normal.returncode == status
    assert quick.stderr == stderr
    assert normal.stderr == stderr + "freed\n"  # a normal exit frees the heap; the quick one not


def test_buffered_output_and_atexit_handlers_survive(tmp_path: Path) -> None:
    marker = tmp_path / "atexit-ran"
    done = _python(
        f"""
        atexit.register(lambda: open({str(marker)!r}, "w").write("yes"))
        scratch = tempfile.TemporaryDirectory()
        print(scratch.name)
        for n in range(20000):
            print(n)  # block-buffered into a pipe: nothing flushed yet
        sys.stderr.write("partial line without newline")
        exit_quickly(0)
        """
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 0
    assert lines[1:] == [str(n) for n in range(20000)]
    assert not Path(lines[0]).exists()  # the TemporaryDirectory finalizer ran
    assert marker.read_text() == "yes"
    assert done.stderr == "partial line without newline"


def test_a_running_thread_makes_it_a_normal_exit(tmp_path: Path) -> None:
    marker = tmp_path / "thread-finished"
    done = _python(
        f"""
        def late():
            time.sleep(0.3)
            open({str(marker)!r}, "w").write("done")
        threading.Thread(target=late).start()
        exit_quickly(4)
        """
    )
    assert done.returncode == 4
    assert marker.read_text() == "done"  # joined, as the interpreter's exit does
    assert done.stderr == "freed\n"


def test_run_quickly_exits_with_the_commands_status_and_keeps_its_frames() -> None:
    done = _python(
        """
        def command():
            local = Noisy()
            print("ran")
            sys.exit(2)
        run_quickly(command)
        """
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "ran\n", "")
    returned = _python("run_quickly(lambda: print('ran'))")
    assert (returned.returncode, returned.stdout, returned.stderr) == (0, "ran\n", "")


def test_stdout_that_cannot_be_flushed_is_status_120() -> None:
    done = _python(
        """
        print("into a closed pipe")
        r, w = os.pipe()
        os.close(r)
        os.dup2(w, 1)
        exit_quickly(0)
        """
    )
    assert done.returncode == 120
