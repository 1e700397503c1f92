"""Emulators and command lines for the tests, forked from a server that has imported them once.

Each `awsview emulator` a test starts would spend most of its start, and its first call to each
service, importing moto, werkzeug, boto and the emulator's own modules. One server per pytest
process imports all of that once (started on the first emulator, gone with that process) and
starts each emulator as a forked child of itself, with the caller's argv, environment, working
directory and standard file descriptors: the child then runs ``awsview.cli.main.main`` as
``python -m awsview`` would. This module is the pytest side; the server is
tests/support/forkserver_main.py. The same pattern as the AWS CLI's fork server
(awsview/labs/fastcli.py), kept apart so the tests depend on no private name of it.

Protocol, one connection per emulator: the client sends a 4-byte length and a JSON request
({"argv", "env", "cwd"}) with fds 0, 1, 2 attached; the server answers ``<pid>\\n`` once the
child is forked, then ``<status>\\n`` (as Popen's returncode: negative for a signal) once it has
reaped it. A client that goes away (its connection closed) has its emulator killed; the server
going away (its lifeline pipe closed: the pytest process ended, even by kill -9) kills them all.

``AWSVIEW_TEST_FORKSERVER=0`` starts every emulator with a plain ``subprocess.Popen``.
"""

from __future__ import annotations

import atexit
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from awsview.labs.fastcli import encode_request

SWITCH = "AWSVIEW_TEST_FORKSERVER"
ROOT = Path(__file__).resolve().parents[2]
# The caller's settings never reach the server's imports (moto reads some at import time).
PRIVATE = ("AWS_", "MOTO_", "AWSVIEW_", "TEST_SERVER_MODE", "TEST_PROXY_MODE")
TITLE_ROOM = 4096  # argv room the server keeps so each child can show its own command line


def usable() -> bool:
    return os.environ.get(SWITCH) != "0" and hasattr(os, "pidfd_open") and sys.platform == "linux"


