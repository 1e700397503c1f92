"""Child processes as the tests start them: `python -m awsview ...` and free loopback ports."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from tests.support import forkserver

PLAYS_A_LAB = ("lab", "docs")


def awsview(
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    cwd: str | os.PathLike[str] | None = None,
    **options: object,
) -> subprocess.CompletedProcess:
    """`python -m awsview ARGS` with this interpreter, in ``cwd``: its output as text, no
    terminal on stdin (what a pipe or CI gives). Forked from the tests' server
    (tests/support/forkserver.py), which imported once what the command imports, unless
    ``options`` ask for more. ``env`` is added to the test's environment, less the terminal's
    size (COLUMNS, LINES: something in the test process may have exported it). ``encoding``
    and ``errors`` decode its output as `subprocess.run` does."""
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    full = {**base, **(env or {})}
    if args and args[0] in PLAYS_A_LAB:
        full = {**fast_cli(full), **full}  # what the test's environment says wins
    argv = [sys.executable, "-m", "awsview", *args]
    where = None if cwd is None else os.fspath(cwd)
    decoding = {name: options.pop(name) for name in ("encoding", "errors") if name in options}
    if not options:  # forked from the tests' server, which has imported what it would import
        done = forkserver.run(argv, full, timeout, where, **decoding)  # type: ignore[arg-type]
        if done is not None:
            return done
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=full,
        cwd=where,
        **decoding,
        **options,  # type: ignore[call-overload]
    )


def fast_cli(env: dict[str, str]) -> dict[str, str]:
    """For a command that plays a lab: the run's fork servers to borrow
    (awsview.labs.fastcli.lent: the controller's in a parallel run, tests/conftest.py, else this
    process's own), rather than the command's own: its `aws` server imports awscli again (a
    CPU-second), its programs' server AWS View's checking code (`lab check`'s verify scripts)."""
    from awsview.labs import fastcli

    # The `aws` a lab's shell finds first: its PATH starts with this interpreter's folder.
    found = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", os.defpath)])
    if not fastcli.usable(shutil.which("aws", path=found)):
        return {}
    return {
        fastcli.SOCKET_ENV: fastcli.server().socket_path,
        fastcli.PROGRAMS_SOCKET_ENV: fastcli.server("programs").socket_path,
    }


def free_port() -> int:
    """A loopback port nobody listens on now. Another process (a parallel test worker) may take
    it before the caller binds it: where the program can bind port 0 itself, let it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def burning(count: int) -> Iterator[list[subprocess.Popen]]:
    """``count`` processes that burn a CPU each (``while True: pass``) for the block: a busy
    machine, reproducible. Each is ended by its own id afterwards."""
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
        for _ in range(count)
    ]
    try:
        yield burners
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
