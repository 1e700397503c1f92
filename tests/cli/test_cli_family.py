"""The command line as one family: one error base said once, commands declared once, shared
option types parsed by the parser, help with an example, suggestions, a quiet broken pipe, the
versions, and shell completion written from the parser."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from awsview.cli.main import main
from tests.support.cli import awsview_here

CLI = Path(__file__).resolve().parents[2] / "awsview" / "cli"


def test_every_user_facing_error_derives_from_one_base_with_its_exit_status(tmp_path):
    from awsview.access import AccessError
    from awsview.aws.errors import ConfigError
    from awsview.aws.log import LogFileError
    from awsview.aws.policy import PolicyError
    from awsview.capture.docshots import DocsError
    from awsview.capture.screenshot import ScreenshotError
    from awsview.classroom.monitor import RosterError
    from awsview.cli.extras import MissingExtra
    from awsview.cli.main import UsageError
    from awsview.cli.split import SplitError
    from awsview.emulator.server import EmulatorError
    from awsview.labs.definition import LabError, UnknownLab
    from awsview.labspec import SpecError, UnknownLabSpec
    from awsview.model.errors import UserError
    from awsview.model.textfile import BadFile
    from awsview.polling.bootstrap import PreflightError
    from awsview.recording.file import LearnerError, RecordingError
    from awsview.recording.moments import MomentError
    from awsview.ui.themes import ThemeError

    usage = [AccessError, ConfigError, LogFileError, PolicyError, MissingExtra, UsageError]
    usage += [EmulatorError, UnknownLab, BadFile, RosterError, MomentError, LearnerError]
    usage += [SpecError, UnknownLabSpec, ThemeError]
    for kind in usage:
        assert issubclass(kind, UserError) and kind.exit_status == 2, kind
    for kind in (DocsError, ScreenshotError, LabError, RecordingError):
        assert issubclass(kind, UserError) and kind.exit_status == 1, kind
    assert PreflightError("down", kind="network").exit_status == 1
    assert PreflightError("refused", kind="auth").exit_status == 2
    assert SplitError("no tmux", 1).exit_status == 1
    # Said once, by the command line: one line, the error's own status.
    missing = tmp_path / "nothing.rec"
    done = awsview_here("dump", "--from", str(missing))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("awsview: ")
    done = awsview_here("iam-policy", "--lab", "ev99")
    assert done.returncode == 2 and done.stderr.startswith("awsview: unknown lab 'ev99'")


def test_the_repeated_refusals_are_gone_from_the_commands():
    found = [
        f"{path.name}:{n}"
        for path in sorted(CLI.glob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "fail(str(exc), EXIT_USAGE)" in line
    ]
    assert len(found) <= 8, found


def test_split_is_an_ordinary_command_that_does_not_import_the_command_line_back():
    tree = ast.parse((CLI / "split.py").read_text())
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert "awsview.cli.main" not in imported
    assert 'import_module("awsview.cli.split")' not in (CLI / "main.py").read_text()
    from awsview.cli.commands import COMMANDS
    from awsview.cli.main import parse

    assert COMMANDS["split"].module == "split"
    assert vars(parse(["--lab", "q05", "split", "--width", "40%"])) == {
        "command": "split",
        "argv": ["--width", "40%", "--lab", "q05"],
    }


def test_json_before_the_command_says_where_it_belongs(capsys):
    assert main(["--json", "dump"]) == 2
    err = capsys.readouterr().err
    assert "--json belongs after the command: awsview dump --json" in err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "argv,suggestion",
    [
        (["dmp"], "did you mean dump?"),
        (["dump", "--jsn"], "did you mean --json?"),
        (["lab", "stup", "ev04"], "did you mean setup?"),
    ],
)
def test_a_near_miss_gets_a_suggestion(capsys, argv, suggestion):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert suggestion in err and len(err.splitlines()) == 1


def test_shared_option_types_are_parsed_by_the_parser():
    from awsview.cli.main import UsageError, parse

    assert parse(["screenshot", "--size", "100x30", "-o", "x.svg"]).size == (100, 30)
    assert parse(["docs", "ev04", "-o", "out"]).size == (120, 40)
    with pytest.raises(UsageError, match="--size must look like 120x40"):
        parse(["docs", "ev04", "-o", "out", "--size", "big"])
    with pytest.raises(UsageError, match="unknown theme 'purple'"):
        parse(["replay", "x.rec", "--theme", "purple"])


def test_each_command_has_a_description_and_an_example_in_its_help():
    from awsview.cli.commands import COMMANDS
    from awsview.cli.parser import build_parser, command_parser

    parser = build_parser()
    for name in COMMANDS:
        made = command_parser(parser, name)
        assert made.description, name
        assert (
            made.epilog and made.epilog.startswith("example") and f"awsview {name}" in (made.epilog)
        ), name
        assert "example" in made.format_help()
    from awsview.cli import split

    assert "example:\n  awsview split" in split.build_parser().format_help()


@pytest.mark.process  # starts the CLI in a process of its own
def test_a_closed_pipe_ends_quietly_with_141():
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written: `| head -0`
    try:
        done = subprocess.run(
            [sys.executable, "-m", "awsview", "iam-policy", "--lab", "ev04"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write)
    assert done.returncode == 141 and done.stderr == ""


def test_version_names_what_awsview_stands_on():
    from importlib.metadata import version

    done = awsview_here("--version")
    assert done.returncode == 0
    assert f"Textual {version('textual')}" in done.stdout
    assert f"botocore {version('botocore')}" in done.stdout
    assert f"Python {sys.version_info.major}.{sys.version_info.minor}." in done.stdout


def _complete(script: str, *words: str) -> list[str]:
    line = " ".join(words)
    shown = subprocess.run(
        [
            "bash",
            "-c",
            f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _awsview; "
            'printf "%s\\n" "${COMPREPLY[@]}"',
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert shown.returncode == 0, shown.stderr
    return shown.stdout.split()


@pytest.mark.process  # starts bash
def test_bash_completion_is_written_from_the_parser():
    done = awsview_here("completion", "bash")
    assert done.returncode == 0
    assert _complete(done.stdout, "awsview", "du") == ["dump"]
    assert _complete(done.stdout, "awsview", "dump", "--js") == ["--json"]
    assert "--endpoint-url" in _complete(done.stdout, "awsview", "watch", "--end")
    assert _complete(done.stdout, "awsview", "completion", "f") == ["fish"]


@pytest.mark.process  # starts the shell, where there is one
@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_completion_name_every_command(shell):
    done = awsview_here("completion", shell)
    assert done.returncode == 0
    for command in ("watch", "dump", "split", "iam-policy", "completion"):
        assert command in done.stdout
    if shutil.which(shell):
        checked = subprocess.run([shell, "-n"], input=done.stdout, text=True, timeout=30)
        assert checked.returncode == 0
