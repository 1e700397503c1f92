"""`awsview split`: the viewer in a new pane beside the current shell.

The terminal is found from the environment the shell gives us, innermost first: tmux (`TMUX`),
zellij (`ZELLIJ`), WezTerm (`WEZTERM_PANE`), kitty (`KITTY_WINDOW_ID`). Each one's own command
line opens a pane to the right running `awsview watch` with the arguments given, keeps the focus
on the shell where the CLI allows it, and the pane closes when the viewer quits: the shell pane
is left as it was. Anywhere else one line says how, and the exit status is 2.

A new pane starts from the multiplexer's environment, not the shell's, so the shell's `AWS_*`
(and XDG state) variables are handed over in a file only the user can read, which the pane
reads and deletes before the viewer starts. They never go on a command line, where any local
user could read them in the process list.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from awsview.cli.commands import COMMANDS
from awsview.model import untrusted
from awsview.model.errors import UserError

EXIT_USAGE = 2
DEFAULT_WIDTH = "50%"
TITLE = "AWS View"
CARRIED = ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "NO_COLOR")  # besides every AWS_* variable


class SplitError(UserError):
    """One line for the user; `code` is the exit status."""

    def __init__(self, message: str, code: int = EXIT_USAGE):
        super().__init__(message)
        self.message, self.code = message, code
        self.exit_status = code


@dataclass(frozen=True)
class Width:
    value: int
    percent: bool

    def __str__(self) -> str:
        return f"{self.value}%" if self.percent else str(self.value)

    def as_percent(self, columns: int) -> int:
        """Of a terminal `columns` wide, for CLIs that only take a share."""
        share = self.value if self.percent else round(100 * self.value / max(columns, 1))
        return min(max(share, 10), 90)


def parse_width(text: str) -> Width:
    """`80` (columns) or `40%`; anything else is a SplitError."""
    raw = text.strip()
    percent = raw.endswith("%")
    number = raw[:-1] if percent else raw
    if not number.isdigit():
        raise SplitError(f"--width {text!r}: give columns (80) or a share of the window (40%)")
    value = int(number)
    if percent and not 10 <= value <= 90:
        raise SplitError(f"--width {text}: a share between 10% and 90%")
    if not percent and not 10 <= value <= 1000:
        raise SplitError(f"--width {text}: between 10 and 1000 columns")
    return Width(value, percent)


def detect(environ: Mapping[str, str]) -> str | None:
    """tmux, zellij, wezterm or kitty: the terminal this shell runs in, innermost first."""
    if environ.get("TMUX"):
        return "tmux"
    if environ.get("ZELLIJ") is not None or environ.get("ZELLIJ_SESSION_NAME"):
        return "zellij"
    if environ.get("WEZTERM_PANE"):
        return "wezterm"
    if environ.get("KITTY_WINDOW_ID"):
        return "kitty"
    return None


def pane_command(viewer_args: Sequence[str], env_file: str | None) -> list[str]:
    """What runs in the new pane: this Python, this AWS View, the viewer with those arguments."""
    handover = ["--environment", env_file] if env_file else []
    return [sys.executable, "-m", "awsview", "split", "--pane", *handover, "--", *viewer_args]


def commands(
    terminal: str,
    width: Width,
    pane: Sequence[str],
    cwd: str,
    environ: Mapping[str, str],
    columns: int = 160,
) -> list[list[str]]:
    """The CLI calls that open the pane (and give the focus back to the shell), in order."""
    if terminal == "tmux":
        target = ["-t", environ["TMUX_PANE"]] if environ.get("TMUX_PANE") else []
        return [
            ["tmux", "split-window", "-h", "-d", "-l", str(width), *target, "-c", cwd, "--", *pane]
        ]
    if terminal == "zellij":  # a tiled pane's size is zellij's to choose: no width here
        return [
            [
                "zellij",
                "run",
                "--direction",
                "right",
                "--close-on-exit",
                "--cwd",
                cwd,
                "--name",
                TITLE,
                "--",
                *pane,
            ],
            ["zellij", "action", "move-focus", "left"],
        ]
    if terminal == "wezterm":
        size = ["--percent", str(width.value)] if width.percent else ["--cells", str(width.value)]
        here = environ.get("WEZTERM_PANE")
        split = [
            "wezterm",
            "cli",
            "split-pane",
            *(["--pane-id", here] if here else []),
            "--right",
            *size,
            "--cwd",
            cwd,
            "--",
            *pane,
        ]
        return [split] + ([["wezterm", "cli", "activate-pane", "--pane-id", here]] if here else [])
    if terminal == "kitty":
        to = [f"--to={environ['KITTY_LISTEN_ON']}"] if environ.get("KITTY_LISTEN_ON") else []
        return [
            [
                "kitty",
                "@",
                *to,
                "launch",
                "--location=vsplit",
                "--keep-focus",
                f"--cwd={cwd}",
                f"--title={TITLE}",
                f"--bias={width.as_percent(columns)}",
                "--",
                *pane,
            ]
        ]
    raise SplitError(f"unknown terminal {terminal!r}")


def how(viewer_args: Sequence[str]) -> str:
    """The one line said where no pane can be opened."""
    watch = shlex.join(["awsview", "watch", *viewer_args])
    return (
        f"split needs tmux, zellij, WezTerm or kitty (with remote control on); "
        f"in a terminal beside this one, run: {watch}"
    )


def carried(environ: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k.startswith("AWS_") or k in CARRIED}


def write_handover(environ: Mapping[str, str]) -> str:
    """The shell's AWS settings in a file only this user can read (mode 0600, in a 0700 dir)."""
    folder = tempfile.mkdtemp(prefix="awsview-split-")
    descriptor, path = tempfile.mkstemp(prefix="env-", suffix=".json", dir=folder)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        json.dump(carried(environ), out)
    return path


