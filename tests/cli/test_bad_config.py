"""A bad configuration is one line and exit status 2, never a traceback: a theme, lab profile or
class roster that is not UTF-8, a theme colour that is not one, an endpoint URL with a wrong or
missing scheme (given with --endpoint-url, AWS_ENDPOINT_URL or a config file's endpoint_url).

And a private address is not "local": a lab refuses to write there without --real-account, and
refuses before anything is sent. No test sends traffic off loopback: a guard refuses (and notes)
every connection to another address."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from awsview import labspec
from awsview.aws.session import Connection, Target, resolve
from awsview.cli.main import main
from awsview.ui import themes
from tests.support.cli import awsview_here

NOT_UTF8 = b'name = "caf\xe9"\n'
LEARNER = '[[learner]]\nname = "Ada"\nendpoint_url = "http://127.0.0.1:5000"\n'


@pytest.fixture
def clean_env(tmp_path, monkeypatch):
    """No AWS configuration from the shell: testing keys, an empty config file, no metadata."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    config = tmp_path / "aws-config"
    config.write_text("")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    return config


@pytest.fixture
def off_loopback(monkeypatch):
    """Every connection this process tries to an address off loopback is refused and noted."""
    tried: list[object] = []
    connect = socket.socket.connect

    def guarded(self, address):
        host = address[0] if isinstance(address, tuple) else ""
        if self.family in (socket.AF_INET, socket.AF_INET6) and not (
            host.startswith("127.") or host in ("::1", "localhost")
        ):
            tried.append(address)
            raise ConnectionRefusedError(f"test guard: no traffic to {host}")
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    return tried


def said(capsys) -> str:
    """What a command said on stderr: exactly one line, never a traceback."""
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("awsview: "), err
    return lines[0]


