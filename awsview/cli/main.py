"""The ``awsview`` command line: parse (``awsview.cli.parser``), check what every command needs,
run the command (``awsview.cli.commands``), and say any refusal once, here, in one line."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence

from awsview.ui import lifeline  # first: it notes the parent before start-up ends

# isort: split
from awsview.cli.commands import COMMANDS
from awsview.cli.common import EXIT_INTERRUPTED, EXIT_USAGE, MAX_MESSAGE, fail
from awsview.cli.parser import (  # noqa: F401  the command line's names, where they always were
    SHARED,
    TAKES,
    UsageError,
    _split_at,
    build_parser,
    parse,
)
from awsview.model import untrusted
from awsview.model.errors import UserError

# A reader that stops reading (`awsview dump | head -1`) ends the command as it ends `cat`: the
# status of a process that SIGPIPE stopped, 128 + 13, and nothing said.
EXIT_BROKEN_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    at = _split_at(argv)
    if at is not None and argv[at + 1 : at + 2] == ["--pane"]:
        from awsview.cli import split

        return split.pane_main(argv[at + 1 :], viewer=main)  # the viewer, inside the new pane
    with _signals_stop_like_ctrl_c():
        return _run(argv)


def _run(argv: list[str]) -> int:
    from awsview.aws.log import configure
    from awsview.cli.extras import require
    from awsview.cli.options import check_themes

    try:
        args = parse(argv)
        if "theme" in TAKES.get(args.command, set()) and args.theme is None:
            check_themes(None)  # a broken theme file is said even when none is asked for
        for extra, what in needs(args):
            require(extra, what)
        takes = TAKES.get(args.command, set())
        if "log_file" in takes:
            configure(args.log_file)
        if args.command in ("class", "serve") or ("lab" in takes and not args.lab):
            from awsview import labspec

            # Lab detection reads every profile, once a screen is up: a broken one is said here.
            labspec.load_all()
        if "prefix" in takes and args.prefix and isinstance(getattr(args, "lab", None), str):
            _prefix_of_lab(args.command, args.lab, args.prefix)
        code = run_command(args)
        sys.stdout.flush()  # a closed pipe is found here, not at exit with a traceback
        return code
    except UsageError as exc:
        print(untrusted.line(exc, limit=MAX_MESSAGE), file=sys.stderr)
        return EXIT_USAGE
    except UserError as exc:
        return fail(str(exc), exc.exit_status)
    except BrokenPipeError:
        # Whatever is still buffered would raise again at exit: it goes nowhere instead.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
    except Stopped as exc:
        return 128 + exc.signum
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the command is, as Ctrl+C raises KeyboardInterrupt."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def _signals_stop_like_ctrl_c() -> Iterator[None]:
    """A command stopped by `kill` or a closed terminal unwinds as one stopped by Ctrl+C, rather
    than dying where it stands: what it started is stopped and removed on the way out (a lab's
    step script runs in a session of its own, where the terminal's signals do not reach it, and
    would otherwise go on creating resources; its scripts folder would stay in /tmp). The status
    is the signal's, 128 + its number. A command with handlers of its own (an app's lifeline, the
    emulator, `serve`) sets them over these."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise Stopped(signum)

    previous = {signum: signal.signal(signum, stop) for signum in lifeline.SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def _prefix_of_lab(command: str, lab: str, prefix: str) -> None:
    """--lab names its resources itself: a --prefix beside it must be the lab's, never dropped
    without a word."""
    from awsview import labspec

    named = labspec.load(lab).prefix
    if prefix != named:
        raise UsageError(
            f"awsview {command}: --prefix {prefix} does not go with --lab {lab}, whose "
            f"resources are named {named}*: give one or the other"
        )


def needs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The extras this command line needs: (extra, what needs it)."""
    found = []
    if args.command in ("emulator", "demo", "docs"):
        found.append(("emulator", f"awsview {args.command}"))
    if args.command == "serve":
        found.append(("serve", "awsview serve"))
    if (args.command == "screenshot" and str(args.output).lower().endswith(".png")) or (
        args.command == "docs" and args.format == "png"
    ):
        found.append(("png", f"awsview {args.command} in PNG"))
    return found


def run_command(args: argparse.Namespace) -> int:
    """The command's ``run(args)``; its module is imported only now, so that a command's
    start-up pays only for what it uses."""
    module = importlib.import_module(f"awsview.cli.{COMMANDS[args.command].module}")
    return int(module.run(args))