def remove_handover(path: str) -> None:
    for remove in (lambda: os.unlink(path), lambda: os.rmdir(os.path.dirname(path))):
        try:
            remove()
        except OSError:
            pass


def split(
    width_text: str,
    viewer_args: Sequence[str],
    environ: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> str:
    """Opens the pane; returns what to tell the user. Raises SplitError."""
    environ = os.environ if environ is None else environ
    width = parse_width(width_text)
    terminal = detect(environ)
    if terminal is None:
        raise SplitError(how(viewer_args))
    handover = write_handover(environ)
    try:
        columns = _columns()
        for command in commands(
            terminal,
            width,
            pane_command(viewer_args, handover),
            cwd or os.getcwd(),
            environ,
            columns,
        ):
            _call(terminal, command, viewer_args)
    except BaseException:
        remove_handover(handover)  # no pane will read it
        raise
    note = (
        "" if terminal != "zellij" or width_text == DEFAULT_WIDTH else " (zellij chose its width)"
    )
    return f"AWS View opened in a {terminal} pane on the right{note}; q there closes it"


def _columns() -> int:
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError):
        return 160


def _call(terminal: str, command: list[str], viewer_args: Sequence[str]) -> None:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError:
        raise SplitError(f"{command[0]} is not on PATH; {how(viewer_args)}", 1) from None
    except subprocess.TimeoutExpired:
        raise SplitError(f"{command[0]} did not answer within 30 s", 1) from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout or f"exit status {done.returncode}").strip().splitlines()
        hint = (
            " (kitty needs `allow_remote_control yes` in kitty.conf)" if terminal == "kitty" else ""
        )
        raise SplitError(f"{shlex.join(command[:3])} failed: {said[0] if said else ''}{hint}", 1)


# -- the command line ------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """split's own options; everything else on its line is `awsview watch`'s."""
    split = COMMANDS["split"]
    parser = argparse.ArgumentParser(
        prog="awsview split",
        allow_abbrev=False,
        description=split.description,
        epilog=f"example:\n  {split.example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    split.options(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """`awsview split …` as the dispatch hands it over: the rest of its line, untouched."""
    return main(args.argv)


def main(argv: Sequence[str]) -> int:
    """`awsview split [--width N|N%] [viewer args…]`; the viewer args are `awsview watch`'s."""
    args, viewer_args = build_parser().parse_known_args(list(argv))
    if viewer_args[:1] == ["--"]:
        viewer_args = viewer_args[1:]
    from awsview.cli.common import MAX_MESSAGE
    from awsview.cli.parser import UsageError, parse

    try:
        viewer = parse(["watch", *viewer_args])  # a mistake is said here, not in a pane that closes
    except UsageError as exc:  # already says `awsview <command>: …`
        print(untrusted.line(exc, limit=MAX_MESSAGE), file=sys.stderr)
        return 2
    except SystemExit as stop:  # --help, --version
        return int(stop.code or 0)
    from awsview.aws.endpoints import check_endpoint_url

    if viewer.endpoint_url is not None:
        check_endpoint_url(viewer.endpoint_url)  # ConfigError, said by the command line
    print(split(args.width, viewer_args), flush=True)
    return 0


def pane_main(argv: Sequence[str], viewer: Callable[[list[str]], int]) -> int:
    """Inside the new pane: take the shell's settings over, then run the viewer. If it stops with
    an error, the pane stays until Enter so the error can be read."""
    parser = argparse.ArgumentParser(prog="awsview split --pane")
    parser.add_argument("--pane", action="store_true")
    parser.add_argument("--environment")
    parser.add_argument("viewer_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(list(argv))
    viewer_args = args.viewer_args[1:] if args.viewer_args[:1] == ["--"] else args.viewer_args
    if args.environment:
        try:
            handed = json.loads(Path(args.environment).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            handed = {}
        remove_handover(args.environment)
        os.environ.update({str(k): str(v) for k, v in handed.items()})
    code = viewer(["watch", *viewer_args])
    if code not in (0, 130) and sys.stdin.isatty():
        try:
            input(f"\nawsview watch stopped (exit {code}); press Enter to close this pane ")
        except (EOFError, KeyboardInterrupt):
            pass
    return code
