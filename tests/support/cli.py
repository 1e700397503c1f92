"""`awsview ARGS` called in the test's own process: for a test that asserts what the command
writes and its exit status, not what only a process of its own shows (its start, signals, a
terminal, a pipe closed under it). No interpreter to start and nothing to import again."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
from collections.abc import Iterator


@contextlib.contextmanager
def _environment(env: dict[str, str] | None) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def awsview_here(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """What tests.support.processes.awsview answers (exit status, stdout, stderr as text), from
    ``awsview.cli.main.main`` called here. ``env`` is added to the environment for the call."""
    from awsview.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with _environment(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exit:  # argparse's --help, --version and usage errors
            code = exit.code if isinstance(exit.code, int) else 2
    return subprocess.CompletedProcess(["awsview", *args], code, out.getvalue(), err.getvalue())
