"""The AWS CLI, fast: a fork server that has imported awscli once and runs each ``aws ARGS`` of a
lab's bash in a forked child, with the caller's argv, environment, working directory and
standard file descriptors (passed over a Unix socket), answering its exit status. Another
program of this interpreter can be served the same way (`Served`: `lab check` has a verify
script's ``awsview verify STEP`` run so): its code is imported in the server on its first
command, not before, so a lab that never runs it pays nothing.

Why: a lab's steps run the CLI dozens of times (loops poll `describe-execution`), and each
``aws`` process spends most of its life importing botocore and awscli. A forked child has them
already; it builds its session from the caller's environment as a fresh process would. The same
holds for `lab check`, which runs every verify script of a lab, often twice.

Used only when AWS View plays on an endpoint it owns or was pointed at, and only when the
program found on PATH is this interpreter's (the same code either way). ``AWSVIEW_FAST_CLI=0``
turns it off. The client (the ``aws`` first on the lab's PATH, and each served program's) runs
the real program whenever the server cannot take the command (not started, gone, refused), and
for a command its `Served` does not name.

Protocol, one connection per command: the client sends its request (`encode_request`: NUL-ended
fields, as none of them can hold a NUL; argv[0] is ``aws`` or a served program's entry) with its
fds 0, 1, 2 attached to the first message; the server answers ``A`` once the child is forked,
then the exit status as text when it ends. A client that goes away (killed at its step's
timeout) has its child killed. The socket lives in a directory only this user can enter
(mkdtemp's 0700).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import importlib
import importlib.util
import io
import os
import re
import selectors
import shlex
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

SWITCH = "AWSVIEW_FAST_CLI"  # "0": every command runs the real `aws`
SOCKET_ENV = "AWSVIEW_FAST_CLI_SOCKET"  # the server of `aws` commands
# The server of the `Served` programs: apart, as awscli puts its own copy of botocore in
# sys.modules under botocore's name, which the programs' (aiobotocore's) botocore is not.
PROGRAMS_SOCKET_ENV = "AWSVIEW_FAST_PROGRAMS_SOCKET"
KINDS = {"aws": SOCKET_ENV, "programs": PROGRAMS_SOCKET_ENV}
MAX_REQUEST = 4 * 1024 * 1024  # an environment and argv larger than this is not a lab's
# module:function, as a console script names its main; AWS View's own modules only: a server
# imports nothing else on request (an import can do anything: `antigravity` opens a browser).
ENTRY = re.compile(r"awsview(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")


@dataclass(frozen=True)
class Served:
    """A program of this interpreter, besides ``aws``, whose commands a lab's bash hands the
    server: ``entry`` (``module:function`` of AWS View's own package, as its console script
    names its main) is called in the child with the arguments after the program's name, and
    returns the exit status, for the commands whose first argument is one of ``commands``; any
    other runs the real program. The server imports ``entry``'s module on the program's first
    command: what it imports, each later child has. If the module has a ``prepare()``, the
    server runs it once then: each child is handed the data files botocore parsed as it ran, and
    its event handlers' answers (`_read_once`, `_remember_registrations`)."""

    entry: str
    commands: tuple[str, ...]

    def __post_init__(self) -> None:
        if not ENTRY.fullmatch(self.entry):
            raise ValueError(f"not a module:function entry: {self.entry!r}")


