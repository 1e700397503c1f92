"""A test run stopped with SIGTERM (a CI job's timeout, `kill`) leaves nothing behind: the
emulator fixture tears down as after Ctrl+C, its Lambda workers end with it, and a child a test
was waiting for (`subprocess.run`) is killed (tests/conftest.py turns SIGTERM into an interrupt).

For real: a small pytest run in a subprocess, with the project's fixtures, stopped mid-test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.helpers import lambda_workers, processes, wait_for

ROOT = Path(__file__).resolve().parents[2]
GONE_WITHIN_S = 20.0  # generous on a busy machine; measured: 2.6 s, 6.0 s with other test runs busy
STARTED_WITHIN_S = 120.0  # an emulator, a Lambda function and its first (cold) invocation

pytestmark = pytest.mark.timeout(240)

INNER = """
import json, os, subprocess, sys

from tests.support.helpers import create_function, invoke


def test_stopped_while_it_waits(emulator):
    lam = emulator.client("lambda")
    create_function(lam, "warm", "def handler(e, c):\\n    return 1\\n")
    assert invoke(lam, "warm", {})[1] == 1  # a warm worker now waits for the next invocation
    with open(os.environ["TEARDOWN_PIDS"], "w") as out:
        json.dump({"emulator": emulator.process.pid}, out)
    pid = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid()))"
    subprocess.run([sys.executable, "-c", pid + "; time.sleep(600)", os.environ["TEARDOWN_CHILD"]])
"""


def test_sigterm_tears_the_emulator_down_with_its_workers_and_the_waited_for_child(
    starts_processes, tmp_path
):
    (tmp_path / "test_inner.py").write_text(INNER)
    pids, child = tmp_path / "pids.json", tmp_path / "child.pid"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "TEARDOWN_PIDS": str(pids),
        "TEARDOWN_CHILD": str(child),
    }
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "tests.conftest",  # the project's fixtures and its SIGTERM handling, as a plugin
            "-p",
            "no:cacheprovider",
            f"--basetemp={tmp_path / 'inner'}",
            "test_inner.py",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    left: list[int] = []
    try:
        wait_for(lambda: child.exists() and child.read_text(), STARTED_WITHIN_S)
        emulator = json.loads(pids.read_text())["emulator"]
        found = processes()
        zygotes = [p.pid for p in found if p.ppid == emulator and "_zygote.py" in p.args]
        workers = [p.pid for p in lambda_workers(found, emulator)]
        left = [emulator, *zygotes, *workers, int(child.read_text())]
        assert workers, "the warm Lambda worker is running"
        run.send_signal(signal.SIGTERM)
        started = time.monotonic()
        output, _ = run.communicate(timeout=60)
        assert run.returncode == pytest.ExitCode.INTERRUPTED, output
        wait_for(lambda: not {p.pid for p in processes()} & set(left), GONE_WITHIN_S)
        took = time.monotonic() - started
        print(f"emulator, its zygote, worker and child gone {took:.2f} s after SIGTERM")
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        for pid in {p.pid for p in processes()} & set(left):
            os.kill(pid, signal.SIGKILL)  # failed: leave nothing behind anyway