def one_line(result: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# -- files: themes, lab profiles, class rosters ----------------------------------------------------


@pytest.fixture
def theme_folder(tmp_path, monkeypatch):
    """AWS View's themes, copied to a folder the test may add a broken one to."""
    folder = tmp_path / "themes"
    shutil.copytree(themes.theme_dir(), folder)
    monkeypatch.setattr(themes, "theme_dir", lambda: folder)
    return folder


@pytest.fixture
def profile_folder(tmp_path, monkeypatch):
    folder = tmp_path / "panels"  # the built-in labs are all lab folders now: it starts empty
    folder.mkdir()
    monkeypatch.setattr(labspec, "spec_dir", lambda: folder)
    return folder


@pytest.mark.parametrize(
    "argv",
    [
        ["watch", "--endpoint-url", "http://127.0.0.1:9"],
        ["replay", "missing.jsonl"],
        ["class", "ROSTER"],
    ],
)
def test_a_theme_file_that_is_not_utf8_is_one_line(theme_folder, clean_env, tmp_path, capsys, argv):
    (theme_folder / "mine.toml").write_bytes(b'name = "mine"\nprimary = "#fff"\n# \xff\n')
    (tmp_path / "class.toml").write_text(LEARNER)
    assert main([str(tmp_path / "class.toml") if a == "ROSTER" else a for a in argv]) == 2
    assert said(capsys).endswith(
        f"{theme_folder / 'mine.toml'}:3: not UTF-8 (byte 0xff at column 3); save the file as UTF-8"
    )


def test_a_theme_colour_that_is_not_one_is_said_with_its_line(theme_folder, clean_env, capsys):
    (theme_folder / "mine.toml").write_text(
        'name = "mine"\ndark = true\nprimary = "not-a-colour"\n'
    )
    assert main(["watch", "--theme", "mine", "--endpoint-url", "http://127.0.0.1:9"]) == 2
    line = said(capsys)
    assert f'{theme_folder / "mine.toml"}:3: primary = "not-a-colour" is not a colour' in line
    assert "#RRGGBB" in line


@pytest.mark.parametrize(
    "argv",
    [
        ["dump", "--lab", "mine", "--endpoint-url", "http://127.0.0.1:9"],
        ["watch", "--lab", "mine", "--endpoint-url", "http://127.0.0.1:9"],
        ["doctor", "--lab", "mine", "--endpoint-url", "http://127.0.0.1:9"],
        ["iam-policy", "--lab", "mine"],
    ],
)
def test_a_lab_profile_that_is_not_utf8_is_one_line(profile_folder, clean_env, capsys, argv):
    (profile_folder / "mine.toml").write_bytes(b'name = "mine"\ntitle = "\xe9t\xe9"\n')
    assert main(argv) == 2
    assert said(capsys).endswith(
        f"{profile_folder / 'mine.toml'}:2: not UTF-8 "
        "(byte 0xe9 at column 10); save the file as UTF-8"
    )


def test_a_broken_profile_found_while_detecting_the_lab_is_one_line(
    emulator, profile_folder, clean_env, capsys
):
    (profile_folder / "mine.toml").write_bytes(NOT_UTF8)
    assert main(["dump", "--endpoint-url", emulator.endpoint_url]) == 2
    assert "mine.toml:1: not UTF-8" in said(capsys)


@pytest.mark.parametrize(
    "argv",
    [
        ["watch", "--endpoint-url", "http://127.0.0.1:9"],
        ["screenshot", "-o", "shot.svg", "--endpoint-url", "http://127.0.0.1:9"],
        ["class", "ROSTER"],
    ],
)
def test_a_broken_profile_is_said_before_a_screen_detects_the_lab(
    profile_folder, clean_env, tmp_path, monkeypatch, capsys, argv
):
    monkeypatch.chdir(tmp_path)
    (profile_folder / "mine.toml").write_bytes(NOT_UTF8)
    (tmp_path / "class.toml").write_text(LEARNER)
    assert main([str(tmp_path / "class.toml") if a == "ROSTER" else a for a in argv]) == 2
    assert "mine.toml:1: not UTF-8" in said(capsys)
    assert not (tmp_path / "shot.svg").exists()


@pytest.mark.parametrize("command", [["class"], ["serve", "--class"]])
def test_a_roster_that_is_not_utf8_is_one_line(tmp_path, clean_env, capsys, command):
    roster = tmp_path / "class.toml"
    roster.write_bytes(LEARNER.encode() + b'lab = "\xff"\n')
    assert main([*command, str(roster)]) == 2
    assert said(capsys).endswith(
        f"{roster}:4: not UTF-8 (byte 0xff at column 8); save the file as UTF-8"
    )


def test_a_roster_that_is_a_named_pipe_is_one_line_not_a_wait(tmp_path, clean_env, capsys):
    """Opened for reading, a named pipe waits for a writer that never comes."""
    roster = tmp_path / "class.toml"
    os.mkfifo(roster)
    assert main(["class", str(roster)]) == 2
    assert said(capsys).endswith(f"{roster}: not a regular file")


def test_a_roster_endpoint_with_a_wrong_scheme_is_said_with_its_line(tmp_path, clean_env, capsys):
    roster = tmp_path / "class.toml"
    roster.write_text(
        LEARNER + '\n[[learner]]\nname = "Bo"\nendpoint_url = "htp://127.0.0.1:5001"\n'
    )
    assert main(["class", str(roster)]) == 2
    assert said(capsys) == (
        f"awsview: {roster}:7: 'learner[2].endpoint_url': htp://127.0.0.1:5001: "
        'unsupported scheme "htp" (use http:// or https://) — did you mean http://127.0.0.1:5001?'
    )


# -- endpoint URLs ---------------------------------------------------------------------------------

WRONG_SCHEME = (
    'unsupported scheme "htp" (use http:// or https://) — did you mean http://127.0.0.1:5000?'
)


@pytest.mark.parametrize(
    "command",
    [
        ["dump"],
        ["doctor"],
        ["watch"],
        ["screenshot", "-o", "shot.svg"],
        ["serve", "--port", "8765"],
        ["lab", "setup", "ev04"],
        ["split"],
    ],
)
def test_an_endpoint_with_a_wrong_scheme_is_one_line_with_a_hint(
    clean_env, tmp_path, monkeypatch, command
):
    monkeypatch.chdir(tmp_path)
    result = awsview_here(*command, "--endpoint-url", "htp://127.0.0.1:5000")
    assert result.returncode == 2
    assert one_line(result) == f"awsview: --endpoint-url htp://127.0.0.1:5000: {WRONG_SCHEME}"


def test_an_endpoint_without_a_scheme_is_one_line_with_a_hint(clean_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = awsview_here("dump", "--endpoint-url", "127.0.0.1:5000")
    assert result.returncode == 2
    assert one_line(result) == (
        "awsview: --endpoint-url 127.0.0.1:5000: no scheme (did you mean http://127.0.0.1:5000?)"
    )


def test_the_sdk_endpoint_variables_are_checked_too(clean_env, monkeypatch, capsys):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "htp://127.0.0.1:5000")
    assert main(["dump"]) == 2
    assert said(capsys) == f"awsview: AWS_ENDPOINT_URL htp://127.0.0.1:5000: {WRONG_SCHEME}"
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", "127.0.0.1:5000")
    assert main(["doctor"]) == 2
    assert said(capsys) == (
        "awsview: AWS_ENDPOINT_URL_DYNAMODB 127.0.0.1:5000: no scheme "
        "(did you mean http://127.0.0.1:5000?)"
    )


def test_a_config_file_endpoint_is_said_with_its_line(clean_env, capsys):
    clean_env.write_text("[default]\nregion = us-east-1\nendpoint_url = htp://127.0.0.1:5000\n")
    assert main(["dump"]) == 2
    assert said(capsys) == (
        f"awsview: {clean_env}:3: endpoint_url htp://127.0.0.1:5000: {WRONG_SCHEME}"
    )


# -- what counts as local --------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["setup", "play", "clean"])
@pytest.mark.parametrize("url", ["https://172.31.5.9", "https://10.1.2.3:443", "https://[fe80::1]"])
def test_a_lab_on_a_private_address_needs_real_account_and_sends_nothing(
    clean_env, off_loopback, capsys, action, url
):
    assert main(["lab", action, "ev04", "--endpoint-url", url]) == 2
    assert "--real-account" in said(capsys)
    assert off_loopback == []


def test_a_plain_http_private_address_is_asked_only_who_it_is(clean_env, off_loopback, capsys):
    """Plain http could be the emulator on a classroom network: one identity question (refused
    here by the guard), then the same refusal; no AWS call, nothing written."""
    assert main(["lab", "setup", "ev04", "--endpoint-url", "http://10.0.0.11:5000"]) == 2
    assert "not a local endpoint (loopback or an AWS View emulator)" in said(capsys)
    assert off_loopback == [("10.0.0.11", 5000)]


def test_only_loopback_is_local_by_its_address(clean_env):
    def local(url: str) -> bool:
        return resolve(Target(endpoint_url=url, region="us-east-1")).is_local

    assert local("http://127.0.0.1:5000") and local("http://localhost:5000")
    assert local("http://[::1]:5000")
    for url in ("https://172.31.5.9", "http://10.0.0.11:5000", "http://169.254.169.254"):
        assert not local(url), url


def test_the_emulator_identifies_itself(emulator, clean_env, monkeypatch):
    from awsview.aws.endpoints import identifies_as_emulator
    from awsview.aws.session import identified

    assert identifies_as_emulator(emulator.endpoint_url)
    # Seen from elsewhere (its address not loopback), it is still local once it answered.
    monkeypatch.setattr("awsview.aws.session.is_local_url", lambda url: False)
    seen = resolve(Target(endpoint_url=emulator.endpoint_url, region="us-east-1"))
    assert not seen.is_local
    assert identified(seen).is_local


async def test_a_connection_to_the_emulator_off_loopback_stays_local(emulator, monkeypatch):
    """A class on emulators at private addresses keeps their change feed and journal."""
    monkeypatch.setattr("awsview.aws.session.is_local_url", lambda url: False)
    async with Connection(Target(endpoint_url=emulator.endpoint_url, region="us-east-1")) as conn:
        assert conn.is_local


class _NotTheEmulator(BaseHTTPRequestHandler):
    """A server with no AWS View identity: a LocalStack or stock moto answers so."""

    def do_GET(self) -> None:
        body = json.dumps({"ok": True}).encode()  # looks healthy, names no instance
        self.send_response(200 if self.path.endswith("/health") else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_an_endpoint_that_does_not_identify_is_not_the_emulator(clean_env):
    from awsview.aws.endpoints import identifies_as_emulator

    server = HTTPServer(("127.0.0.1", 0), _NotTheEmulator)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        assert not identifies_as_emulator(f"http://127.0.0.1:{server.server_port}")
        assert not identifies_as_emulator("https://127.0.0.1:1")  # never asked: no TLS there
    finally:
        server.shutdown()
        server.server_close()