# The client runs once per `aws` command: built-in modules only (`_socket`, not `socket` and its
# enums; no `json` and its regular expressions), no site (-IS): about half the CPU it took.
CLIENT = r"""
import os, sys, _socket
REAL = {real!r}
PROGRAM = {program!r}  # "aws", or the served program's entry
COMMANDS = {commands!r}  # what it serves; None: every command


def real():
    argv = [REAL]
    if PROGRAM == "aws" and os.environ.get("AWS_ENDPOINT_URL"):
        argv += ["--endpoint-url", os.environ["AWS_ENDPOINT_URL"]]
    os.execv(REAL, argv + sys.argv[1:])


path = os.environ.get({socket_env!r}, "")
if not path or os.environ.get({switch!r}) == "0":
    real()
if COMMANDS is not None and sys.argv[1:2] not in [[command] for command in COMMANDS]:
    real()
try:
    fields = [os.getcwd(), str(len(sys.argv)), PROGRAM, *sys.argv[1:]]
    fields += [name + "=" + value for name, value in os.environ.items()]
    body = b"".join(os.fsencode(field) + b"\0" for field in fields)
    data = len(body).to_bytes(4, "big") + body
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    conn.connect(path)
    fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))
    sent = conn.sendmsg([data[:65536]], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
    conn.sendall(data[sent:])
    accepted = conn.recv(1)
except OSError:
    accepted = b""
if accepted != b"A":
    real()
answer = b""
while True:
    try:
        chunk = conn.recv(64)
    except InterruptedError:
        continue
    if not chunk:
        break
    answer += chunk
try:
    sys.exit(int(answer))
except ValueError:
    sys.stderr.write("aws: the command ended without an exit status\n")
    sys.exit(255)
"""


def usable(real: str | None, served: Served | None = None) -> bool:
    """Whether the commands of ``real`` (the ``aws`` found on PATH, or the program ``served``
    stands for) may go to a fork server: switched on, on Linux (pidfd), and ``real`` is a script
    of this interpreter (the same code a forked child runs; for ``aws``, its awscli)."""
    if os.environ.get(SWITCH) == "0" or real is None or not hasattr(os, "pidfd_open"):
        return False
    if served is None and importlib.util.find_spec("awscli") is None:
        return False
    return _same_python(real)


def _same_python(script: str) -> bool:
    """Whether ``script`` is a Python script run by this interpreter (as pip writes ``aws``)."""
    try:
        with open(script, "rb") as handle:
            first = handle.readline(512)
    except OSError:
        return False
    if not first.startswith(b"#!"):
        return False
    words = first[2:].decode(errors="replace").split()
    return bool(words) and Path(words[0]).resolve() == Path(sys.executable).resolve()


def write_client(path: Path, real: str, served: Served | None = None) -> None:
    """The ``aws`` a lab's bash finds first (or, with ``served``, that program): hands its
    command to the server, else runs ``real``."""
    program, commands, kind = (
        ("aws", None, "aws") if served is None else (served.entry, served.commands, "programs")
    )
    code = CLIENT.format(
        real=real, program=program, commands=commands, socket_env=KINDS[kind], switch=SWITCH
    )
    shebang = f"#!{sys.executable} -IS\n"
    if len(shebang) > 120 or " " in sys.executable:  # the kernel cuts long or spaced shebangs
        client = path.with_name(f"{path.name}-client.py")
        client.write_text(code, encoding="utf-8")
        path.write_text(
            f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -IS {shlex.quote(str(client))} "$@"\n',
            encoding="utf-8",
        )
    else:
        path.write_text(shebang + code, encoding="utf-8")
    path.chmod(0o755)


class Server:
    """A fork server, in a process of its own: of ``aws`` commands, or of `Served` programs (its
    ``kind``). One of each per AWS View process, started on first use and stopped at exit (or
    when AWS View's process goes: it watches a pipe from it)."""

    def __init__(self, kind: str = "aws") -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="awsview-cli-"))
        self.socket_path = str(self.directory / "cli.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(self.socket_path)  # a TMPDIR too long for a socket's path: OSError
            listener.listen(64)
        except OSError:
            listener.close()
            self._remove_directory()
            raise
        # Bound here, so a command can connect at once: it waits in the backlog until the
        # server has imported awscli.
        self._lifeline, theirs = os.pipe()
        # The server's own environment only serves its warm-up: never a real account's.
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(
            AWS_CONFIG_FILE=os.devnull,
            AWS_SHARED_CREDENTIALS_FILE=os.devnull,
            AWS_EC2_METADATA_DISABLED="true",
        )
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(listener.fileno()), str(theirs), kind],
            pass_fds=(listener.fileno(), theirs),
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        listener.close()
        os.close(theirs)

    def stop(self) -> None:
        if self._lifeline >= 0:
            os.close(self._lifeline)  # the server kills what still runs and leaves
            self._lifeline = -1
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._remove_directory()

    def _remove_directory(self) -> None:
        import shutil

        shutil.rmtree(self.directory, ignore_errors=True)


