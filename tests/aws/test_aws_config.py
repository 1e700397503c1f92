"""The AWS configuration users already have, resolved as the SDK resolves it: region and
endpoint order, SSO, credential_process and assume-role profiles (served by the emulator), and
one line with exit status 2 for every configuration that cannot work.

Every case writes its own config file (AWS_CONFIG_FILE) and home directory: no test reads the
shell's configuration or reaches AWS; the real-AWS paths are tested by their refusals only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from awsview.aws.session import (
    EMULATOR_CREDENTIALS,
    SERVICES,
    ConfigError,
    Connection,
    Target,
    check_credentials,
    resolve,
)
from tests.support.cli import awsview_here


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home of its own: AWS config and credentials files, the SSO cache."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    (tmp_path / "config").write_text("")
    return tmp_path


def write_config(home: Path, text: str) -> None:
    (home / "config").write_text(textwrap.dedent(text))


def one_line(result: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# -- region and endpoints, in the SDK's order ------------------------------------------------


def test_region_order(home, monkeypatch):
    write_config(
        home,
        """
        [default]
        region = eu-north-1
        [profile lab]
        region = ap-south-1
        """,
    )
    assert resolve(Target()).region == "eu-north-1"
    assert resolve(Target(profile="lab")).region == "ap-south-1"
    monkeypatch.setenv("AWS_PROFILE", "lab")
    assert resolve(Target()).region == "ap-south-1"
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-2")
    assert resolve(Target()).region == "eu-west-2"
    monkeypatch.setenv("AWS_REGION", "eu-west-3")  # CLI v2 and the SDKs put it first
    assert resolve(Target()).region == "eu-west-3"
    assert resolve(Target(region="us-west-2")).region == "us-west-2"
    assert resolve(Target()).endpoint("sqs") == "https://sqs.eu-west-3.amazonaws.com"


# An endpoint for every service, and DynamoDB's own (a services section).
ENDPOINTS_CONFIG = """
[default]
region = us-east-1
endpoint_url = http://127.0.0.1:1111
services = local
[services local]
dynamodb =
  endpoint_url = http://127.0.0.1:2222
"""


def test_endpoint_order(home, monkeypatch):
    write_config(home, ENDPOINTS_CONFIG)
    resolved = resolve(Target())
    assert resolved.endpoint("sqs") == "http://127.0.0.1:1111"  # the profile's endpoint_url
    assert resolved.endpoint("dynamodb") == "http://127.0.0.1:2222"  # its services section
    assert resolved.endpoint_url == "http://127.0.0.1:2222" and resolved.is_local
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:3333")
    resolved = resolve(Target())
    assert resolved.endpoint("sqs") == resolved.endpoint("dynamodb") == "http://127.0.0.1:3333"
    monkeypatch.setenv("AWS_ENDPOINT_URL_SQS", "http://127.0.0.1:4444")
    resolved = resolve(Target())
    assert (resolved.endpoint("sqs"), resolved.endpoint("logs")) == (
        "http://127.0.0.1:4444",
        "http://127.0.0.1:3333",
    )
    assert resolved.describe() == "http://127.0.0.1:3333 · us-east-1 (sqs → http://127.0.0.1:4444)"
    resolved = resolve(Target(endpoint_url="http://127.0.0.1:5555"))
    assert {url for _, url in resolved.endpoints} == {"http://127.0.0.1:5555"}


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:5000", "http://localhost:4566/", "https://emulator.example:8443/x/"]
)
def test_an_endpoint_given_outright_is_each_services_as_botocore_makes_it(home, monkeypatch, url):
    """An endpoint given outright is resolved with one client, not one per service: each
    service's own client says the same, whatever is configured per service."""
    import botocore.session

    write_config(home, ENDPOINTS_CONFIG)
    monkeypatch.setenv("AWS_ENDPOINT_URL_LOGS", "http://127.0.0.1:3333")
    resolved = resolve(Target(endpoint_url=url))
    session = botocore.session.Session()
    assert [service for service, _ in resolved.endpoints] == list(SERVICES)
    for service, endpoint in resolved.endpoints:
        client = session.create_client(
            service, endpoint_url=url, aws_access_key_id="a", aws_secret_access_key="b"
        )
        assert endpoint == client.meta.endpoint_url, service


@pytest.mark.parametrize(
    ("config", "region", "says"),
    [
        ("defaults_mode = bogus", None, "invalid defaults mode: bogus"),
        ("retry_mode = bogus", None, '"mode": "bogus" must be one of'),
        ("", "us east 1", "'us east 1' doesn't match a supported format"),
    ],
)
def test_an_endpoint_given_outright_has_its_region_and_configuration_checked(
    home, config, region, says
):
    write_config(home, f"[default]\n{config}\n")
    with pytest.raises(ConfigError, match=re.escape(says)):
        resolve(Target(region=region, endpoint_url="http://127.0.0.1:5000"))


