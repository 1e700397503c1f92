"""Gone when its terminal is gone: every command that draws ends, with its children, when its
terminal, its pane, its server or its parent goes (awsview/ui/lifeline.py).

For real: tmux panes killed while `make demo`, the viewer started from a shell and the class view
run in them, and `awsview serve` stopped or killed with a session open. After each, /proc must
hold no process of that tree (zombies waiting for their reaper aside). The product's promise is
a second or two; the tests wait up to GONE_WITHIN_S (before this, such processes stayed for as
long as nobody killed them) and print what they measured.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.helpers import create_function, lambda_workers, processes, wait_for
from tests.support.processes import free_port

ROOT = Path(__file__).resolve().parents[2]
GONE_WITHIN_S = 20.0  # generous on a busy machine; measured: 0.1–1.5 s
STARTED_WITHIN_S = 90.0  # the demo sets up ev04 before a Lambda worker exists

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (make tools)"),
]


class Tmux:
    """A private tmux server; each pane's first process leads its own session."""

    def __init__(self) -> None:
        self.socket = f"awsview-test-{os.getpid()}-{time.monotonic_ns()}"

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout

    def pane(self, command: str) -> int:
        """A new detached 120×40 window running ``command`` in ROOT; the pane's process id."""
        out = self.tmux(
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{pane_pid}",
            "-x",
            "120",
            "-y",
            "40",
            "-c",
            str(ROOT),
            command,
        )
        return int(out.strip())

    def send(self, pane_pid: int, keys: str) -> None:
        self.tmux("send-keys", "-t", self._target(pane_pid), keys, "Enter")

    def kill(self, pane_pid: int) -> None:
        self.tmux("kill-pane", "-t", self._target(pane_pid))

    def screen(self, pane_pid: int) -> str:
        return self.tmux("capture-pane", "-p", "-t", self._target(pane_pid))

    def _target(self, pane_pid: int) -> str:
        for line in self.tmux("list-panes", "-a", "-F", "#{pane_id} #{pane_pid}").splitlines():
            pane_id, pid = line.split()
            if int(pid) == pane_pid:
                return pane_id
        raise AssertionError(f"no pane runs {pane_pid}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)


@pytest.fixture
def tmux(starts_processes):
    server = Tmux()
    yield server
    server.close()


def gone(session: int, what: str) -> float:
    """Wait until no live process of ``session`` is left; how long it took."""
    started = time.monotonic()
    left = processes(session=session)
    while left:
        if time.monotonic() - started > GONE_WITHIN_S:
            for process in left:
                os.kill(process.pid, signal.SIGKILL)
            raise AssertionError(f"{what}: still running {GONE_WITHIN_S:.0f} s later: {left}")
        time.sleep(0.05)
        left = processes(session=session)
    took = time.monotonic() - started
    print(f"{what}: every process gone {took:.2f} s later")
    return took


def awsview_command(*args: str) -> str:
    return shlex.join([sys.executable, "-m", "awsview", *args])


def awsview_process(session: int, command: str = ""):
    """The `python -m awsview <command>` process of a session (not a shell that names it)."""
    start = f"{sys.executable} -m awsview {command}".rstrip()
    return next((p for p in processes(session=session) if p.args.startswith(start)), None)


def test_make_demo_in_a_killed_tmux_pane_leaves_nothing_behind(tmux, tmp_path):
    """make is the pane's first process: it gets the SIGHUP and waits for its child, which gets
    none; the demo must notice its terminal hung up, and its Lambda workers must go with it, and
    so must the emulator's state in its temporary folder."""
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "awsview").exists():
        pytest.skip("the awsview script is not beside this interpreter")
    # The Makefile's own demo target; -o: never reinstall the virtualenv from a test.
    make = f"make -o .venv/.installed demo BIN={shlex.quote(str(bin_dir))}"
    pane = tmux.pane(f"env TMPDIR={shlex.quote(str(tmp_path))} {make}")
    wait_for(lambda: lambda_workers(processes(session=pane)), STARTED_WITHIN_S)
    tree = [p.args for p in processes(session=pane)]  # make, awsview demo, a Lambda worker
    assert any(a.startswith("make") for a in tree) and any("awsview demo" in a for a in tree), tree
    assert [p.name for p in tmp_path.iterdir()] != [], "the demo keeps its state in TMPDIR"
    tmux.kill(pane)
    gone(pane, "make demo, pane killed")
    assert list(tmp_path.iterdir()) == [], "the demo left its state behind"


