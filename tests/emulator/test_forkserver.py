"""The tests' emulators are forked from a server that has imported them once
(tests/support/forkserver.py): each one is still the emulator process the tests know (its own
pid, command line and working directory, killed and restarted on its port like a process of its
own), and none outlives the pytest process that asked for it, however that process ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support import forkserver
from tests.support.emulator import RunningEmulator
from tests.support.helpers import processes, wait_for

ROOT = Path(__file__).resolve().parents[2]
GONE_WITHIN_S = 20.0  # generous on a busy machine


def _alive(pid: int) -> bool:
    return any(p.pid == pid for p in processes())


def test_a_forked_emulator_is_the_emulator_process(spawn_emulator, tmp_path):
    running = spawn_emulator(tmp_path)
    process = running.process
    assert isinstance(process, forkserver.ForkedProcess)
    assert running.client("sqs").list_queues()["ResponseMetadata"]["HTTPStatusCode"] == 200
    (me,) = [p for p in processes() if p.pid == process.pid]
    assert me.ppid == forkserver.server().process.pid  # forked, not started by pytest
    assert f"awsview emulator --port 0 --state-dir {tmp_path}" in me.args
    assert os.readlink(f"/proc/{process.pid}/cwd") == os.getcwd()
    assert process.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=0.1)
    process.terminate()
    assert process.wait(timeout=30) == 0  # SIGTERM: the emulator stops cleanly
    assert process.poll() == 0 and not _alive(process.pid)


def test_kill_9_frees_the_port_at_once(spawn_emulator, tmp_path):
    running = spawn_emulator(tmp_path)
    running.client("dynamodb").list_tables()
    port = running.port
    running.process.kill()
    assert running.process.wait(timeout=30) == -signal.SIGKILL
    again = RunningEmulator(state_dir=tmp_path, port=port).start()  # one try, no retry
    try:
        assert again.port == port
        assert again.client("dynamodb").list_tables()["TableNames"] == []
    finally:
        again.stop()


def test_a_client_that_goes_away_takes_its_emulator(starts_processes, tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = forkserver.server().spawn(RunningEmulator(state_dir=tmp_path).command(), env)
    assert "listening on" in process.stdout.readline()
    pid = process.pid
    process._conn.close()  # as when the pytest process holding it ends
    wait_for(lambda: not _alive(pid), GONE_WITHIN_S)


# A pytest process's stand-in: starts an emulator, says its pid, its server's and the server's
# socket directory, then waits.
_HOLDER = textwrap.dedent(
    """
    import json, sys, tempfile, time
    from pathlib import Path
    from tests.support import forkserver
    from tests.support.emulator import RunningEmulator

    running = RunningEmulator(state_dir=Path(tempfile.mkdtemp(dir=sys.argv[1]))).start()
    server = forkserver.server()
    print(json.dumps([running.process.pid, server.process.pid, str(server.directory)]), flush=True)
    time.sleep(600)
    """
)


def test_kill_9_of_the_pytest_process_leaves_no_emulator(starts_processes, tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), forkserver.LENT: ""},  # a server its own
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        emulator, server, directory = json.loads(holder.stdout.readline())
        assert _alive(emulator) and _alive(server) and Path(directory).is_dir()
    finally:
        holder.kill()
        holder.wait()
    wait_for(lambda: not _alive(emulator) and not _alive(server), GONE_WITHIN_S)
    wait_for(lambda: not Path(directory).exists(), GONE_WITHIN_S)  # its socket too


def test_switched_off_it_starts_a_plain_process(spawn_emulator, tmp_path, monkeypatch):
    monkeypatch.setenv(forkserver.SWITCH, "0")
    running = spawn_emulator(tmp_path)
    assert isinstance(running.process, subprocess.Popen)
    assert running.client("sqs").list_queues()["ResponseMetadata"]["HTTPStatusCode"] == 200
    running.stop()


@pytest.mark.parametrize("forked", [True, False], ids=["forked", "plain"])
def test_a_command_s_output_decodes_as_asked_forked_or_not(awsview, monkeypatch, forked):
    """`awsview(..., encoding=, errors=)` decodes a forked command's output as `subprocess.run`
    decodes a plain one's: the text as asked, and a UnicodeDecodeError raised in the test, not
    lost in a reader thread, where it does not decode."""
    if not forked:
        monkeypatch.setenv(forkserver.SWITCH, "0")
    path = "/nonexistent/café"
    done = awsview("dump", "--from", path, encoding="utf-8", errors="strict")
    assert (done.returncode, path in done.stderr) == (1, True), done
    with pytest.raises(UnicodeDecodeError):
        awsview("dump", "--from", path, encoding="ascii", errors="strict")
