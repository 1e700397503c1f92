"""The ``awsview`` command line, parsed.

Options that name where to look (``--profile``, ``--region``, ``--endpoint-url``), what to show
(``--lab``, ``--prefix``), how (``--theme``) and where to log (``--log-file``) mean the same
before or after the command: ``awsview --profile lab dump`` is ``awsview dump --profile lab``.
Each command lists the ones it takes (``awsview.cli.commands``); one given where it makes no
sense is refused, wherever it stands. Every refusal is one line and exit status 2, with a
suggestion when the word is close to one that exists.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from awsview.cli.commands import COMMANDS
from awsview.cli.options import theme
from awsview.model.errors import UserError

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
        {
            "metavar": "PREFIX",
            "help": "only resources named PREFIX* (a lab only if its prefix is PREFIX)",
        },
    ),
    "theme": (
        "--theme",
        {
            "type": theme,
            "metavar": "THEME",
            "help": (
                "dark (default), light, high-contrast, docs, one of yours in"
                " ~/.config/awsview/themes, or any Textual theme"
            ),
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
# Which shared options each command takes; split hands its whole line to the viewer's parser.
TAKES: dict[str, set[str]] = {
    name: set(command.takes) for name, command in COMMANDS.items() if name != "split"
}
DEFAULT = {"prefix": ""}
MANY_LABS = {"demo"}
# Options that take the next argument as their value even when it starts with '-'.
ANY_VALUE = {"--token"}
_CHOICE = re.compile(
    r"argument (?P<what>[^:]+): invalid choice: '(?P<word>[^']*)' \(choose from (?P<known>.*)\)$"
)


class UsageError(UserError):
    """A command line that cannot mean anything; one line, exit status 2."""


def did_you_mean(word: str, known: Sequence[str]) -> str:
    """`` (did you mean X?)`` when ``word`` is close to one of ``known``, else nothing."""
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


class _Parser(argparse.ArgumentParser):
    """argparse, but a refusal is one line (not the usage block), raised rather than exited on,
    so that the caller decides how to say it; it keeps what it was given (``declared``, the
    ``commands``) for completion and hints, which argparse holds only in private members."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.declared: list[argparse.Action] = []  # argparse's own __init__ adds -h through it
        super().__init__(*args, **kwargs)
        self.declared = []  # -h left out
        self.commands: dict[str, argparse.ArgumentParser] = {}

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.declared.append(action)
        return action

    def error(self, message: str) -> NoReturn:
        unknown = _CHOICE.match(message)
        if unknown and unknown["what"] == "command":  # every command is in --help: one is enough
            word = unknown["word"]
            raise UsageError(
                f"{self.prog}: unknown command {word!r}{did_you_mean(word, list(COMMANDS))} "
                f"(see {self.prog} --help)"
            )
        if unknown:
            known = re.findall(r"'([^']*)'", unknown["known"])
            message += did_you_mean(unknown["word"], known)
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def _add_shared(parser: argparse.ArgumentParser, names: set[str], prefix: str = "") -> None:
    for name, (flag, options) in SHARED.items():
        if name in names:
            parser.add_argument(flag, dest=prefix + name, default=argparse.SUPPRESS, **options)


def versions() -> str:
    """AWS View's version and those of what it stands on, for a bug report."""
    from importlib.metadata import PackageNotFoundError, version

    from awsview import __version__

    def of(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "not installed"

    python = ".".join(map(str, sys.version_info[:3]))
    return (
        f"awsview {__version__} (Textual {of('textual')}, botocore {of('botocore')}, "
        f"Python {python})"
    )


class _Version(argparse.Action):
    """``--version``, its packages looked up only when it is asked for: every other command
    line pays nothing for it."""

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        print(versions())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The whole command line, every command from ``COMMANDS``."""
    parser = _Parser(
        prog="awsview",
        description="A live, read-only view of an AWS lab's real resources.",
        epilog="With no command: awsview watch.",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="show the versions and exit")
    # Given before the command: kept apart (before_*) and merged in parse(), so a command's
    # own unset option never overwrites one given before it.
    _add_shared(parser, set(SHARED), prefix="before_")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    for name, command in COMMANDS.items():
        made = sub.add_parser(
            name,
            help=command.help,
            description=command.description or command.help[:1].upper() + command.help[1:] + ".",
            epilog=command.epilog or f"example:\n  {command.example}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _add_shared(made, set(command.takes))
        command.options(made)
        parser.commands[name] = made
    return parser


def command_parser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The parser of one command, out of the whole command line's (``build_parser``'s)."""
    return commands(parser)[name]


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's parser, by name, in the order they were declared."""
    assert isinstance(parser, _Parser), "a parser made by build_parser()"
    return parser.commands


def declared(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The arguments a parser of ``build_parser`` was given (its own ``-h`` left out)."""
    assert isinstance(parser, _Parser), "a parser made by build_parser()"
    return parser.declared


def option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """Every option string a parser of ``build_parser`` knows."""
    return [o for action in declared(parser) for o in action.option_strings]


def _unknown(argv: Sequence[str], command: str, extra: list[str]) -> UsageError:
    """What an argument the command does not know means: an option of the command given before
    it, a shared option it does not take, or a slip of the keyboard."""
    flag = extra[0].split("=", 1)[0]
    if any(flag == f for f, _ in SHARED.values()):
        return UsageError(
            f"awsview {command}: {flag} does not apply here (see awsview {command} --help)"
        )
    own = option_strings(command_parser(build_parser(), command))
    if flag in own and command in argv and list(argv).index(flag) < list(argv).index(command):
        return UsageError(
            f"awsview {command}: {flag} belongs after the command: awsview {command} {flag}"
        )
    known = [o for o in own if o.startswith("--")] + ["--version"]
    hint = did_you_mean(flag, known) if flag[:2] == "--" else ""
    return UsageError(
        f"awsview {command}: unrecognized arguments: {' '.join(extra)}{hint} "
        f"(see awsview {command} --help)"
    )


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
    argv = list(sys.argv[1:] if argv is None else argv)
    at = _split_at(argv)
    if at is not None:  # the rest of its line goes to the viewer, options included: split's own
        # parser reads it; options given before `split` are the viewer's too
        return argparse.Namespace(command="split", argv=argv[at + 1 :] + argv[:at])
    argv = _values_joined(argv)
    args, extra = build_parser().parse_known_args(argv)
    command = args.command or "watch"
    args.command = command
    if extra:
        raise _unknown(argv, command, extra)
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
            value = given[0] if given else COMMANDS[command].defaults.get(name, DEFAULT.get(name))
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
