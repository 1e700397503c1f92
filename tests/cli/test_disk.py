"""The viewer's side of a disk that cannot be written: its own state directory (it goes on,
remembering for this session only, and says so once) and `watch --record` (one line, exit 1,
no leftover file that would block the next try). A full disk is RLIMIT_FSIZE on the process."""

from __future__ import annotations

import os
import pty
import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support import processes

# Every test here starts the CLI or an emulator in a process of its own (tests/support/tiers.py).
pytestmark = pytest.mark.process

AWS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def _no_room(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, not kills
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def test_dump_with_an_unwritable_state_home_says_so_once_and_goes_on(emulator, tmp_path):
    (tmp_path / "file").write_text("")
    state_home = tmp_path / "file" / "state"  # a file is in the way: nothing can be made there
    done = processes.awsview(
        "--endpoint-url",
        emulator.endpoint_url,
        "dump",
        timeout=120,
        env={
            **AWS,
            "AWS_DEFAULT_REGION": "us-east-1",
            "XDG_STATE_HOME": str(state_home),
        },
    )
    assert done.returncode == 0, done.stderr
    assert "== Write decisions" in done.stdout
    assert done.stderr.splitlines() == [
        f"awsview: cannot keep the viewer's state in {state_home / 'awsview'} (Not a directory): "
        "write decisions and runs are remembered for this session only"
    ]


def test_watch_record_on_a_full_disk_is_one_line_exit_1_and_no_file_left(tmp_path):
    record = tmp_path / "session.awsrec"
    primary, secondary = pty.openpty()  # the viewer needs a terminal before it records
    try:
        done = subprocess.run(
            [sys.executable, "-m", "awsview", "--endpoint-url", "http://127.0.0.1:9"]
            + ["--record", str(record), "watch"],
            stdin=secondary,
            stdout=secondary,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            env={**os.environ, **AWS, "AWS_DEFAULT_REGION": "us-east-1"},
            preexec_fn=lambda: _no_room(0),
        )
    finally:
        os.close(primary)
        os.close(secondary)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [f"awsview: cannot write {record}: File too large"]
    assert not record.exists()  # the next try is not told "already exists"


STOPS = """
import resource, signal, sys
from pathlib import Path
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
from awsview.aws.session import Target
from awsview.model.snapshot import Health, Snapshot
from awsview.model.state import LabState
from awsview.recording.follow import finish, open_channel, open_recording
from tests.support import sample

path = Path(sys.argv[1])
writer = open_recording(path, "watch")
recorder = open_channel(writer, Target())
resource.setrlimit(resource.RLIMIT_FSIZE, (writer.bytes + int(sys.argv[2]), resource.RLIM_INFINITY))
model = LabState()
recorder.attach(sample.sample("q05")[0], model)
for n in range(200):  # incompressible data: the disk fills within a few frames
    data = __import__("os").urandom(4096).hex()
    model.apply([Snapshot(kind="x", key=f"k{n}", health=Health.OK, data=data, fetched_at=n)])
print(finish(writer, recorder))
"""


def _stopped(path: Path, room: int) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(STOPS), str(path), str(room)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_recording_that_stops_on_a_full_disk_says_what_is_left(tmp_path):
    empty = tmp_path / "empty.awsrec"
    assert _stopped(empty, 0) == (
        f"recording stopped: File too large; nothing was recorded ({empty} removed)"
    )
    assert not empty.exists()
    some = tmp_path / "some.awsrec"
    said = _stopped(some, 64 * 1024)  # the frame that did not fit is torn at the end
    assert said.startswith("recording stopped: ") and said.endswith("frames before that"), said
    done = processes.awsview("dump", "--from", str(some), timeout=60)
    assert done.returncode == 0 and "== " in done.stdout, done.stderr  # what was kept reads
