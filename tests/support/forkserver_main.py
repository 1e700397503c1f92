"""The tests' fork server, the process (tests/support/forkserver.py starts it and speaks to it):
imports what an emulator and the command line import, once, with none of the caller's
settings, then forks one child per request and runs ``python -m awsview`` with the request's
argv, environment, working directory and standard fds in it."""

from __future__ import annotations

import io
import os
import selectors
import shutil
import signal
import socket
import sys
from pathlib import Path

from awsview.labs.fastcli import collector_paused, exit_with, freeze, read_request

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
    # What the other commands the tests run (`python -m awsview dump`, `lab check`, `verify`,
    # `iam-policy`, `doctor`) import before they poll or play.
    "aiobotocore.session",
    "aiobotocore.client",
    "awsview.aws.session",
    "awsview.cli.dump",
    "awsview.cli.lab",
    "awsview.cli.labfolder",
    "awsview.cli.verify",
    "awsview.cli.iam_policy",
    "awsview.core.printout",
    "awsview.labs.player",
    "awsview.polling.live",
    "awsview.polling.scheduler",
    "awsview.polling.stepcheck",
    "awsview.kinds",
)
# The services the labs use, by their botocore names (moto's own module names below). At a
# service's first request, each emulator would otherwise parse its model and paginators, build its
# operation router and list its regions (a boto3 session of moto's own): about 0.1 s of CPU per
# service, where every test's emulator is asked by a viewer about six of them.
MODELS = (
    *("sts", "dynamodb", "dynamodbstreams", "iam", "lambda", "stepfunctions", "sqs"),
    *("logs", "cloudwatch", "events", "kinesis", "s3", "ecr"),
)
SERVICES = tuple({"lambda": "awslambda"}.get(name, name) for name in MODELS)


def _warm() -> None:
    """Import, with no caller's settings, what an emulator imports (as the fast CLI's server
    does: no garbage collection meanwhile, then one, and what is left frozen)."""
    with collector_paused():
        _import()
    freeze()


def _import() -> None:
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
    try:  # the service models and endpoint rules, parsed into the process's shared loader
        from awsview.aws.session import read_models

        read_models()
    except Exception:
        pass
    try:  # what moto reads at a service's first request (MODELS), kept in its caches
        from moto.core.base_backend import AccountSpecificBackend
        from moto.core.routing import get_service_router
        from moto.core.utils import get_pagination_model

        regions = AccountSpecificBackend.get_session()
        for name in MODELS:
            try:
                get_service_router(name)
                get_pagination_model(name)
                for partition in regions.get_available_partitions():
                    regions.get_available_regions(name, partition_name=partition)
            except Exception:
                continue
    except Exception:
        pass
    try:
        from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

        AmazonStateLanguageParser.parse(_MACHINE)  # loads the states' modules
    except Exception:
        pass


# One state of each type, parsed in the server: the parser imports each type's modules then.
_MACHINE = """{"StartAt": "P", "States": {
  "P": {"Type": "Pass", "Next": "C"},
  "C": {"Type": "Choice", "Choices": [{"Variable": "$.a", "NumericEquals": 1, "Next": "W"}],
        "Default": "M"},
  "W": {"Type": "Wait", "Seconds": 1, "Next": "M"},
  "M": {"Type": "Map", "ItemsPath": "$.items", "Next": "L",
        "Iterator": {"StartAt": "I", "States": {"I": {"Type": "Succeed"}}}},
  "L": {"Type": "Parallel", "Next": "T",
        "Branches": [{"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "E"}}}]},
  "T": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage", "Next": "D",
        "Parameters": {"QueueUrl": "q", "MessageBody.$": "States.Format('{}', $.a)"},
        "Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 1}],
        "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "S"}]},
  "D": {"Type": "Task", "Resource": "arn:aws:states:::dynamodb:putItem", "Next": "X",
        "Parameters": {"TableName": "t", "Item": {}}},
  "X": {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:123456789012:function:f",
        "End": true},
  "S": {"Type": "Succeed"}}}"""


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
                # Its pytest process may have ended without its atexit (killed): tidy up here.
                shutil.rmtree(Path(listener.getsockname()).parent, ignore_errors=True)
                return
            if key.data == "accept":
                conn, _ = listener.accept()
                started = _start(conn)
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


def _start(conn: socket.socket) -> tuple[int, int] | None:
    """Read one request and fork its child; (pidfd, pid), or None for a bad request."""
    request = read_request(conn)
    if request is None:
        return None
    argv, env, cwd, fds = request
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

    def become() -> object:
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
            for stream in (sys.stdout, sys.stderr):
                if isinstance(stream, io.TextIOWrapper):
                    stream.reconfigure(write_through=True)
        _retitle(argv)
        module = argv.index("-m") + 1 if "-m" in argv else -1
        if argv[module : module + 1] != ["awsview"]:
            raise ValueError(f"not an awsview command: {argv[:4]}")
        import importlib.util

        from awsview.cli.main import main

        entry = importlib.util.find_spec("awsview.__main__")  # argv[0] as `-m` shows it
        sys.argv = [str(entry.origin if entry else "awsview"), *argv[module + 1 :]]
        sys.path[0] = cwd
        return main(argv[module + 1 :])

    exit_with(become, 1)


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