class Lent:
    """A fork server another AWS View process started, named in this one's environment
    (SOCKET_ENV, PROGRAMS_SOCKET_ENV): its owner's lab commands run this process (a test, `lab
    check` in a lab's shell), which borrows the server rather than import awscli into one of its
    own. Its owner stops it; a command that finds it gone runs the real program."""

    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path


def lent(kind: str = "aws") -> Lent | None:
    """The server of ``kind`` the environment names, if it is one this user's: a socket of
    theirs, in a directory only they can enter (as `Server` makes it). Not asked anything: a
    connection that sends no command would hold up the server's other commands."""
    path = os.environ.get(KINDS[kind], "")
    if not os.path.isabs(path):
        return None
    try:
        sock, folder = os.stat(path), os.stat(os.path.dirname(path))
    except OSError:
        return None
    mine = sock.st_uid == folder.st_uid == os.getuid()
    if not (stat.S_ISSOCK(sock.st_mode) and mine and stat.S_IMODE(folder.st_mode) == 0o700):
        return None
    return Lent(path)


_servers: dict[str, Server | Lent] = {}


def stop_servers() -> None:
    """Stop this process's own fork servers (not one it borrows), now rather than at exit."""
    while _servers:
        _, running = _servers.popitem()
        if isinstance(running, Server):
            running.stop()


def server(kind: str = "aws") -> Server | Lent:
    """This process's fork server of ``kind`` (``aws``, ``programs``): the one its environment
    lends, else its own, started on first use. OSError where it cannot be (no room for its
    folder, a TMPDIR too long for a socket's path): the caller runs the real program."""
    running = _servers.get(kind)
    if isinstance(running, Server) and running.process.poll() is not None:
        running = None
    if running is None:
        running = lent(kind)
    if running is None:
        running = Server(kind)
        atexit.register(running.stop)
    _servers[kind] = running
    return running


# --- the server process ------------------------------------------------------------------


def serve(listener: socket.socket, lifeline: int, kind: str = "aws") -> None:
    """Accept commands until the lifeline closes; each one runs in a forked child."""
    if kind == "aws":
        with collector_paused():
            import awscli.clidriver
            import awscli.handlers  # noqa: F401  (the CLI's customizations, every command's)

            try:
                _prepare()
            except Exception:
                pass
    freeze()
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(lifeline, selectors.EVENT_READ, "lifeline")
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd: (pid, connection)
    while True:
        for key, _ in selector.select():
            if key.data == "lifeline":
                for pid, _conn in children.values():
                    _kill(pid)
                _remove(listener)
                return
            if key.data == "accept":
                conn, _ = listener.accept()
                started = _start(conn, listener, lifeline, children, kind)
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
                code = os.waitstatus_to_exitcode(status)
                try:
                    selector.unregister(conn)
                except KeyError:
                    pass  # its client went first
                try:
                    conn.sendall(str(128 - code if code < 0 else code).encode())
                except OSError:
                    pass
                conn.close()
            else:  # the client said something or went away: it never speaks, so it went
                _, pid = key.data
                selector.unregister(key.fileobj)
                _kill(pid)


def _remove(listener: socket.socket) -> None:
    """The server's socket and its folder, once its owner is gone: an owner ended without its
    cleanup (killed, `os._exit`) leaves nothing behind. Its owner removes them too when it
    stops the server (`Server.stop`); whichever comes second finds nothing."""
    try:
        path = listener.getsockname()
        os.unlink(path)
        os.rmdir(os.path.dirname(path))  # only if nothing else is in it
    except (OSError, TypeError):
        pass


WARM = ("sts", "dynamodb", "iam", "lambda", "stepfunctions", "sqs", "logs")  # the labs' services
WARM_COMMANDS = (  # each with a required argument left out
    ("dynamodb", "get-item"),
    ("iam", "get-role"),
    ("lambda", "get-function"),
    ("stepfunctions", "describe-execution"),
    ("sqs", "receive-message"),
    ("logs", "get-log-events"),
)


