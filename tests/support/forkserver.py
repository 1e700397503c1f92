"""Emulators for the tests, forked from a server that has imported them once.

Each `awsview emulator` a test starts would spend most of its start, and its first call to each
service, importing moto, werkzeug, boto and the emulator's own modules. One server per pytest
process imports all of that once (started on the first emulator, gone with that process) and
starts each emulator as a forked child of itself, with the caller's argv, environment, working
directory and standard file descriptors: the child then runs ``awsview.cli.main.main`` as
``python -m awsview`` would. The same pattern as the AWS CLI's fork server
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
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

SWITCH = "AWSVIEW_TEST_FORKSERVER"
ROOT = Path(__file__).resolve().parents[2]
MAX_REQUEST = 4 * 1024 * 1024
# The caller's settings never reach the server's imports (moto reads some at import time).
PRIVATE = ("AWS_", "MOTO_", "AWSVIEW_", "TEST_SERVER_MODE", "TEST_PROXY_MODE")
TITLE_ROOM = 4096  # argv room the server keeps so each child can show its own command line

# What an emulator imports at start and at its first call to each service the labs use.
WARM = (
    "awsview.cli.main",
    "awsview.cli.commands",
    "awsview.cli.emulator",
    "awsview.emulator.server",
    "awsview.emulator.moto_patches",
    "werkzeug.serving",
    "moto.core.config",
    "moto.moto_server.werkzeug_app",
    "moto.moto_api._internal.models",
    "awsview.emulator.change_hooks",
    "awsview.emulator.dynamo_journal",
    "awsview.emulator.changes",
    "awsview.emulator.disk",
    "awsview.emulator.journal",
    "awsview.emulator.lambda_runtime",
    "awsview.emulator.sqs_poller",
    "awsview.emulator.portal",
    "awsview.emulator.iam_policy",
)
SERVICES = ("sts", "dynamodb", "dynamodbstreams", "iam", "awslambda", "stepfunctions", "sqs")
SERVICES += ("logs", "cloudwatch", "events", "kinesis", "s3", "ecr")


def usable() -> bool:
    return os.environ.get(SWITCH) != "0" and hasattr(os, "pidfd_open") and sys.platform == "linux"


class ForkedProcess:
    """A forked emulator as the tests use a ``subprocess.Popen``: its real ``pid``, text
    ``stdout``/``stderr`` pipes, ``poll``, ``wait``, ``kill``, ``terminate``, ``send_signal``,
    ``returncode``."""

    def __init__(self, conn: socket.socket, args: list[str], stdout: int, stderr: int) -> None:
        self.args = args
        self._conn = conn
        self._answer = b""
        self.pid = int(self._line())
        self._pidfd = os.pidfd_open(self.pid)
        self.stdout = open(stdout, encoding=None)  # text, as Popen(text=True)
        self.stderr = open(stderr, encoding=None)
        self.stdin = None
        self.returncode: int | None = None
        self._lock = threading.Lock()

    def __del__(self) -> None:
        if self.returncode is None and getattr(self, "_pidfd", -1) >= 0:
            os.close(self._pidfd)  # its connection closes too: the server kills the emulator

    def _line(self, timeout: float | None = None) -> str:
        self._conn.settimeout(timeout)
        while b"\n" not in self._answer:
            chunk = self._conn.recv(64)
            if not chunk:  # the server went away without a status: the child is gone with it
                self._answer += b"-9\n"
                break
            self._answer += chunk
        line, self._answer = self._answer.split(b"\n", 1)
        return line.decode()

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                self.wait(timeout=0)
            except subprocess.TimeoutExpired:
                pass
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        with self._lock:
            if self.returncode is None:
                try:
                    self.returncode = int(self._line(timeout))
                except (TimeoutError, BlockingIOError):  # not ended yet
                    raise subprocess.TimeoutExpired(self.args, timeout or 0) from None
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
        env = {k: v for k, v in os.environ.items() if not k.startswith(PRIVATE)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.forkserver", str(listener.fileno())]
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

    def spawn(self, argv: list[str], env: dict[str, str]) -> ForkedProcess:
        """Start ``argv`` (``python -m awsview emulator ...``) as a forked child; OSError if the
        server cannot take it."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        stdin = os.open(os.devnull, os.O_RDONLY)
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.settimeout(120)  # the server's imports, on a busy machine
            conn.connect(self.socket_path)
            body = json.dumps({"argv": argv, "env": env, "cwd": os.getcwd()}).encode()
            data = len(body).to_bytes(4, "big") + body
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


