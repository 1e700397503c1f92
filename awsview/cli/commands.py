"""Every command, declared once: what it does, an example, the shared options it takes and its
own. The parser (``awsview.cli.parser``), the dispatch (``awsview.cli.main``), the shell
completion and the reference pages are all read from ``COMMANDS``; a new command is one entry
here and a module of this package with ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from awsview.cli.options import SETTLE, screen_size, seconds
from awsview.cli.texts import EMULATOR_EXAMPLE, EMULATOR_HELP

_WHERE = frozenset({"profile", "region", "endpoint_url"})
_VIEW = _WHERE | {"lab", "prefix"}


def _nothing(parser: argparse.ArgumentParser) -> None:
    """A command with no option of its own."""


@dataclass(frozen=True)
class Command:
    """One command: its module (``awsview.cli.<module>.run``), one line of help, an example."""

    module: str
    help: str
    example: str
    takes: frozenset[str] = frozenset()
    options: Callable[[argparse.ArgumentParser], None] = _nothing
    defaults: dict[str, Any] = field(default_factory=dict)  # shared options' own defaults
    description: str = ""  # more than the help line, where one line is not enough
    epilog: str = ""  # more than the example, where one is not enough


def _emulator(emu: argparse.ArgumentParser) -> None:
    emu.add_argument(
        "--host",
        default="127.0.0.1",
        help="bind address (default loopback); any other needs --allow-remote and a token",
    )
    emu.add_argument("--port", type=int, default=5000, help="0 picks a free port")
    emu.add_argument("--state-dir", type=Path, help="where the journal and logs live")
    emu.add_argument(
        "--allow-remote",
        action="store_true",
        help="accept a --host other than loopback: other machines can then run code here",
    )
    emu.add_argument(
        "--token",
        help="off loopback, the access key id every client must use (12+ letters, digits, - or "
        "_; default: $AWSVIEW_TOKEN, which keeps it out of ps)",
    )
    emu.add_argument(
        "--host-name",
        action="append",
        default=[],
        metavar="NAME",
        help="another name clients reach this machine by (a Host header to accept); repeatable",
    )
    emu.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="URL",
        help="a web page origin allowed to call the emulator, e.g. http://localhost:8080; "
        "repeatable (default: none)",
    )
    emu.add_argument(
        "--enable-service",
        action="append",
        default=[],
        metavar="NAME",
        help="switch on a service the labs do not use (cloudformation, s3, ...; comma-separated "
        "or repeated; 'all' for every one)",
    )


def _lab(lab: argparse.ArgumentParser) -> None:
    lab.add_argument("action", choices=["setup", "play", "check", "clean", "list"])
    lab.add_argument("name", nargs="?", metavar="LAB", help="a lab name or a lab folder")
    lab.add_argument("--until", help="stop after this step (number or key)")
    lab.add_argument(
        "--real-account",
        action="store_true",
        help="allow setup, play and clean on an endpoint that is not local (a real AWS account)",
    )
    lab.add_argument("--junit", type=Path, metavar="FILE", help="check: a JUnit XML report")
    _lang(lab)
    lab.add_argument(
        "--twice", action="store_true", help="check: play the lab a second time and check it too"
    )
    lab.add_argument(
        "--settle",
        type=seconds,
        metavar="SECONDS",
        help=f"check: how long a step's checkpoints and verify scripts may take to pass before "
        f"the step fails (default {SETTLE:.0f})",
    )


def _verify(verify: argparse.ArgumentParser) -> None:
    verify.add_argument("step", metavar="STEP", help="the step's number or key")
    _lang(verify)


def _lang(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lang",
        metavar="LANG",
        help="a lab folder's language for step titles and checkpoint texts (en, ja …); "
        "default: LANG's when the lab has it, else en",
    )


def _demo(demo: argparse.ArgumentParser) -> None:
    demo.add_argument(
        "--step-seconds",
        type=float,
        default=8.0,
        help="countdown before each step (space pauses it, n skips it)",
    )


def _dump(dump: argparse.ArgumentParser) -> None:
    dump.add_argument("--json", action="store_true", help="machine-readable output")
    dump.add_argument(
        "--graph",
        action="store_true",
        help="draw each state machine and each execution on it instead of the panels",
    )
    dump.add_argument(
        "--width",
        type=int,
        metavar="N",
        help=(
            "fit the panels to N columns (default: COLUMNS or the terminal; on a pipe, or with"
            " 0, lines are as long as their cells); with --graph, the graph width (default 60)"
        ),
    )
    dump.add_argument(
        "--from",
        dest="source",
        type=Path,
        metavar="FILE",
        help="print what a recording showed instead of polling",
    )
    dump.add_argument(
        "--at", metavar="TIME", help="with --from: end (default), start, HH:MM:SS, +MM:SS, -MM:SS"
    )
    dump.add_argument("--learner", help="with --from on a class recording: whose viewer")
    dump.add_argument(
        "--all-runs",
        action="store_true",
        help="write decisions and verdicts of every run of the lab, not just the current one",
    )


def _size(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--size", type=screen_size, default="120x40", help="columns x rows (default 120x40)"
    )


def _screenshot(shot: argparse.ArgumentParser) -> None:
    _size(shot)
    shot.add_argument("-o", "--output", type=Path, required=True, help="FILE.svg or FILE.png")


def _docs(docs: argparse.ArgumentParser) -> None:
    docs.add_argument(
        "docs_lab",
        metavar="LAB",
        nargs="?",
        help="a lab folder (its screenshots and links are written into it), or a lab's name",
    )
    docs.add_argument(
        "--from",
        dest="source",
        type=Path,
        metavar="FILE",
        help="draw the screenshots from a recording instead (one per checkpoint change)",
    )
    docs.add_argument("--learner", help="with --from on a class recording: whose viewer")
    docs.add_argument(
        "-o",
        "--output",
        type=Path,
        help="a lab: copy it into this directory and shoot the copy (required for a built-in "
        "lab); --from: the directory for the images and index.md",
    )
    _lang(docs)
    _size(docs)
    docs.add_argument(
        "--format", choices=["svg", "png"], default="svg", help="image format (default svg)"
    )


def _serve(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default loopback)")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--token",
        help="required by every browser; mandatory off loopback (12+ characters; "
        "default: $AWSVIEW_TOKEN, which keeps it out of ps)",
    )
    serve.add_argument(
        "--class",
        dest="roster",
        type=Path,
        metavar="FILE",
        help="serve the class view of the learners listed in FILE instead",
    )
    serve.add_argument("--font-size", type=int, default=18, help="browser font size (default 18)")
    serve.add_argument(
        "--max-sessions",
        type=int,
        default=4,
        metavar="N",
        help="browser tabs served at once, each a viewer process (default 4)",
    )


def _class(klass: argparse.ArgumentParser) -> None:
    klass.add_argument("roster", type=Path, metavar="FILE", help="TOML file of [[learner]] tables")
    klass.add_argument("--presenter", action="store_true", help=argparse.SUPPRESS)


def _replay(replay: argparse.ArgumentParser) -> None:
    replay.add_argument("source", type=Path, metavar="FILE", help="made by --record")
    replay.add_argument(
        "--at", metavar="TIME", help="start here: start (default), end, HH:MM:SS, +MM:SS"
    )
    replay.add_argument("--learner", help="a class recording: whose viewer")


def _doctor(doctor: argparse.ArgumentParser) -> None:
    doctor.add_argument("--json", action="store_true", help="machine-readable output")


def split_options(split: argparse.ArgumentParser) -> None:
    """split's own options; everything else on its line is `awsview watch`'s."""
    split.add_argument(
        "--width", default="50%", help="columns (80) or a share (40%%); default 50%%"
    )


def _iam_policy(policy: argparse.ArgumentParser) -> None:
    policy.add_argument(
        "--account", default="*", help="account id in the resource ARNs (default: any, *)"
    )


def _watch(watch: argparse.ArgumentParser) -> None:
    watch.add_argument(
        "--presenter",
        action="store_true",
        help="read-only kiosk: navigation only, follows the newest execution and decision",
    )


def _completion(completion: argparse.ArgumentParser) -> None:
    completion.add_argument("shell", choices=["bash", "zsh", "fish"], help="the shell to complete")


COMMANDS: dict[str, Command] = {
    "emulator": Command(
        "emulator",
        "run the embedded lab emulator (a local AWS endpoint)",
        "awsview emulator --port 5000",
        options=_emulator,
        description=EMULATOR_HELP,
        epilog=EMULATOR_EXAMPLE,
    ),
    "lab": Command(
        "lab",
        "set up, play, check or clean a lab on an endpoint",
        "awsview lab check ./my-lab --twice",
        _WHERE,
        _lab,
        description="A lab is a name (see `awsview lab list`) or a path to a lab folder. "
        "check plays it on a fresh embedded emulator (or --endpoint-url) and checks each step.",
    ),
    "verify": Command(
        "verify",
        "exit 0 when AWS View's checkpoints of a lab step hold (read-only), else 1",
        "awsview verify 2 --lab ./my-lab",
        _VIEW,
        _verify,
    ),
    "demo": Command(
        "demo",
        "start the emulator, open the viewer and play the labs in it",
        "awsview demo --lab ev04",
        frozenset({"lab", "theme", "log_file"}),
        _demo,
    ),
    "dump": Command(
        "dump",
        "poll once and print what the panels show",
        "awsview dump --json --endpoint-url http://127.0.0.1:5000",
        _VIEW | {"log_file"},
        _dump,
    ),
    "screenshot": Command(
        "screenshot",
        "save one screenshot of the viewer (SVG or PNG)",
        "awsview screenshot --lab q05 --size 120x40 -o viewer.svg",
        _VIEW | {"theme", "log_file"},
        _screenshot,
        {"theme": "docs"},
    ),
    "docs": Command(
        "docs",
        "play a lab folder, its screenshots into assets/ and links into its step texts",
        "awsview docs ./mylab",
        frozenset({"theme", "endpoint_url", "region"}),
        _docs,
        {"theme": "docs"},
    ),
    "serve": Command(
        "serve",
        "the viewer in a browser, as a read-only presenter screen",
        "awsview serve --lab ev04 --port 8000",
        _VIEW | {"theme", "log_file", "record"},
        _serve,
    ),
    "class": Command(
        "classview",
        "the class view in the terminal: every learner's progress",
        "awsview class roster.toml",
        frozenset({"theme", "log_file", "record"}),
        _class,
    ),
    "replay": Command(
        "replay",
        "open the viewer on a recording, with a time line",
        "awsview replay session.awsrec --at +02:00",
        frozenset({"theme"}),
        _replay,
    ),
    "doctor": Command(
        "doctor",
        "probe the endpoint once: what each panel can show exactly",
        "awsview doctor --profile lab",
        _VIEW | {"log_file"},
        _doctor,
    ),
    "split": Command(
        "split",
        "open the viewer in a pane beside this shell (tmux, zellij, WezTerm, kitty)",
        "awsview split --width 40% --lab q05",
        options=split_options,
        description="open the viewer in a pane beside this shell (tmux, zellij, WezTerm or "
        "kitty); any other argument goes to the viewer, as for `awsview watch`",
    ),
    "iam-policy": Command(
        "iam_policy",
        "print the least-privilege read-only IAM policy the viewer needs",
        "awsview iam-policy --lab ev04 --account 123456789012",
        frozenset({"profile", "region", "lab", "prefix"}),
        _iam_policy,
    ),
    "completion": Command(
        "completion",
        "print the shell completion script (bash, zsh or fish)",
        'eval "$(awsview completion bash)"',
        options=_completion,
    ),
    "watch": Command(
        "watch",
        "open the viewer (also what `awsview` alone does)",
        "awsview watch --profile lab --region eu-west-1",
        _VIEW | {"theme", "log_file", "record"},
        _watch,
    ),
}
