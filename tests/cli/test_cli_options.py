"""Options anywhere: every shared option means the same before or after its command, and is
refused (one line, exit 2) wherever it makes no sense."""

from __future__ import annotations

import re

import pytest

from awsview.cli.main import SHARED, TAKES, UsageError, main, parse
from tests.support.cli import awsview_here

# The least each command needs besides the options under test.
REQUIRED = {
    "emulator": [],
    "lab": ["setup", "q05"],
    "demo": [],
    "dump": [],
    "screenshot": ["-o", "x.svg"],
    "docs": ["q05", "-o", "out"],
    "serve": [],
    "class": ["class.toml"],
    "watch": [],
    "iam-policy": [],
    "replay": ["rec.awsview"],
    "doctor": [],
    "verify": ["2"],
    "completion": ["bash"],
}
VALUES = {
    "profile": "lab",
    "region": "eu-central-1",
    "endpoint_url": "http://127.0.0.1:5000",
    "lab": "q05",
    "prefix": "myapp-",
    "theme": "light",
    "log_file": "/tmp/awsview.aws.log",
    "record": "/tmp/awsview-rec",
}
CASES = [(command, name) for command in REQUIRED for name in SHARED]


def test_every_command_is_walked():
    assert set(REQUIRED) == set(TAKES)
    assert set(VALUES) == set(SHARED)


@pytest.mark.parametrize("command,name", CASES, ids=[f"{c}-{n}" for c, n in CASES])
def test_an_option_means_the_same_before_and_after_its_command(command, name):
    flag = SHARED[name][0]
    before = [flag, VALUES[name], command, *REQUIRED[command]]
    after = [command, *REQUIRED[command], flag, VALUES[name]]
    equals = [command, *REQUIRED[command], f"{flag}={VALUES[name]}"]
    if name not in TAKES[command]:
        for argv in (before, after, equals):
            with pytest.raises(UsageError, match=f"{flag} does not apply here"):
                parse(argv)
        return
    parsed = [vars(parse(argv)) for argv in (before, after, equals)]
    assert parsed[0] == parsed[1] == parsed[2]
    expected = [VALUES[name]] if (name == "lab" and command == "demo") else VALUES[name]
    assert (
        str(parsed[0][name]) == str(expected) if name == "record" else parsed[0][name] == expected
    )
    # and nothing else moved: every other shared option keeps its default
    plain = vars(parse([command, *REQUIRED[command]]))
    assert {k: v for k, v in parsed[0].items() if k != name} == {
        k: v for k, v in plain.items() if k != name
    }


@pytest.mark.parametrize("command", [c for c in REQUIRED if TAKES[c] >= {"endpoint_url", "region"}])
def test_before_and_after_together(command):
    args = parse(
        [
            "--endpoint-url",
            "http://127.0.0.1:5000",
            command,
            *REQUIRED[command],
            "--region",
            "eu-west-1",
        ]
    )
    assert (args.endpoint_url, args.region) == ("http://127.0.0.1:5000", "eu-west-1")
    same = parse(["--region", "eu-west-1", command, *REQUIRED[command], "--region", "eu-west-1"])
    assert same.region == "eu-west-1"
    with pytest.raises(UsageError, match="--region given twice"):
        parse(["--region", "eu-west-1", command, *REQUIRED[command], "--region", "us-east-1"])


def test_split_takes_the_viewer_options_given_before_it():
    from awsview.cli.main import _split_at

    assert _split_at(["split", "--width", "50%"]) == 0
    assert _split_at(["--profile", "lab", "--region=eu-west-1", "split"]) == 3
    assert _split_at(["--prefix", "split"]) is None  # a value, not the command
    assert _split_at(["dump", "split"]) is None


def test_no_command_is_watch_with_the_same_options():
    assert vars(parse(["--lab", "q05", "--theme", "light"])) == vars(
        parse(["watch", "--lab", "q05", "--theme", "light"])
    )


def test_labs_before_and_after_the_demo_add_up_and_one_lab_elsewhere():
    assert parse(["--lab", "q05", "demo", "--lab", "ev04"]).lab == ["q05", "ev04"]
    with pytest.raises(UsageError, match="one lab at a time"):
        parse(["--lab", "q05", "dump", "--lab", "ev04"])


def test_defaults_per_command():
    assert parse(["screenshot", "-o", "x.svg"]).theme == "docs"
    assert parse(["watch"]).theme is None
    assert parse(["dump"]).prefix == ""
    assert parse(["docs", "ev04", "-o", "d"]).lab == "ev04"


def test_refusals_are_one_line_and_exit_2(capsys):
    for argv in (
        ["--theme", "light", "dump"],
        ["dump", "--theme", "light"],
        ["dump", "--bogus"],
        ["nonsense"],
        ["dump", "--region"],
        ["--prefix", "x", "emulator"],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
        assert "Traceback" not in err


def test_settle_is_a_number_of_seconds_for_lab_check_only():
    assert parse(["lab", "check", "q05", "--settle", "2.5"]).settle == 2.5
    assert parse(["lab", "check", "q05"]).settle is None  # lab check's own 30 s
    for bad in ("0", "-1", "nan", "inf", "1e9", "soon"):
        done = awsview_here("lab", "check", "q05", "--settle", bad)
        assert done.returncode == 2
        assert f"expected seconds between 0 and 86400, not {bad!r}" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    done = awsview_here("lab", "play", "q05", "--settle", "3")  # refused before it plays
    assert done.returncode == 2
    assert done.stderr.strip() == "awsview: --junit, --twice and --settle go with lab check"


def test_version():
    from awsview import __version__

    result = awsview_here("--version")
    assert result.returncode == 0 and result.stdout.startswith(f"awsview {__version__} (Textual ")


def test_endpoint_before_lab_setup_reaches_that_endpoint(starts_processes, emulator):
    """The bug this walk guards: the endpoint given before `lab` was dropped, so the lab's writes
    went wherever the credential chain pointed."""
    result = starts_processes.awsview(
        "--endpoint-url", emulator.endpoint_url, "lab", "setup", "q05", timeout=120
    )
    assert result.returncode == 0, result.stderr
    names = [f["FunctionName"] for f in emulator.client("lambda").list_functions()["Functions"]]
    assert "labex-q05-worker" in names


@pytest.mark.parametrize("command", [None, *REQUIRED])
def test_help_names_each_value_as_the_command_s_own_help_does(command, capsys):
    """An option given before the command is stored apart; its help must still read
    `--region REGION`, never the internal name."""
    with pytest.raises(SystemExit) as exit_:
        main(["--help"] if command is None else [command, "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert "BEFORE" not in text
    for flag, options in SHARED.values():
        listed = re.search(rf"^\s+{flag}\b", text, re.MULTILINE)  # in the options list
        if listed and options.get("action") not in ("store_true", "store_false"):
            assert f"{flag} {options.get('metavar', '?')}" in text, flag