_server: Server | None = None


def server() -> Server:
    """This pytest process's fork server, started on first use."""
    global _server
    if _server is None or _server.owner != os.getpid() or _server.process.poll() is not None:
        _server = Server()
        atexit.register(_server.stop)
    return _server


def spawn(argv: list[str], env: dict[str, str]) -> ForkedProcess | None:
    """The emulator forked from this process's server, or None where it cannot be (then the
    caller starts a plain process)."""
    if not usable():
        return None
    try:
        return server().spawn(argv, env)
    except OSError:
        return None


# --- the server process ------------------------------------------------------------------


def _warm() -> None:
    """Import, with no caller's settings, what an emulator imports."""
    import importlib

    from awsview.emulator import moto_patches

    moto_patches.load_batch_enum_alone()  # as the emulator does: not moto.batch's package init
    for name in WARM + tuple(
        f"moto.{service}.{part}" for service in SERVICES for part in ("models", "responses", "urls")
    ):
        try:
            importlib.import_module(name)
        except Exception:  # a module this moto lacks: the child imports it if it needs it
            continue
    try:
        from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

        AmazonStateLanguageParser.parse(json.dumps(_MACHINE))  # loads the states' modules
    except Exception:
        pass
    import gc

    gc.collect()
    gc.freeze()  # a child's collections leave the imported objects' pages shared


