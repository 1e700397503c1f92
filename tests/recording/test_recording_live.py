"""Recording a lab on the real emulator: a recorder killed with kill -9 mid-lab leaves a file that
replays exactly what was shown up to its last complete frame; `awsview watch --record` in a
terminal, killed the same way; a class recording, one channel per learner.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest

from awsview.core.printout import as_text
from awsview.labs.player import LabPlayer
from awsview.model.state import LabState
from awsview.recording.file import DECISION, Recording
from awsview.recording.moments import target_of
from tests.support.emulator import RunningEmulator
from tests.support.helpers import wait_for

ROOT = Path(__file__).resolve().parents[2]


def _shown(path: Path) -> list[dict]:
    """The probe's log, complete lines only (a kill may cut the last one)."""
    entries = []
    for line in path.read_text().splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            break
    return entries


@pytest.mark.slow
def test_a_recording_killed_mid_lab_replays_what_was_shown(
    starts_processes, spawn_emulator, tmp_path
):
    running = spawn_emulator(tmp_path / "emulator")
    recording, shown = tmp_path / "q05.rec", tmp_path / "shown.jsonl"
    probe = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.support.record_probe",
            running.endpoint_url,
            "q05",
            str(recording),
            str(shown),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert probe.stdout.readline().strip() == "recording", probe.stderr.read()
        player = LabPlayer("q05", endpoint_url=running.endpoint_url, log=lambda line: None)
        player.setup()
        player.play(until="deploy")
        wait_for(
            lambda: any("Accepted" in e["text"] for e in _shown(shown)), timeout=90
        )  # a decision shown
        # Kill it while the repeats are being played and polled: frames are being written.
        before = len(_shown(shown))
        repeats = threading.Thread(target=lambda: player.play(only="repeats"), daemon=True)
        repeats.start()
        wait_for(lambda: len(_shown(shown)) >= before + 3, timeout=60, interval=0.01)
        os.kill(probe.pid, signal.SIGKILL)
        probe.wait(timeout=10)
        repeats.join(timeout=120)
    finally:
        if probe.poll() is None:
            probe.kill()
        running.stop()

    entries = _shown(shown)
    replay = Recording(recording)
    player = replay.player(0)
    complete = player.last + 1
    # The probe logs a record after writing it: the kill may fall in between, never the reverse.
    assert complete - 1 <= len(entries) <= complete, (complete, len(entries), replay.damage)
    assert len(entries) >= 10 and [e["record"] for e in entries] == list(range(1, len(entries) + 1))
    target = target_of(player.info)
    for index, entry in enumerate(entries):  # every frame, as it was shown then
        state = player.state(index)
        assert state.time == entry["time"]
        account = state.meta.get("account") or "?"
        assert (
            as_text(state.profile, LabState(snapshots=state.snapshots), target, account, state.time)
            == entry["text"]
        ), f"record {index + 1}"
    assert any(m.flags & DECISION for m in player.marks)
    # The command line says the same of the end, and where it was recorded.
    done = starts_processes.awsview("dump", "--from", str(recording), timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    header, _, text = done.stdout.split("\n", 2)
    assert f"· {running.endpoint_url} · account 123456789012 · region us-east-1 ·" in header
    end = player.state(player.last)
    assert text == as_text(
        end.profile, LabState(snapshots=end.snapshots), target, "123456789012", end.time
    )
    if len(entries) == complete:
        assert text == entries[-1]["text"]


def _in_a_terminal(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    """``awsview ARGS`` with a 120×40 pseudo-terminal as its screen and keyboard."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "awsview", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**env, "TERM": "xterm-256color"},
        start_new_session=True,
        cwd=ROOT,
    )
    os.close(slave)

    def drain() -> None:  # a terminal nobody reads would block the viewer
        while True:
            try:
                if not os.read(master, 65536):
                    break
            except OSError:
                break
        os.close(master)

    threading.Thread(target=drain, daemon=True).start()
    return process


def test_watch_record_in_a_terminal_then_kill_9(
    starts_processes, emulator: RunningEmulator, tmp_path
):
    LabPlayer("q05", endpoint_url=emulator.endpoint_url, log=lambda line: None).setup()
    path = tmp_path / "watch.rec"
    viewer = _in_a_terminal(
        ["watch", "--lab", "q05", "--endpoint-url", emulator.endpoint_url, "--record", str(path)],
        emulator.env,
    )
    try:

        def functions_recorded() -> bool:
            try:
                state = Recording(path).player(0)
                return "labex-q05-worker" in str(state.state(state.last).snapshots.get("functions"))
            except Exception:
                return False

        wait_for(functions_recorded, timeout=60, interval=0.2)
    finally:
        viewer.kill()
        viewer.wait(timeout=10)
    done = starts_processes.awsview("dump", "--from", str(path), timeout=60)
    assert done.returncode == 0, done.stderr
    assert (
        f"{emulator.endpoint_url} · account 123456789012 · region us-east-1"
        in done.stdout.splitlines()[0]
    )
    assert "labex-q05-worker" in done.stdout and "== Lambda functions" in done.stdout
    header = Recording(path).header
    assert header["command"] == "watch" and header["format"] == "awsview recording"


async def test_a_class_recording_keeps_each_learner(emulator: RunningEmulator, tmp_path):
    from awsview.classroom.monitor import ClassMonitor, Learner
    from awsview.cli.dump import from_recording as dump_from
    from awsview.recording.follow import ClassRecorder, open_recording

    LabPlayer("q05", endpoint_url=emulator.endpoint_url, log=lambda line: None).setup()
    path = tmp_path / "class.rec"
    recording = ClassRecorder(open_recording(path, "class"))
    learners = (
        Learner("Ada", emulator.endpoint_url, "q05"),
        Learner("Bob", "http://127.0.0.1:9", "q05"),
    )
    monitor = ClassMonitor(learners, on_update=recording.status, on_model=recording.model)
    try:
        for _ in range(3):
            await monitor.round()
    finally:
        await monitor.close()
        recording.close()
    replay = Recording(path)
    assert sorted(info["name"] for info in replay.channels.values()) == ["Ada", "Bob"]
    out = tmp_path / "ada.txt"
    with out.open("w") as stream:
        assert dump_from(path, None, "Ada", False, out=stream) == 0
    text = out.read_text()
    assert "learner Ada" in text and "account 123456789012" in text and "labex-q05-worker" in text
    with out.open("w") as stream:
        assert dump_from(path, None, "Bob", False, out=stream) == 0
    assert "connection refused" in out.read_text() or "error" in out.read_text()
    from awsview.recording.file import LearnerError

    with pytest.raises(LearnerError) as refused:  # said by the command line, exit status 2
        dump_from(path, None, "Eve", False, out=out.open("w"))
    assert refused.value.exit_status == 2


def test_serve_records_once_whatever_the_tabs(
    starts_processes, emulator: RunningEmulator, tmp_path
):
    port = starts_processes.free_port()
    path = tmp_path / "serve.rec"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "awsview",
            "serve",
            "--lab",
            "q05",
            "--endpoint-url",
            emulator.endpoint_url,
            "--port",
            str(port),
            "--record",
            str(path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=emulator.env,
        cwd=ROOT,
    )
    try:
        assert "recording to" in server.stdout.readline()

        def recorded() -> bool:
            try:
                player = Recording(path).player(0)
                return player.state(player.last).meta.get("account") == "123456789012"
            except Exception:
                return False

        wait_for(recorded, timeout=60, interval=0.2)
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert Recording(path).header["command"] == "serve"
    again = starts_processes.awsview(
        "serve", "--port", str(port), "--record", str(path), timeout=60
    )
    assert again.returncode == 2 and "already exists" in again.stderr
