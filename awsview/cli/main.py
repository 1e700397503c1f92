"""The ``awsview`` command line.

Options that name where to look (``--profile``, ``--region``, ``--endpoint-url``), what to show
(``--lab``, ``--prefix``), how (``--theme``) and where to log (``--log-file``) mean the same
before or after the command: ``awsview --profile lab dump`` is ``awsview dump --profile lab``.
Each command lists the ones it takes (``TAKES``); one given where it makes no sense is refused,
wherever it stands. Every refusal is one line and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from awsview.ui import lifeline  # noqa: F401  first: it notes the parent before start-up ends

# isort: split
from awsview.cli.common import EXIT_INTERRUPTED, EXIT_USAGE, MAX_MESSAGE, fail
from awsview.model import untrusted

_UNSET = object()

# The options shared by the commands: dest -> (flag, argparse keywords).
SHARED: dict[str, tuple[str, dict[str, Any]]] = {
    "profile": (
        "--profile",
        {
            "metavar": "NAME",
            "help": "AWS profile from the shared config (default: AWS_PROFILE, else default)",
        },
    ),
    "region": (
        "--region",
        {
            "metavar": "REGION",
            "help": "AWS region (default: AWS_REGION, AWS_DEFAULT_REGION, the profile's region)",
        },
    ),
    "endpoint_url": (
        "--endpoint-url",
        {
            "metavar": "URL",
            "help": "AWS-compatible endpoint (default: as the SDK resolves it: "
            "AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, the profile's)",
        },
    ),
    "lab": (
        "--lab",
        {
            "action": "append",
            "metavar": "LAB",
            "help": "a lab (a name from `awsview lab list`, or a path to a lab folder); "
            "default: detected",
        },
    ),
    "prefix": (
        "--prefix",
        {"metavar": "PREFIX", "help": "with no known lab: only resources named PREFIX*"},
    ),
    "theme": (
        "--theme",
        {
            "metavar": "THEME",
            "help": "dark (default), light, high-contrast, docs, or any Textual theme",
        },
    ),
    "record": (
        "--record",
        {
            "type": Path,
            "metavar": "FILE",
            "help": "append every change of what is shown to FILE (a new file), for replay",
        },
    ),
    "log_file": (
        "--log-file",
        {
            "metavar": "FILE",
            "help": "record every failed call, retry and throttle with its API and time "
            "(default: $AWSVIEW_LOG)",
        },
    ),
}
_WHERE = {"profile", "region", "endpoint_url"}
_VIEW = _WHERE | {"lab", "prefix"}
# Which shared options each command takes.
TAKES: dict[str, set[str]] = {
    "watch": _VIEW | {"theme", "log_file", "record"},
    "dump": _VIEW | {"log_file"},
    "screenshot": _VIEW | {"theme", "log_file"},
    "serve": _VIEW | {"theme", "log_file", "record"},
    "lab": set(_WHERE),
    "demo": {"lab", "theme", "log_file"},
    "docs": {"theme"},
    "class": {"theme", "log_file", "record"},
    "replay": {"theme"},
    "doctor": _VIEW | {"log_file"},
    "verify": _VIEW,
    "emulator": set(),
    "iam-policy": {"profile", "region", "lab", "prefix"},
}
# Defaults that are not None; "lab" takes many values only where the command says so.
DEFAULTS: dict[str, dict[str, Any]] = {
    "screenshot": {"theme": "docs"},
    "docs": {"theme": "docs"},
}
DEFAULT = {"prefix": ""}
LANG_FLAG = "--lang"
LANG_HELP: dict = {
    "metavar": "LANG",
    "help": "a lab folder's language for step titles and checkpoint texts (en, ja …); "
    "default: LANG's when the lab has it, else en",
}
MANY_LABS = {"demo"}
# Options that take the next argument as their value even when it starts with '-'.
ANY_VALUE = {"--token"}


EMULATOR_HELP = """\
Run the embedded lab emulator: moto server, real Lambda code, the write-decision journal.
It runs the code it is sent as you, so it answers only its own clients:

  - it listens on loopback (127.0.0.1) unless --host and --allow-remote say otherwise;
  - it answers only to the host names it listens on (no DNS rebinding) and refuses requests
    that web pages send (an Origin header), except from origins given with --cors-origin;
  - off loopback, a token is mandatory (--token or AWSVIEW_TOKEN, 12+ characters) and every
    client uses it as its access key id: AWS_ACCESS_KEY_ID=<token> (the AWS CLI, boto3 and
    awsview sign with it; the secret key can be anything);
  - only the services the labs use are on (DynamoDB and its streams, SQS, Step Functions,
    Lambda, CloudWatch Logs, IAM, STS); --enable-service switches on another;
  - CloudFormation templates cannot construct Python objects."""
EMULATOR_EXAMPLE = """\
example, for a class on the local network:
  AWSVIEW_TOKEN=$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))') \\
    awsview emulator --host 0.0.0.0 --allow-remote
  learners: export AWS_ENDPOINT_URL=http://<this machine>:5000 AWS_ACCESS_KEY_ID=<token> \\
    AWS_SECRET_ACCESS_KEY=anything AWS_DEFAULT_REGION=us-east-1"""


class UsageError(Exception):
    """A command line that cannot mean anything; one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a refusal is one line (not the usage block), raised rather than exited on,
    so that the caller decides how to say it."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def _add_shared(parser: argparse.ArgumentParser, names: set[str], prefix: str = "") -> None:
    for name, (flag, options) in SHARED.items():
        if name in names:
            parser.add_argument(flag, dest=prefix + name, default=argparse.SUPPRESS, **options)