@pytest.mark.parametrize("shell", ["sh -c", "interactive bash"])
def test_the_viewer_started_from_a_shell_goes_with_its_pane(tmux, emulator, shell):
    command = awsview_command("--lab", "q05", "--endpoint-url", emulator.endpoint_url)
    if shell == "sh -c":  # not the last command, so the shell cannot exec it: it stays the parent
        pane = tmux.pane(f"sh -c {shlex.quote(command + '; sleep 300')}")
    else:
        pane = tmux.pane("bash --norc --noprofile -i")
        tmux.send(pane, command)
    wait_for(lambda: awsview_process(pane), 30)
    wait_for(lambda: "AWS View" in tmux.screen(pane), 60)  # drawn, and polling
    tmux.kill(pane)
    gone(pane, f"awsview from {shell}, pane killed")


def test_the_class_view_goes_with_its_pane(tmux, emulator, tmp_path):
    roster = tmp_path / "class.toml"
    roster.write_text(f'[[learner]]\nname = "Ada"\nendpoint_url = "{emulator.endpoint_url}"\n')
    pane = tmux.pane(f"sh -c {shlex.quote(awsview_command('class', str(roster)) + '; sleep 300')}")
    wait_for(lambda: awsview_process(pane, "class"), 30)
    wait_for(lambda: "AWS View" in tmux.screen(pane), 60)
    tmux.kill(pane)
    gone(pane, "awsview class, pane killed")


def test_replay_goes_with_its_pane(tmux, tmp_path):
    """`awsview replay` draws like the live viewer, so it ends with its terminal like it — also
    when its parent takes the hangup and waits for it, as make does (no SIGHUP reaches it)."""
    from tests.recording.test_recording import _record

    path = tmp_path / "q05.rec"
    _record(path, steps=4)
    # The shell stays while its child runs, then ends: `true` keeps it from exec-ing the viewer.
    script = f"trap 'echo hangup' HUP; {awsview_command('replay', str(path))}; true"
    pane = tmux.pane(f"sh -c {shlex.quote(script)}")
    wait_for(lambda: awsview_process(pane, "replay"), 30)
    wait_for(lambda: "frame 1/" in tmux.screen(pane), 60)  # drawn: its time line is up
    tmux.kill(pane)
    gone(pane, "awsview replay, pane killed")


def test_the_viewer_goes_when_its_parent_dies_though_its_terminal_stays(tmux, emulator):
    """The shell that started it killed outright (SIGKILL: it cannot pass a SIGHUP on) while
    the pane, and so the terminal, stays: the outer shell leads the session, not the killed one."""
    command = awsview_command("--lab", "q05", "--endpoint-url", emulator.endpoint_url)
    inner = f"sh -c {shlex.quote(command + '; sleep 300')}"
    pane = tmux.pane(f"sh -c {shlex.quote(inner + '; sleep 300')}")
    viewer = wait_for(lambda: awsview_process(pane), 30)
    assert viewer.ppid != pane
    # Killed once the viewer is up, as a learner's shell would be: a parent that dies while the
    # interpreter is still starting is gone before the viewer could note which parent it had.
    wait_for(lambda: "AWS View" in tmux.screen(pane), 60)
    os.kill(viewer.ppid, signal.SIGKILL)
    started = time.monotonic()
    wait_for(lambda: not [p for p in processes(session=pane) if p.pid == viewer.pid], GONE_WITHIN_S)
    print(f"awsview whose shell was killed: gone {time.monotonic() - started:.2f} s later")
    assert pane in [p.pid for p in processes(session=pane)]  # the outer shell: the pane stayed
    tmux.kill(pane)
    gone(pane, "the outer shell, pane killed")


# -- awsview serve -------------------------------------------------------------------------


