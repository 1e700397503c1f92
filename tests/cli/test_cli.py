"""The command line: clear messages, no tracebacks, a quiet emulator."""

from __future__ import annotations

import logging

import pytest
from botocore.exceptions import ClientError

from awsview.emulator.server import PlainFormatter
from tests.support.helpers import create_function, invoke


def test_python_dash_m_and_help(awsview):
    result = awsview("--help")
    assert result.returncode == 0
    for command in ("emulator", "lab", "demo"):
        assert command in result.stdout


def test_busy_port_is_a_one_line_message(awsview, emulator):
    result = awsview(
        "emulator", "--port", str(emulator.port), "--state-dir", str(emulator.state_dir)
    )
    assert result.returncode == 2
    assert f"port {emulator.port} on 127.0.0.1 is already in use" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert invoke_ok(emulator)  # the running one keeps serving


def invoke_ok(emulator) -> bool:
    return emulator.client("sts").get_caller_identity()["Account"] == "123456789012"


def test_emulator_logs_to_its_state_dir_and_never_to_the_terminal(spawn_emulator, tmp_path):
    running = spawn_emulator(tmp_path)
    try:
        lam = running.client("lambda")
        create_function(
            lam, "noisy", "def handler(e, c):\n    print('hello')\n    raise ValueError('x')\n"
        )
        assert invoke(lam, "noisy", {})[0] == "Unhandled"
        running.client("dynamodb").list_tables()
        with pytest.raises(ClientError):  # a 400: werkzeug styles its line for a terminal
            running.client("dynamodb").describe_table(TableName="missing")
    finally:
        running.stop()
    stdout, stderr = running.process.stdout.read(), running.process.stderr.read()
    assert stderr == ""
    assert [line.split(" ")[0] for line in stdout.splitlines()] == [
        "write-decision",
        "state",
        "use",
    ] or all(
        not line.startswith(("127.0.0.1", "INFO", "WARNING", " * ")) for line in stdout.splitlines()
    )
    log = (tmp_path / "emulator.log").read_text()
    assert "POST" in log or "werkzeug" in log
    assert '"POST / HTTP/1.1" 400' in log and "\x1b" not in log  # plain text, no colours


def test_unknown_lab_names_the_known_ones(awsview):
    result = awsview("lab", "play", "ev99", "--endpoint-url", "http://127.0.0.1:9")
    assert result.returncode == 2
    assert "ev99" in result.stderr and "ev04" in result.stderr and "q05" in result.stderr
    assert "Traceback" not in result.stderr


def test_unreachable_endpoint_is_one_line_not_a_traceback(awsview):
    result = awsview("lab", "setup", "q05", "--endpoint-url", "http://127.0.0.1:9")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "127.0.0.1:9" in result.stderr


def test_the_emulator_log_escapes_control_characters_a_message_carries():
    line = PlainFormatter("%(message)s").format(
        logging.makeLogRecord({"msg": "\x1b[31mred\x1b[0m name \x1b]0;title\x07\r\n\tnext"})
    )
    assert line == "red name \\x1b]0;title\\x07\\x0d\n\tnext"