class ForkedProcess:
    """A forked emulator as the tests use a ``subprocess.Popen``: its real ``pid``, text
    ``stdout``/``stderr`` pipes, ``poll``, ``wait``, ``kill``, ``terminate``, ``send_signal``,
    ``returncode``."""

    def __init__(self, conn: socket.socket, args: list[str], stdout: int, stderr: int) -> None:
        self.args = args
        self.returncode: int | None = None
        self.stdin = None
        self._lock = threading.Lock()
        self._conn = conn
        self._answer = b""
        pid = self._line(timeout=120)  # the server's imports, on a busy machine
        if pid is None:
            raise OSError("the fork server went away")
        self.pid = int(pid)
        self._pidfd = os.pidfd_open(self.pid)
        self.stdout = open(stdout, encoding=None)  # text, as Popen(text=True)
        self.stderr = open(stderr, encoding=None)

    def __del__(self) -> None:
        if self.returncode is None and getattr(self, "_pidfd", -1) >= 0:
            os.close(self._pidfd)  # its connection closes too: the server kills the emulator

    def _line(self, timeout: float | None) -> str | None:
        """The server's next line; None if it went away first."""
        self._conn.settimeout(timeout)
        while b"\n" not in self._answer:
            chunk = self._conn.recv(64)
            if not chunk:
                return None
            self._answer += chunk
        line, self._answer = self._answer.split(b"\n", 1)
        return line.decode()

    def poll(self) -> int | None:
        if self.returncode is None and self._lock.acquire(blocking=False):
            try:  # another thread waiting for it already will set it
                self._reap(0)
            except subprocess.TimeoutExpired:
                pass
            finally:
                self._lock.release()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._lock.acquire(timeout=-1 if timeout is None else timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        try:
            return self._reap(timeout)
        finally:
            self._lock.release()

    def _reap(self, timeout: float | None) -> int:
        if self.returncode is None:
            try:
                line = self._line(timeout)
            except (TimeoutError, BlockingIOError):  # not ended yet
                raise subprocess.TimeoutExpired(self.args, timeout or 0) from None
            if line is None:  # the server went away without its status: make sure it is gone
                try:
                    signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.returncode = -signal.SIGKILL
            else:
                self.returncode = int(line)
            self._conn.close()
            os.close(self._pidfd)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            try:
                signal.pidfd_send_signal(self._pidfd, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Server:
    """The fork server of this pytest process, in a process of its own."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        self.directory = Path(tempfile.mkdtemp(prefix="awsview-emuforks-"))  # 0700
        self.socket_path = str(self.directory / "fork.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.socket_path)
        listener.listen(64)  # a request waits in the backlog while the server imports
        theirs, self._lifeline = os.pipe()
        env = self.env = {k: v for k, v in os.environ.items() if not k.startswith(PRIVATE)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.forkserver_main", str(listener.fileno())]
            + [str(theirs), " " * TITLE_ROOM],
            pass_fds=(listener.fileno(), theirs),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            env=env,
            cwd=ROOT,
            start_new_session=True,  # Ctrl+C reaches pytest, which stops its emulators itself
        )
        listener.close()
        os.close(theirs)

    def spawn(self, argv: list[str], env: dict[str, str], cwd: str | None = None) -> ForkedProcess:
        """Start ``argv`` (``python -m awsview emulator ...``) as a forked child, in ``cwd``
        (None: this process's); OSError if the server cannot take it."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        stdin = os.open(os.devnull, os.O_RDONLY)
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.settimeout(10)
            conn.connect(self.socket_path)
            data = encode_request(argv, env, cwd or os.getcwd())
            sent = socket.send_fds(conn, [data[:65536]], [stdin, out_w, err_w])
            conn.sendall(data[sent:])
            process = ForkedProcess(conn, argv, out_r, err_r)
        except (OSError, ValueError):
            conn.close()
            os.close(out_r)
            os.close(err_r)
            raise OSError("the fork server did not take the emulator") from None
        finally:
            for fd in (stdin, out_w, err_w):
                os.close(fd)
        return process

    def stop(self) -> None:
        if os.getpid() != self.owner:
            return
        if self._lifeline >= 0:
            os.close(self._lifeline)  # the server kills what still runs and leaves
            self._lifeline = -1
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


class Lent(Server):
    """The fork server a parallel run's controller started and lends its workers (LENT names it
    in their environment): one server's imports for the run rather than one per worker. Its
    owner stops it; an emulator it can no longer take starts as a plain process."""

    def __init__(self, named: str) -> None:  # "PID:SOCKET", as lend() names it
        pid, _, self.socket_path = named.partition(":")
        self.owner = -1
        self.process = _Elsewhere(int(pid))
        # What its children's imports read (same_at_import): a worker's are its controller's.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(PRIVATE)}

    def stop(self) -> None:
        pass


class _Elsewhere:
    """A lent server's process, not this one's child: its pid, and whether it still runs."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def poll(self) -> int | None:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return -1
        except PermissionError:
            pass
        return None


LENT = "AWSVIEW_TEST_FORKSERVER_SOCKET"
_server: Server | None = None
_starting = threading.Lock()


def server() -> Server:
    """This pytest process's fork server: the one its controller lends it, else its own,
    started on first use."""
    global _server
    with _starting:
        if _server is None and os.environ.get(LENT):
            _server = Lent(os.environ[LENT])
        stale = (
            _server is None
            or _server.process.poll() is not None  # gone (a lent one too: then one of its own)
            or (_server.owner != os.getpid() and not isinstance(_server, Lent))  # a parent's
        )
        if stale:
            _server = Server()
            atexit.register(_server.stop)
        return _server


def lend() -> dict[str, str]:
    """This process's server, for the environment of the processes it starts (a parallel run's
    workers) to borrow; nothing where no fork server is used."""
    if not usable():
        return {}
    running = server()
    return {LENT: f"{running.process.pid}:{running.socket_path}"}


# Read when a module is imported, not when it runs: botocore fixes the SSO token cache from HOME,
# tempfile its directory, Python its encodings and paths. A child whose values differ from the
# server's would run with the server's.
AT_IMPORT = ("HOME", "TMPDIR", "TEMP", "TMP", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE")


def same_at_import(server_env: dict[str, str], env: dict[str, str]) -> bool:
    names = {n for n in (*server_env, *env) if n in AT_IMPORT or n.startswith("PYTHON")}
    return all(server_env.get(n) == env.get(n) for n in names - {"PYTHONUNBUFFERED"})


def run(
    argv: list[str],
    env: dict[str, str],
    timeout: float,
    cwd: str | None = None,
    encoding: str | None = None,
    errors: str | None = None,
) -> subprocess.CompletedProcess | None:
    """What ``subprocess.run(argv, capture_output=True, text=True, stdin=DEVNULL, env=env,
    timeout=timeout, cwd=cwd, encoding=encoding, errors=errors)`` answers, for a
    ``python -m awsview ...`` forked from this process's server; None where it cannot be (then
    the caller starts a plain process)."""
    if not usable() or not same_at_import(server().env, env):
        return None
    process = spawn(argv, env, cwd)
    if process is None:
        return None
    if encoding is not None or errors is not None:
        process.stdout, process.stderr = (
            io.TextIOWrapper(stream.detach(), encoding=encoding, errors=errors)
            for stream in (process.stdout, process.stderr)
        )
    read: dict[str, str] = {}
    failed: list[BaseException] = []  # an output that does not decode, raised as run() raises it

    def reading(name: str, stream: io.TextIOBase) -> None:
        try:
            read[name] = stream.read()
        except BaseException as error:
            failed.append(error)

    readers = [
        threading.Thread(target=reading, args=(name, stream), daemon=True)
        for name, stream in (("out", process.stdout), ("err", process.stderr))
    ]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + timeout
    try:
        code = process.wait(timeout)
        for reader in readers:  # a grandchild may still hold a pipe: as communicate() waits
            reader.join(max(0.0, deadline - time.monotonic()))
        if any(reader.is_alive() for reader in readers):
            raise subprocess.TimeoutExpired(argv, timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise subprocess.TimeoutExpired(argv, timeout, read.get("out"), read.get("err")) from None
    finally:
        for stream in (process.stdout, process.stderr):
            if not any(reader.is_alive() for reader in readers):
                stream.close()
    if failed:
        raise failed[0]
    return subprocess.CompletedProcess(argv, code, read.get("out", ""), read.get("err", ""))


def spawn(argv: list[str], env: dict[str, str], cwd: str | None = None) -> ForkedProcess | None:
    """The emulator forked from this process's server, or None where it cannot be (then the
    caller starts a plain process)."""
    if not usable():
        return None
    try:
        return server().spawn(argv, env, cwd)
    except OSError:
        return None
