"""MkDocs hook: the command-line and key reference pages, written at build time from the code.

The commands, their options and examples come from the argparse parser
(`awsview.cli.main.build_parser`, built from `awsview.cli.commands.COMMANDS`); the keys from the
apps' bindings. A new option or key is on the site without anyone editing a page, and a
renamed one cannot linger there.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from mkdocs.structure.files import File, Files
from textual.binding import Binding

CLI_PAGE = "reference/cli.md"
KEYS_PAGE = "reference/keys.md"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


def _default(action: argparse.Action) -> str:
    default = action.default
    if default in (None, False, argparse.SUPPRESS) or isinstance(action, argparse._VersionAction):
        return ""
    if isinstance(default, list | tuple):
        return ", ".join(map(str, default))
    return _code(str(default))


def _argument(action: argparse.Action) -> str:
    if not action.option_strings:
        return _code(action.metavar or action.dest)
    flags = ", ".join(action.option_strings)
    if action.nargs == 0:
        return _code(flags)
    value = action.metavar or (
        "{" + ",".join(map(str, action.choices)) + "}" if action.choices else action.dest.upper()
    )
    return _code(f"{flags} {value}")


def _table(actions: Iterable[argparse.Action]) -> list[str]:
    rows = ["| argument | default | does |", "| --- | --- | --- |"]
    for action in actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        does = action.help or ""
        if action.choices and not action.option_strings:
            does = (does + " — " if does else "") + "one of " + ", ".join(action.choices)
        rows.append(f"| {_argument(action)} | {_default(action)} | {_cell(does)} |")
    return rows


def _usage(parser: argparse.ArgumentParser) -> str:
    return " ".join(parser.format_usage().split())


def cli_reference() -> str:
    from awsview.cli.main import SHARED, TAKES, build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {choice.dest: choice.help for choice in sub._choices_actions}
    lines = [
        "# Commands and options",
        "",
        "Generated from the command line's own parser when this site is built.",
        "",
        "`awsview` with no command is `awsview watch`. The options that say where to look",
        "(`--profile`, `--region`, `--endpoint-url`), what to show (`--lab`, `--prefix`), how",
        "(`--theme`), what to keep (`--record`) and where to log (`--log-file`) mean the same",
        "before or after the command; one given to a command that does not take it is refused",
        "with one line and exit status 2 ([Exit status](exit-status.md)). Shell completion:",
        "[Completion](../guide/completion.md).",
        "",
        "| command | does |",
        "| --- | --- |",
    ]
    names = sorted(sub.choices)
    lines += [f"| [`awsview {n}`](#awsview-{n}) | {_cell(helps.get(n, ''))} |" for n in names]
    lines += ["", "## awsview", "", f"```text\n{_usage(parser)}\n```", ""]
    top = [a for a in parser._actions if not a.dest.startswith("before_")]
    lines += _table(top)
    lines += ["", "## Shared options", ""]
    lines += ["| option | does | taken by |", "| --- | --- | --- |"]
    for dest, (flag, options) in SHARED.items():
        takers = ", ".join(f"`{n}`" for n in names if dest in TAKES.get(n, ()))
        metavar = options.get("metavar", "")
        lines.append(f"| `{flag} {metavar}`".rstrip() + f" | {_cell(options['help'])} | {takers} |")
    for name in names:
        command = sub.choices[name]
        said = _cell(helps.get(name, ""))
        lines += ["", f"## awsview {name}", "", said[:1].upper() + said[1:] + ".", ""]
        lines += [f"```text\n{_usage(command)}\n```", ""]
        if name == "split":
            lines += [
                "Every other argument goes to the viewer in the new pane, as for",
                "[`awsview watch`](#awsview-watch).",
                "",
            ]
        elif not TAKES.get(name):
            lines += ["Takes none of the shared options.", ""]
        lines += _table(command._actions)
        if command.epilog:
            lines += ["", f"```text\n{command.epilog}\n```"]
    return "\n".join(lines) + "\n"


def _keys(title: str, bindings: Iterable[Binding], presented: bool = True) -> list[str]:
    from awsview.ui.keytable import table

    return [f"## {title}", "", *table(bindings, presented=presented), ""]


def keys_reference() -> str:
    from awsview.ui.classview.learner import LearnerScreen
    from awsview.ui.classview.view import ClassApp, GridScreen
    from awsview.ui.viewer.app import viewer_bindings
    from awsview.ui.viewer.replay import ReplayApp

    lines = [
        "# Keys",
        "",
        "Generated from the apps' key bindings when this site is built. Textual's own keys",
        "(`tab` / `shift+tab`, arrows, page keys, `ctrl+p` for the command palette) work too;",
        "the [viewer's guide](../guide/viewer.md#keys) says what each key shows. A presenter",
        "screen (`awsview serve`, `watch --presenter`) lets only the keys that look around",
        "through: no quit, filter, theme or command palette. The `?` screen lists the same",
        "tables, with the keys `[keymap]` in config.toml gave",
        "([Keys of your own](../guide/viewer.md#keys-of-your-own)).",
        "",
    ]
    lines += _keys("The viewer (`awsview watch`, `demo`)", viewer_bindings())
    lines += _keys(
        "Replay (`awsview replay`), besides the viewer's", ReplayApp.BINDINGS, presented=False
    )
    lines += _keys(
        "The class view (`awsview class`)",
        [*GridScreen.BINDINGS, *LearnerScreen.BINDINGS, *ClassApp.BINDINGS],
    )
    return "\n".join(lines)


def on_files(files: Files, config: object) -> Files:
    for path, content in ((CLI_PAGE, cli_reference()), (KEYS_PAGE, keys_reference())):
        files.append(File.generated(config, path, content=content))  # type: ignore[arg-type]
    return files