def build_parser() -> argparse.ArgumentParser:
    from awsview import __version__

    parser = _Parser(
        prog="awsview",
        description="A live, read-only view of an AWS lab's real resources.",
        epilog="With no command: awsview watch.",
    )
    parser.add_argument("--version", action="version", version=f"awsview {__version__}")
    # Given before the command: kept apart (before_*) and merged in parse(), so a command's
    # own unset option never overwrites one given before it.
    _add_shared(parser, set(SHARED), prefix="before_")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    def command(name: str, **options: Any) -> argparse.ArgumentParser:
        made = sub.add_parser(name, **options)
        _add_shared(made, TAKES[name])
        return made

    emu = command(
        "emulator",
        help="run the embedded lab emulator (a local AWS endpoint)",
        description=EMULATOR_HELP,
        epilog=EMULATOR_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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

    lab = command(
        "lab",
        help="set up, play, check or clean a lab on an endpoint",
        description="A lab is a name (see `awsview lab list`) or a path to a lab folder. "
        "check plays it on a fresh embedded emulator (or --endpoint-url) and checks each step.",
    )
    lab.add_argument("action", choices=["setup", "play", "check", "clean", "list"])
    lab.add_argument("name", nargs="?", metavar="LAB", help="a lab name or a lab folder")
    lab.add_argument("--until", help="stop after this step (number or key)")
    lab.add_argument(
        "--real-account",
        action="store_true",
        help="allow setup, play and clean on an endpoint that is not local (a real AWS account)",
    )
    lab.add_argument("--junit", type=Path, metavar="FILE", help="check: a JUnit XML report")
    lab.add_argument(LANG_FLAG, **LANG_HELP)
    lab.add_argument(
        "--twice", action="store_true", help="check: play the lab a second time and check it too"
    )

    verify = command(
        "verify",
        help="exit 0 when AWS View's checkpoints of a lab step hold (read-only), else 1",
    )
    verify.add_argument("step", metavar="STEP", help="the step's number or key")
    verify.add_argument(LANG_FLAG, **LANG_HELP)

    demo = command("demo", help="start the emulator, open the viewer and play the labs in it")
    demo.add_argument(
        "--step-seconds",
        type=float,
        default=8.0,
        help="countdown before each step (space pauses it, n skips it)",
    )

    dump = command("dump", help="poll once and print what the panels show")
    dump.add_argument("--json", action="store_true", help="machine-readable output")
    dump.add_argument(
        "--graph",
        action="store_true",
        help="draw each state machine and each execution on it instead of the panels",
    )
    dump.add_argument("--width", type=int, default=60, help="graph width in columns (default 60)")
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

    shot = command("screenshot", help="save one screenshot of the viewer (SVG or PNG)")
    shot.add_argument("--size", default="120x40", help="columns x rows (default 120x40)")
    shot.add_argument("-o", "--output", type=Path, required=True, help="FILE.svg or FILE.png")

    docs = command("docs", help="play a lab on a fresh emulator, one screenshot per step")
    docs.add_argument("docs_lab", metavar="lab", nargs="?", help="ev04, ev05 or q05")
    docs.add_argument(
        "--from",
        dest="source",
        type=Path,
        metavar="FILE",
        help="draw the screenshots from a recording instead (one per checkpoint change)",
    )
    docs.add_argument("--learner", help="with --from on a class recording: whose viewer")
    docs.add_argument(
        "-o", "--output", type=Path, required=True, help="directory for the images and index.md"
    )
    docs.add_argument("--size", default="120x40", help="columns x rows (default 120x40)")
    docs.add_argument(
        "--format", choices=["svg", "png"], default="svg", help="image format (default svg)"
    )

    serve = command("serve", help="the viewer in a browser, as a read-only presenter screen")
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

    klass = command("class", help="the class view in the terminal: every learner's progress")
    klass.add_argument("roster", type=Path, metavar="FILE", help="TOML file of [[learner]] tables")
    klass.add_argument("--presenter", action="store_true", help=argparse.SUPPRESS)

    replay = command("replay", help="open the viewer on a recording, with a time line")
    replay.add_argument("source", type=Path, metavar="FILE", help="made by --record")
    replay.add_argument(
        "--at", metavar="TIME", help="start here: start (default), end, HH:MM:SS, +MM:SS"
    )
    replay.add_argument("--learner", help="a class recording: whose viewer")

    doctor = command("doctor", help="probe the endpoint once: what each panel can show exactly")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")

    # `awsview split …` is parsed by awsview.cli.split itself (see main): listed here for the help.
    sub.add_parser(
        "split", help="open the viewer in a pane beside this shell (tmux, zellij, WezTerm, kitty)"
    )

    policy = command(
        "iam-policy", help="print the least-privilege read-only IAM policy the viewer needs"
    )
    policy.add_argument(
        "--account", default="*", help="account id in the resource ARNs (default: any, *)"
    )

    watch = command("watch", help="open the viewer (also what `awsview` alone does)")
    watch.add_argument(
        "--presenter",
        action="store_true",
        help="read-only kiosk: navigation only, follows the newest execution and decision",
    )
    return parser


def _values_joined(argv: Sequence[str]) -> list[str]:
    """``--token VALUE`` as ``--token=VALUE``, whatever VALUE is: argparse takes a value that
    starts with '-' for an option (a random URL-safe token does one time in 32)."""
    joined: list[str] = []
    rest = iter(argv)
    for arg in rest:
        if arg == "--":  # the rest are arguments, never options
            return [*joined, arg, *rest]
        value = next(rest, None) if arg in ANY_VALUE else None
        joined.append(arg if value is None else f"{arg}={value}")
    return joined


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line as one namespace: every shared option the command takes is set (given
    before the command, after it, or its default); raises UsageError."""
    argv = _values_joined(sys.argv[1:] if argv is None else argv)
    args, extra = build_parser().parse_known_args(argv)
    command = args.command or "watch"
    args.command = command
    if extra:
        flag = extra[0].split("=", 1)[0]
        if any(flag == f for f, _ in SHARED.values()):
            raise UsageError(
                f"awsview {command}: {flag} does not apply here (see awsview {command} --help)"
            )
        raise UsageError(
            f"awsview {command}: unrecognized arguments: {' '.join(extra)} "
            f"(see awsview {command} --help)"
        )
    for name, (flag, _) in SHARED.items():
        before = getattr(args, f"before_{name}", _UNSET)
        after = getattr(args, name, _UNSET)
        if hasattr(args, f"before_{name}"):
            delattr(args, f"before_{name}")
        given = [v for v in (before, after) if v is not _UNSET]
        if given and name not in TAKES[command]:
            raise UsageError(
                f"awsview {command}: {flag} does not apply here (see awsview {command} --help)"
            )
        if name == "lab":
            value = [lab for labs in given for lab in labs] or None
            if value is not None and command not in MANY_LABS:
                if len(set(value)) > 1:
                    raise UsageError(
                        f"awsview {command}: {flag} given twice "
                        f"({', '.join(value)}): one lab at a time"
                    )
                value = value[0]
        elif len(given) == 2 and before != after:
            raise UsageError(f"awsview {command}: {flag} given twice ({before} and {after})")
        else:
            value = given[0] if given else DEFAULTS.get(command, {}).get(name, DEFAULT.get(name))
        setattr(args, name, value)
    if command == "docs":
        args.lab = args.docs_lab
    args.presenter = getattr(args, "presenter", False)
    return args


def _split_at(argv: list[str]) -> int | None:
    """Where `split` stands when it is the command (only shared options before it), else None."""
    flags = {flag for flag, _ in SHARED.values()}
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "split":
            return index
        if token in flags:
            index += 2
        elif token.split("=", 1)[0] in flags:
            index += 1
        else:
            return None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    at = _split_at(argv)
    if at is not None:  # the rest of its line goes to the viewer, options included
        # Through the dispatch table like every command: split imports this module (it runs the
        # viewer in its pane), this one reaches split only by name.
        split = importlib.import_module("awsview.cli.split").main
        return split(
            argv[at + 1 :] + argv[:at]
        )  # options given before `split` are the viewer's too
    try:
        args = parse(argv)
    except UsageError as exc:  # already says `awsview <command>: …`
        print(untrusted.line(exc, limit=MAX_MESSAGE), file=sys.stderr)
        return EXIT_USAGE
    from awsview.aws.log import LogFileError, configure
    from awsview.aws.session import ConfigError
    from awsview.cli.extras import MissingExtra, require
    from awsview.model.textfile import BadFile

    try:
        for extra, what in needs(args):
            require(extra, what)
        if "log_file" in TAKES[args.command]:
            configure(args.log_file)
        if args.command in ("class", "serve") or ("lab" in TAKES[args.command] and not args.lab):
            from awsview import profiles

            # Lab detection reads every profile, once a screen is up: a broken one is said here.
            profiles.load_all()
        return run_command(args)
    except (LogFileError, MissingExtra) as exc:
        return fail(str(exc), EXIT_USAGE)
    except (ConfigError, BadFile) as exc:  # BadFile: a theme, lab profile or roster
        return fail(str(exc), EXIT_USAGE)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


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


# Each command is a module of this package with ``run(args) -> int``, imported when it runs: a
# command's start-up pays only for what it uses.
COMMANDS = {
    "emulator": "emulator",
    "lab": "lab",
    "demo": "demo",
    "dump": "dump",
    "screenshot": "screenshot",
    "docs": "docs",
    "serve": "serve",
    "class": "classview",
    "watch": "watch",
    "iam-policy": "iam_policy",
    "replay": "replay",
    "doctor": "doctor",
    "verify": "verify",
}


def run_command(args: argparse.Namespace) -> int:
    module = importlib.import_module(f"awsview.cli.{COMMANDS[args.command]}")
    return module.run(args)