def test_aws_itself_is_described_as_aws(home):
    write_config(home, "[default]\nregion = eu-central-1\n")
    resolved = resolve(Target())
    assert resolved.reaches_aws and not resolved.is_local and resolved.endpoint_url is None
    assert resolved.describe() == "AWS · eu-central-1"
    assert resolved.endpoint("iam") == "https://iam.amazonaws.com"


def test_a_profiles_endpoint_and_aws_region_reach_the_emulator(awsview, emulator, home):
    write_config(
        home,
        f"""
        [profile lab]
        region = us-east-1
        endpoint_url = {emulator.endpoint_url}
        aws_access_key_id = testing
        aws_secret_access_key = testing
        """,
    )
    result = awsview("dump", "--json", env={"AWS_PROFILE": "lab", "AWS_REGION": "eu-west-3"})
    assert result.returncode == 0, result.stderr
    dumped = json.loads(result.stdout)
    assert dumped["target"] == f"{emulator.endpoint_url} · eu-west-3 · profile lab"
    assert (
        dumped["snapshots"]["journal"]["health"] == "ok"
    )  # the emulator's journal, found by the profile


async def test_the_viewer_header_names_what_is_really_used(emulator, home, monkeypatch):
    from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
    from tests.support.helpers import status, until

    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    monkeypatch.setenv("AWS_ENDPOINT_URL", emulator.endpoint_url)
    app = AWSViewApp(target=Target(), lab="q05", options=ViewerOptions(poll_speed=0.3))
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: "account" in status(app), what="preflight")
        assert f"{emulator.endpoint_url} · eu-west-3 · account 123456789012" in status(app)


# -- profiles that fetch their credentials ---------------------------------------------------


def test_assume_role_profile_through_the_emulators_sts(awsview, emulator, home):
    write_config(
        home,
        f"""
        [profile base]
        aws_access_key_id = testing
        aws_secret_access_key = testing
        [profile viewer]
        role_arn = arn:aws:iam::123456789012:role/lab-viewer
        source_profile = base
        region = us-east-1
        endpoint_url = {emulator.endpoint_url}
        """,
    )
    assert check_credentials(resolve(Target(profile="viewer"))) == "assume-role"
    result = awsview("--profile", "viewer", "dump", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["account"] == "123456789012"


def test_credential_process_profile(awsview, emulator, home):
    marker = home / "process-ran"
    script = home / "creds.py"
    script.write_text(
        f"import json, pathlib\npathlib.Path({str(marker)!r}).write_text('yes')\n"
        "print(json.dumps({'Version': 1, 'AccessKeyId': 'PROCESSKEY', 'SecretAccessKey': 'x'}))\n"
    )
    failing = home / "fail.py"
    failing.write_text(
        "import sys\nsys.stderr.write('token device not plugged in\\n')\nsys.exit(3)\n"
    )
    write_config(
        home,
        f"""
        [profile proc]
        credential_process = {sys.executable} {script}
        region = us-east-1
        endpoint_url = {emulator.endpoint_url}
        [profile broken]
        credential_process = {sys.executable} {failing}
        region = us-east-1
        """,
    )
    assert check_credentials(resolve(Target(profile="proc"))) == "custom-process"
    result = awsview("dump", "--profile", "proc")
    assert result.returncode == 0, result.stderr
    assert marker.read_text() == "yes"
    result = awsview("dump", "--profile", "broken")
    assert result.returncode == 2
    line = one_line(result)
    assert "profile 'broken'" in line and "token device not plugged in" in line


def sso_config(home: Path, endpoint: str, expires: str, token: str = "sso-token") -> None:
    start_url = "https://lab.awsapps.com/start"
    write_config(
        home,
        f"""
        [profile sso-lab]
        sso_start_url = {start_url}
        sso_region = us-east-1
        sso_account_id = 123456789012
        sso_role_name = LabViewer
        region = us-east-1
        endpoint_url = {endpoint}
        """,
    )
    cache = home / ".aws" / "sso" / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / f"{hashlib.sha1(start_url.encode()).hexdigest()}.json").write_text(
        json.dumps(
            {
                "startUrl": start_url,
                "region": "us-east-1",
                "accessToken": token,
                "expiresAt": expires,
            }
        )
    )