_MACHINE: dict[str, Any] = {
    "StartAt": "P",
    "States": {
        "P": {"Type": "Pass", "Next": "C"},
        "C": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.a", "NumericEquals": 1, "Next": "W"}],
            "Default": "M",
        },
        "W": {"Type": "Wait", "Seconds": 1, "Next": "M"},
        "M": {
            "Type": "Map",
            "ItemsPath": "$.items",
            "Iterator": {"StartAt": "I", "States": {"I": {"Type": "Succeed"}}},
            "Next": "L",
        },
        "L": {
            "Type": "Parallel",
            "Branches": [{"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "E"}}}],
            "Next": "T",
        },
        "T": {
            "Type": "Task",
            "Resource": "arn:aws:states:::sqs:sendMessage",
            "Parameters": {"QueueUrl": "q", "MessageBody.$": "States.Format('{}', $.a)"},
            "Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 1}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "S"}],
            "Next": "D",
        },
        "D": {
            "Type": "Task",
            "Resource": "arn:aws:states:::dynamodb:putItem",
            "Parameters": {"TableName": "t", "Item": {}},
            "Next": "X",
        },
        "X": {
            "Type": "Task",
            "Resource": "arn:aws:lambda:us-east-1:123456789012:function:f",
            "End": True,
        },
        "S": {"Type": "Succeed"},
    },
}


def serve(listener: socket.socket, lifeline: int) -> None:
    """Accept requests until the lifeline closes; each one runs in a forked child."""
    _warm()
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(lifeline, selectors.EVENT_READ, "lifeline")
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd: (pid, connection)
    while True:
        for key, _ in selector.select():
            if key.data == "lifeline":
                for pid, _conn in children.values():
                    _kill(pid)
                for pidfd in children:
                    os.waitid(os.P_PIDFD, pidfd, os.WEXITED)
                return
            if key.data == "accept":
                conn, _ = listener.accept()
                started = _start(conn, [listener.fileno(), lifeline, *children])
                if started is None:
                    conn.close()
                    continue
                pidfd, pid = started
                children[pidfd] = (pid, conn)
                selector.register(pidfd, selectors.EVENT_READ, "child")
                selector.register(conn, selectors.EVENT_READ, ("client", pid))
            elif key.data == "child":
                pidfd = key.fd
                pid, conn = children.pop(pidfd)
                selector.unregister(pidfd)
                os.close(pidfd)
                _, status = os.waitpid(pid, 0)
                try:
                    selector.unregister(conn)
                except KeyError:
                    pass  # its client went first
                try:
                    conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                except OSError:
                    pass
                conn.close()
            else:  # the client never speaks after its request: readable means it went away
                _, pid = key.data
                selector.unregister(key.fileobj)
                _kill(pid)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _start(conn: socket.socket, close: list[int]) -> tuple[int, int] | None:
    """Read one request and fork its child; (pidfd, pid), or None for a bad request."""
    conn.settimeout(10)
    fds: list[int] = []
    try:
        data, fds, _, _ = socket.recv_fds(conn, 65536, 3)
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            if len(data) >= 4 and int.from_bytes(data[:4], "big") > MAX_REQUEST:
                raise ValueError("request too large")
            more = conn.recv(65536)
            if not more:
                raise ValueError("short request")
            data += more
        if len(fds) != 3:
            raise ValueError("bad request")
        request = json.loads(data[4:])
        argv = [str(a) for a in request["argv"]]
        env = {str(k): str(v) for k, v in request["env"].items()}
        cwd = str(request["cwd"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        for fd in fds:
            os.close(fd)
        return None
    conn.settimeout(None)
    try:
        pid = os.fork()
    except OSError:
        for fd in fds:
            os.close(fd)
        return None
    if pid == 0:
        _child(argv, env, cwd, fds)
    for fd in fds:
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    try:
        conn.sendall(f"{pid}\n".encode())
    except OSError:
        _kill(pid)
    return pidfd, pid


def _child(argv: list[str], env: dict[str, str], cwd: str, fds: list[int]) -> None:
    """In the forked child: become ``python -m awsview ARGS`` and run it."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for name in os.listdir("/proc/self/fd"):  # nothing of the server's, nor the others'
            if int(name) > 2:
                try:
                    os.close(int(name))
                except OSError:
                    pass
        for number in range(1, signal.NSIG):
            try:
                signal.signal(number, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as Python starts
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        if env.get("PYTHONUNBUFFERED"):
            sys.stdout.reconfigure(write_through=True)
            sys.stderr.reconfigure(write_through=True)
        _retitle(argv)
        module = argv.index("-m") + 1 if "-m" in argv else -1
        if argv[module : module + 1] != ["awsview"]:
            raise ValueError(f"not an awsview command: {argv[:4]}")
        import importlib.util

        from awsview.cli.main import main

        entry = importlib.util.find_spec("awsview.__main__")  # argv[0] as `-m` shows it
        sys.argv = [str(entry.origin if entry else "awsview"), *argv[module + 1 :]]
        sys.path[0] = cwd
        code = main(argv[module + 1 :])
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    except KeyboardInterrupt:
        code = 130
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code if isinstance(code, int) else 1)


def _retitle(argv: list[str]) -> None:
    """Show the request's argv in /proc/PID/cmdline (ps, the tests' process lists): written
    over the server's own argv, which kept TITLE_ROOM for it."""
    try:
        with open("/proc/self/stat") as handle:
            stat = handle.read()
        fields = stat[stat.rindex(")") + 2 :].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end
        title = "\0".join(argv).encode()[: end - start - 1]
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            mem.write(title.ljust(end - start, b"\0"))
    except (OSError, ValueError, IndexError):
        pass  # the server's command line shows instead


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])), int(sys.argv[2]))