def _prepare() -> None:
    """Read, once and in the server, the data files a command reads (the endpoints, the CLI's
    own data, the labs' service models, waiters and paginators: most of what a child would
    still spend after the imports), and answer the CLI's registrations once
    (`_remember_registrations`).

    This is the one place that wraps the CLI's internals (botocore's loaders, as awscli
    imports them)."""
    import awscli.clidriver

    def warm() -> None:
        session = awscli.clidriver.create_clidriver().session
        session.get_available_services()
        client = {
            "region_name": "us-east-1",
            "endpoint_url": "http://127.0.0.1:9",
            "aws_access_key_id": "warm",
            "aws_secret_access_key": "warm",
        }
        for service in WARM:
            for read, keywords in (
                (session.create_client, client),
                (session.get_waiter_model, {}),  # not every service has waiters
                (session.get_paginator_model, {}),
            ):
                try:
                    read(service, **keywords)
                except Exception:  # a file this service lacks
                    continue
        # A command line the CLI refuses before any request (a required argument missing) still
        # builds its command tables as every command does: the CLI's own data, and the model of
        # each service it marks "preview" (SimpleDB), read for every command.
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for service, operation in WARM_COMMANDS:
                try:
                    awscli.clidriver.create_clidriver().main([service, operation])
                except (Exception, SystemExit):
                    continue

    _remember_registrations()  # the CLI's own registrations, answered once as it warms
    _read_once(warm)


def _read_once(warm: Callable[[], object]) -> None:
    """Run ``warm`` and keep each data file botocore parses as it runs (botocore's loaders, as
    this server imported them: awscli's own copy in the `aws` server). A child is handed each
    parsed file once, untouched, as if it had parsed it itself; a second read of a file in the
    same child parses it again. A folder's listing of services is kept the same way."""
    import copy

    from botocore import loaders

    parsed: dict[str, object] = {}
    listed: dict[tuple[tuple[str, ...], str], list[str]] = {}
    load_file = loaders.JSONFileLoader.load_file
    list_services = loaders.Loader.list_available_services

    def recording(self, file_path):  # type: ignore[no-untyped-def]
        data = load_file(self, file_path)
        if data is not None:
            parsed[file_path] = copy.deepcopy(data)
        return data

    def listed_once(self, type_name):  # type: ignore[no-untyped-def]
        # A folder named twice lists nothing more: a caller whose AWS_DATA_PATH already names
        # the CLI's data (any process that imported awscli, and its children) has it twice.
        key = (tuple(dict.fromkeys(self.search_paths)), type_name)
        if key not in listed:
            listed[key] = list(list_services(self, type_name))
        return list(listed[key])

    loaders.Loader.list_available_services = listed_once  # type: ignore[method-assign]
    loaders.JSONFileLoader.load_file = recording  # type: ignore[method-assign]
    try:
        warm()
    finally:
        loaders.JSONFileLoader.load_file = load_file  # type: ignore[method-assign]

    def handed_once(self, file_path):  # type: ignore[no-untyped-def]
        data = parsed.pop(file_path, None)
        return data if data is not None else load_file(self, file_path)

    loaders.JSONFileLoader.load_file = handed_once  # type: ignore[method-assign]


def _remember_registrations() -> None:
    """Every command registers event handlers (a CLI command some 400, a client dozens), and
    botocore checks each handler's signature (``inspect``) and rewrites each event name through
    its aliases as it does: half of an `aws` child's own time. The handlers and names are the
    same in every child, so the answers are kept from the server's warm-up on (both are pure: a
    function's signature, a name's aliased form under botocore's fixed aliases)."""
    from botocore import compat, hooks  # the server's botocore: awscli's own in the `aws` one

    if getattr(hooks, "_remembered", False):  # once per server, whatever asks again
        return
    hooks._remembered = True  # type: ignore[attr-defined]
    accepts = compat.accepts_kwargs
    known: dict[object, bool] = {}

    def accepts_once(func):  # type: ignore[no-untyped-def]
        key = _signature_key(func)
        if key not in known:
            known[key] = accepts(func)
        return known[key]

    aliased: dict[str, str] = {}
    init = hooks.EventAliaser.__init__

    def sharing_aliases(self, event_emitter, event_aliases=None):  # type: ignore[no-untyped-def]
        init(self, event_emitter, event_aliases)
        if event_aliases is None:  # botocore's own aliases: the same answer in every session
            self._alias_name_cache = aliased

    hooks.accepts_kwargs = accepts_once
    hooks.EventAliaser.__init__ = sharing_aliases  # type: ignore[method-assign]