class ServeTree:
    """`awsview serve` in a session of its own, and a websocket client holding one screen open."""

    def __init__(self, endpoint_url: str, port: int, tmp: Path):
        self.port = port
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "awsview",
                "serve",
                "--port",
                str(port),
                "--lab",
                "q05",
                "--endpoint-url",
                endpoint_url,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, "TMPDIR": str(tmp)},  # where it keeps its sessions' rate budget
        )
        self.session = self.process.pid

    async def open_screen(self) -> object:
        import aiohttp

        client = aiohttp.ClientSession()
        url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                ws = await client.ws_connect(
                    f"{url}/ws?width=100&height=30", headers={"Origin": url}
                )
                break
            except aiohttp.ClientConnectionError:
                if time.monotonic() > deadline:
                    await client.close()
                    raise
                await asyncio.sleep(0.2)
        await asyncio.wait_for(ws.receive(), 60)  # the session's first frame: its viewer runs
        self.client, self.ws = client, ws
        return ws

    async def close(self) -> None:
        await self.client.close()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def viewers(self) -> list:
        return [
            p
            for p in processes(session=self.session)
            if p.args.startswith(f"{sys.executable} -m awsview watch --presenter")
        ]


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT", "SIGKILL"])
async def test_stopping_serve_ends_its_open_sessions(starts_processes, emulator, stop, tmp_path):
    """SIGTERM and ctrl+c stop the sessions on the way out, and the server removes what it kept in
    a temporary folder; a killed server cannot, so each session notices its pipes hang up and its
    parent go."""
    tree = ServeTree(emulator.endpoint_url, free_port(), tmp_path)
    try:
        await tree.open_screen()
        assert await asyncio.to_thread(wait_for, tree.viewers, 30)
        assert list(tmp_path.iterdir()), "serve keeps its rate budget in TMPDIR"
        tree.process.send_signal(getattr(signal, stop))
        await asyncio.to_thread(gone, tree.session, f"awsview serve, {stop}, a session open")
        if stop != "SIGKILL":
            assert list(tmp_path.iterdir()) == [], f"serve left its rate budget behind on {stop}"
    finally:
        await tree.close()


async def test_serve_in_a_killed_tmux_pane_ends_its_sessions(tmux, emulator):
    port = free_port()
    command = awsview_command(
        "serve", "--port", str(port), "--lab", "q05", "--endpoint-url", emulator.endpoint_url
    )
    pane = tmux.pane(f"sh -c {shlex.quote(command + '; sleep 300')}")
    tree = ServeTree.__new__(ServeTree)
    tree.port, tree.session = port, pane
    try:
        await tree.open_screen()
        assert await asyncio.to_thread(wait_for, tree.viewers, 30)
        tmux.kill(pane)
        await asyncio.to_thread(gone, pane, "awsview serve, pane killed, a session open")
    finally:
        await tree.client.close()


# -- Lambda workers ------------------------------------------------------------------------


def test_a_busy_lambda_worker_dies_with_its_killed_emulator(spawn_emulator, tmp_path):
    """A handler that sleeps for minutes: the worker must not outlive an emulator killed
    mid-invocation (end-of-file on its stdin only comes between invocations)."""
    import threading

    running = spawn_emulator(tmp_path)
    worker = None
    try:
        lam = running.client("lambda")
        inside = tmp_path / "inside"
        create_function(
            lam,
            "sleepy",
            "import os, time\ndef handler(e, c):\n"
            "    open(os.environ['INSIDE'], 'w').close()\n    time.sleep(300)\n",
            timeout=600,
            env={"INSIDE": str(inside)},
        )
        threading.Thread(target=_invoke_quietly, args=(lam,), daemon=True).start()
        emulator_pid = running.process.pid
        worker = wait_for(
            lambda: next(iter(lambda_workers(processes(), emulator_pid)), None),
            30,
        )
        wait_for(inside.exists, 30)  # the handler runs
        running.process.kill()
        running.process.wait()
        started = time.monotonic()
        wait_for(lambda: not [p for p in processes() if p.pid == worker.pid], GONE_WITHIN_S)
        print(f"busy worker gone {time.monotonic() - started:.2f} s after its emulator was killed")
    finally:
        running.stop()
        if worker is not None and any(p.pid == worker.pid for p in processes()):
            os.kill(worker.pid, signal.SIGKILL)  # failed: leave nothing behind anyway


def _invoke_quietly(lam) -> None:
    try:
        lam.invoke(FunctionName="sleepy", Payload=b"{}")
    except Exception:
        pass  # the emulator is killed under it, on purpose