def test_sso_profile_with_a_cached_token(awsview, emulator, home):
    sso_config(home, emulator.endpoint_url, "2099-01-01T00:00:00Z")
    # In a process of its own: botocore fixes the SSO cache directory from HOME when imported.
    method = subprocess.run(
        [
            sys.executable,
            "-c",
            "from awsview.aws.session import *; "
            "print(check_credentials(resolve(Target(profile='sso-lab'))))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert method.stdout.strip() == "sso", method.stderr
    result = awsview("dump", "--profile", "sso-lab")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "expires,token",
    [
        ("2020-01-01T00:00:00Z", "sso-token"),  # expired in the cache
        ("2099-01-01T00:00:00Z", "EXPIRED-token"),  # refused by the portal
        (None, ""),
    ],
)  # never logged in
def test_expired_sso_session_says_run_aws_sso_login(awsview, emulator, home, expires, token):
    sso_config(home, emulator.endpoint_url, expires or "2099-01-01T00:00:00Z", token)
    if expires is None:
        for cached in (home / ".aws" / "sso" / "cache").iterdir():
            cached.unlink()
    for argv in (
        ["dump"],
        ["lab", "setup", "q05"],
        ["watch"],
        ["screenshot", "-o", str(home / "x.svg")],
    ):
        result = awsview("--profile", "sso-lab", *argv)
        assert result.returncode == 2, (argv, result.stderr)
        assert one_line(result).endswith("run: aws sso login --profile sso-lab"), argv


# -- one line, exit 2, for every configuration that cannot work ------------------------------

COMMANDS = [["dump"], ["watch"], ["lab", "setup", "q05"], ["screenshot", "-o", "x.svg"], ["serve"]]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_unknown_profile_with_no_region(home, argv):
    write_config(home, "[profile real]\nregion = eu-west-1\n")
    result = awsview_here("--profile", "nope", *argv)
    assert result.returncode == 2
    assert (
        one_line(result)
        == f"awsview: unknown AWS profile 'nope' in {home / 'config'} (profiles there: real)"
    )


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_no_credentials_and_no_endpoint_suggests_the_demo(home, argv):
    result = awsview_here(*argv)
    assert result.returncode == 2
    line = one_line(result)
    assert "no AWS credentials found" in line and line.endswith(
        "to try AWS View without an account: awsview demo"
    )


@pytest.mark.parametrize(
    "region,says",
    [
        ("eu-wst-1", "unknown AWS region 'eu-wst-1' — did you mean eu-west-1?"),
        ("us east 1", "'us east 1' doesn't match a supported format"),
    ],
)
def test_wrong_region_name(home, region, says):
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    for argv in (["dump"], ["lab", "setup", "q05"]):
        result = awsview_here(*argv, "--region", region, env=env)
        assert result.returncode == 2
        assert says in one_line(result)


def test_no_region_for_aws(home):
    result = awsview_here(
        "dump", env={"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    )
    assert result.returncode == 2
    assert one_line(result).startswith(
        "awsview: no AWS region configured: pass --region, set AWS_REGION"
    )


def test_a_local_endpoint_needs_neither_region_nor_credentials(awsview, emulator, home):
    result = awsview("dump", "--endpoint-url", emulator.endpoint_url)
    assert result.returncode == 0, result.stderr
    assert f"{emulator.endpoint_url} · us-east-1 · account" in result.stdout


@pytest.fixture
def silent_listener() -> Iterator[tuple[str, list[socket.socket]]]:
    """A loopback port that accepts connections and never answers (as a network that takes
    connections to the instance metadata address and drops them): its URL, and what it accepted."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}", accepted
    listener.close()
    for connection in accepted:
        connection.close()


async def test_a_local_endpoint_never_asks_the_network_for_credentials(
    home, monkeypatch, silent_listener
):
    """With no credentials configured, the chain for a local endpoint skips the container and
    instance-metadata providers: they would wait on a silent network for seconds."""
    url, accepted = silent_listener
    monkeypatch.delenv("AWS_EC2_METADATA_DISABLED", raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", url)
    monkeypatch.setenv("AWS_METADATA_SERVICE_TIMEOUT", "1")
    local = Target(endpoint_url="http://127.0.0.1:9")
    # The same settings send botocore's own chain to the listener: the check below can fail.
    assert resolve(local).session.get_credentials() is None
    assert accepted, "the instance metadata provider did not reach the listener"
    accepted.clear()
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", f"{url}/credentials")

    assert check_credentials(resolve(local)) is None
    async with Connection(local) as connection:
        assert await connection.access_key_id() == EMULATOR_CREDENTIALS["aws_access_key_id"]
    assert accepted == []


def test_resolve_raises_config_error_not_botocore_errors(home):
    write_config(
        home,
        "[profile loop]\nsource_profile = loop\nrole_arn "
        "= arn:aws:iam::1:role/x\nregion = us-east-1\n",
    )
    with pytest.raises(ConfigError, match="profile 'loop'"):
        check_credentials(resolve(Target(profile="loop")))


def test_expired_sso_session_in_the_sso_session_format(awsview, emulator, home):
    write_config(
        home,
        f"""
        [profile sso-new]
        sso_session = lab
        sso_account_id = 123456789012
        sso_role_name = LabViewer
        region = us-east-1
        endpoint_url = {emulator.endpoint_url}
        [sso-session lab]
        sso_start_url = https://lab.awsapps.com/start
        sso_region = us-east-1
        sso_registration_scopes = sso:account:access
        """,
    )
    cache = home / ".aws" / "sso" / "cache"
    cache.mkdir(parents=True)
    (cache / f"{hashlib.sha1(b'lab').hexdigest()}.json").write_text(
        json.dumps(
            {
                "startUrl": "https://lab.awsapps.com/start",
                "region": "us-east-1",
                "accessToken": "t",
                "expiresAt": "2020-01-01T00:00:00Z",
            }
        )
    )
    result = awsview("dump", "--profile", "sso-new")
    assert result.returncode == 2
    assert one_line(result).endswith("run: aws sso login --profile sso-new")