def _signature_key(func: object) -> object:
    """What decides whether ``func`` takes ``**kwargs``, as ``inspect.getfullargspec`` reads it:
    a function's code (each command makes new closures of the same code: the CLI's argument
    renames, aliases and partials, some 150 of them), through a bound method or a partial (which
    keep the **kwargs of what they wrap), and a callable object's class. Anything that says its
    own signature (``__signature__``) is its own key."""
    while True:
        if isinstance(func, types.MethodType):
            func = func.__func__
        elif isinstance(func, functools.partial):
            func = func.func
        else:
            break
    if hasattr(func, "__signature__"):
        return func
    if isinstance(func, types.FunctionType):
        return func.__code__
    call = vars(type(func)).get("__call__")  # a class whose __call__ is written in Python
    if isinstance(call, types.FunctionType):
        return ("an instance of", type(func))
    return func


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


Request = tuple[list[str], dict[str, str], str, list[int]]  # argv, env, cwd, fds 0-2


def read_request(conn: socket.socket) -> Request | None:
    """One request of the protocol above (`encode_request`), with three file descriptors on its
    first message. None for a bad or oversized one (any fds it brought are closed)."""
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
        argv, env, cwd = decode_request(data[4 : 4 + int.from_bytes(data[:4], "big")])
    except (OSError, ValueError):
        for fd in fds:
            os.close(fd)
        return None
    conn.settimeout(None)
    return argv, env, cwd, fds


def encode_request(argv: list[str], env: dict[str, str], cwd: str) -> bytes:
    """A request as the client (CLIENT, which inlines it) sends it: a 4-byte length, then the
    working directory, the argument count, the arguments and the ``NAME=value`` entries, each
    ending in a NUL."""
    fields = [cwd, str(len(argv)), *argv, *(f"{name}={value}" for name, value in env.items())]
    body = b"".join(os.fsencode(field) + b"\0" for field in fields)
    return len(body).to_bytes(4, "big") + body


def decode_request(body: bytes) -> tuple[list[str], dict[str, str], str]:
    """(argv, env, cwd) of a request's body; ValueError when it is not one."""
    if not body.endswith(b"\0"):
        raise ValueError("a field does not end")
    fields = [os.fsdecode(field) for field in body[:-1].split(b"\0")]
    if len(fields) < 2 or not fields[1].isdigit():
        raise ValueError("no argument count")
    count = int(fields[1])
    if len(fields) < 2 + count:
        raise ValueError("fewer arguments than counted")
    env = {}
    for entry in fields[2 + count :]:
        name, equals, value = entry.partition("=")
        if not name or not equals:
            raise ValueError("an environment entry without a name")
        env[name] = value
    return fields[2 : 2 + count], env, fields[0]


def exit_with(command: Callable[[], object], failure: int) -> NoReturn:
    """In a forked child: run ``command`` as a program's main and end the process with its
    status, as the interpreter would (SystemExit's code, 130 for Ctrl+C, ``failure`` and the
    traceback for anything else), its output flushed and nothing of the server's run at exit."""
    code: object = failure
    try:
        code = command()
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    except KeyboardInterrupt:
        code = 130
    except BaseException:
        import traceback

        traceback.print_exc()
        code = failure
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code if isinstance(code, int) else failure)


def _start(
    conn: socket.socket,
    listener: socket.socket,
    lifeline: int,
    children: dict[int, tuple[int, socket.socket]],
    kind: str,
) -> tuple[int, int] | None:
    """Read one request and fork its child; (pidfd, pid), or None for a bad request or one
    this server's ``kind`` does not run."""
    request = read_request(conn)
    if request is None:
        return None
    argv, env, cwd, fds = request
    runs = bool(argv) and (argv[0] == "aws" if kind == "aws" else _imported(argv[0]))
    if not runs or not same_stdio(env, os.environ):
        for fd in fds:
            os.close(fd)
        return None  # the client runs the real program
    try:
        pid = os.fork()
    except OSError:  # no process left: the client runs the real `aws`
        for fd in fds:
            os.close(fd)
        return None
    if pid == 0:
        _child(argv, env, cwd, fds, [listener.fileno(), lifeline, conn.fileno()] + list(children))
    for fd in fds:
        os.close(fd)
    try:
        conn.sendall(b"A")
    except OSError:
        _kill(pid)
    return os.pidfd_open(pid), pid


