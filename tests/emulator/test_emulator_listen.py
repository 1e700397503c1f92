"""The emulator holds its port from the start but takes connections only once it can answer: a
client that connects while moto loads (seconds on a busy machine, after a restart too) is
refused, and retries at its own pace, instead of waiting unanswered in the backlog up to its
read timeout — a viewer's poller once stayed stale 5 s after the emulator answered that way."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.support.processes import free_port

# In a process of its own: starting the emulator patches moto for the whole process. Right
# after the port is bound (the services check), a connection is tried; again once it started.
_PROBE = textwrap.dedent(
    """
    import socket, sys
    from awsview.emulator import server

    port = int(sys.argv[1])
    checked = server.unknown_services

    def connect():
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            return "accepted"
        except ConnectionRefusedError:
            return "refused"

    def while_starting(trust):
        print("starting:", connect(), flush=True)
        return checked(trust)

    server.unknown_services = while_starting
    emulator = server.start("127.0.0.1", port, sys.argv[2])
    print("started:", connect(), flush=True)
    emulator.start_in_thread()
    emulator.stop()
    """
)


def test_a_connection_while_the_emulator_starts_is_refused_not_left_unanswered(
    starts_processes, tmp_path
):
    port = free_port()
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(port), str(tmp_path / "state")],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["starting: refused", "started: accepted"], done.stdout