def _data_path() -> None:
    """What importing awscli does to the environment, done again for the caller's: botocore
    finds the CLI's own data through AWS_DATA_PATH."""
    import awscli

    paths = [
        os.path.expanduser(os.path.expandvars(p))
        for p in os.environ.get("AWS_DATA_PATH", "").split(os.pathsep)
        if "AWS_DATA_PATH" in os.environ
    ]
    paths.append(os.path.join(os.path.dirname(os.path.abspath(awscli.__file__)), "data"))
    awscli._awscli_data_path[:] = paths
    os.environ["AWS_DATA_PATH"] = os.pathsep.join(paths)


# What sets the encoding of a process's standard streams when it starts: a child has the server's
# streams, so a command whose settings differ runs the real program (which prints as they say).
STDIO = ("PYTHONIOENCODING", "PYTHONUTF8", "LC_ALL", "LC_CTYPE", "LANG")
CHILD_YOUNG_OBJECTS = 20_000  # a child's first garbage collection threshold (Python's: 700)


def same_stdio(env: Mapping[str, str], server_env: Mapping[str, str]) -> bool:
    """Whether a command's environment gives its standard streams the server's encoding (an
    empty setting is no setting, as Python reads them)."""
    return all((env.get(name) or None) == (server_env.get(name) or None) for name in STDIO)


def _imported(entry: str) -> bool:
    """Whether a served program's ``entry`` names a function, its module imported here (once;
    each later child has it, and what its ``prepare()`` read: `Served`). False for anything
    else: the client runs the real program, which says what is wrong."""
    if not ENTRY.fullmatch(entry):
        return False
    name, _, function = entry.partition(":")
    fresh = name not in sys.modules
    with collector_paused():
        try:
            module = importlib.import_module(name)
        except Exception:
            return False
        prepare = getattr(module, "prepare", None)
        if fresh and callable(prepare):
            try:
                _remember_registrations()
                _read_once(prepare)
            except Exception:
                pass  # each child reads what it needs itself
    if fresh:
        freeze()
    return callable(getattr(module, function, None))


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No garbage collection while the server imports and reads what its children will have:
    nearly all of it is kept, and each collection would walk it again (a tenth of a server's
    start). `freeze` collects once after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def freeze() -> None:
    """What the server has loaded, out of every child's garbage collections: a child's full
    collection would otherwise walk the server's objects too (and copy each page it touches);
    about 6 % of an `aws` child's CPU, measured over six paired rounds of lab commands."""
    gc.collect()
    gc.freeze()


def _child(argv: list[str], env: dict[str, str], cwd: str, fds: list[int], close: list[int]):
    """In the forked child: become the caller's `aws` (or served program's) process and run the
    command."""
    program, args = argv[0], argv[1:]

    def become() -> object:
        # A command builds its driver and client (tens of thousands of objects, nearly all kept
        # until it ends): at Python's pace of a young collection per 700 new objects, each walks
        # them again. One per CHILD_YOUNG_OBJECTS still collects a long command's cycles.
        gc.set_threshold(CHILD_YOUNG_OBJECTS, *gc.get_threshold()[1:])
        os.setsid()  # a signal for the server's group is not the command's
        for fd in close:
            try:
                os.close(fd)
            except OSError:
                pass
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if program != "aws":
            module, _, function = program.partition(":")
            main = getattr(sys.modules[module], function)
            sys.argv = [module.partition(".")[0], *args]  # as its console script is named
            return main(args)
        _data_path()
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # as `aws | head` behaves
        sys.argv = ["aws"]
        if env.get("AWS_ENDPOINT_URL"):
            sys.argv += ["--endpoint-url", env["AWS_ENDPOINT_URL"]]
        sys.argv += args
        from awscli.clidriver import main

        return main()

    exit_with(become, 255 if program == "aws" else 1)


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])), int(sys.argv[2]), sys.argv[3])
