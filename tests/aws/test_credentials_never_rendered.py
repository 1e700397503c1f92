"""The secret key (and session token) the viewer runs with never appears on a screen or in a dump:
not from its own credential chain (environment, credentials file, config profile), not from a
worker that prints credentials in the usual shapes, not from an error message.

One emulator and one lab, played with the secret in the environment; then `awsview dump` (text
and JSON, lab given or detected, a profile from the config file, refused credentials), the
panels and every row's detail rendered in process, and the app's screens.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import time
from collections.abc import Iterator

import pytest

from awsview import labspec
from awsview.aws.session import Connection, Target
from awsview.core import render
from awsview.core.printout import as_json, as_text
from awsview.labs.player import LabPlayer
from awsview.polling.scheduler import Scheduler
from tests.support import processes
from tests.support.emulator import RunningEmulator
from tests.support.helpers import wait_for, zip_code

SECRET = "SECRET-should-never-appear-9f3c"
TOKEN = "TOKEN-should-never-appear-7d21"
KEY_ID = "AKIAVIEWTESTKEY9F3C0"
NEVER = (SECRET, TOKEN)

LEAKY_WORKER = f'''
import json, os
KEY, SECRET, TOKEN = "{KEY_ID}", "{SECRET}", "{TOKEN}"

def handler(event, context):
    os.environ.update(AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_SESSION_TOKEN=TOKEN)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        print(f"{{name}}={{os.environ[name]}}")       # env
    print(os.environ)                                 # environ({{'AWS_...': '...'}})
    print(dict(aws_secret_access_key=SECRET, aws_session_token=TOKEN))
    print(f"export AWS_SECRET_ACCESS_KEY='{{SECRET}}' AWS_SESSION_TOKEN=\\"{{TOKEN}}\\"")
    # a credentials file
    print(f"aws_secret_access_key = {{SECRET}}\\naws_session_token = {{TOKEN}}")
    print(json.dumps({{"Credentials": {{"AccessKeyId": KEY, "SecretAccessKey": SECRET,
                                       "SessionToken": TOKEN,
                                       "Expiration": "2030-01-01T00:00:00Z"}}}}))
    print(json.dumps({{"secretAccessKey": SECRET, "sessionToken": TOKEN}}, indent=2))
    print("RESULT " + json.dumps({{"id": "leak", "processed": True, "SecretAccessKey": SECRET,
                                  "nested": {{"aws_session_token": TOKEN}}}}))
    print("EVENT " + json.dumps({{"env": {{"AWS_SECRET_ACCESS_KEY": SECRET,
                                          "AWS_SESSION_TOKEN": TOKEN}}}}))
    print("Authorization: AWS4-HMAC-SHA256 "
          f"Credential={{KEY}}/20260101/us-east-1/sqs/aws4_request, "
          f"SignedHeaders=host;x-amz-security-token, Signature=0123456789abcdef0123456789abcdef")
    print(f"X-Amz-Security-Token: {{TOKEN}}")
    print(f"https://b.s3.amazonaws.com/k?X-Amz-Credential={{KEY}}&X-Amz-Security-Token={{TOKEN}}"
          f"&X-Amz-Signature=0123456789abcdef0123")
    raise RuntimeError(f"could not sign: aws_secret_access_key={{SECRET}} session_token={{TOKEN}}")
'''


@pytest.fixture(scope="module")
def secret_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The secret in the environment, a credentials file and a config profile."""
    tmp_path = tmp_path_factory.mktemp("secret")
    credentials = tmp_path / "credentials"
    credentials.write_text(
        f"[default]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n"
        f"aws_session_token = {TOKEN}\n"
    )
    config = tmp_path / "config"
    config.write_text(
        f"[default]\nregion = us-east-1\n[profile lab]\nregion = us-east-1\n"
        f"aws_access_key_id = {KEY_ID}\naws_secret_access_key "
        f"= {SECRET}\naws_session_token = {TOKEN}\n"
    )
    env = {
        "AWS_ACCESS_KEY_ID": KEY_ID,
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_SESSION_TOKEN": TOKEN,
        "AWS_SHARED_CREDENTIALS_FILE": str(credentials),
        "AWS_CONFIG_FILE": str(config),
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        patch.delenv("AWS_PROFILE", raising=False)
        yield env


@pytest.fixture(scope="module")
def leaky_lab(
    spawn_emulator, secret_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningEmulator]:
    """q05 played with the secret in the environment, then its worker prints credentials."""
    running = spawn_emulator(tmp_path_factory.mktemp("emulator"))
    try:
        player = LabPlayer("q05", endpoint_url=running.endpoint_url, log=lambda s: None)
        player.setup()
        player.play(until="repeats")
        lam = running.client("lambda")
        lam.update_function_code(
            FunctionName="labex-q05-worker", ZipFile=zip_code(LEAKY_WORKER, "worker.py")
        )
        wait_for(
            lambda: (
                lam.get_function_configuration(FunctionName="labex-q05-worker").get(
                    "LastUpdateStatus"
                )
                in (None, "Successful")
            )
        )
        lam.update_function_configuration(
            FunctionName="labex-q05-worker",
            Handler="worker.handler",
            Environment={"Variables": {"WORKER_MODE": "leaky", "TABLE_NAME": "x"}},
        )
        wait_for(
            lambda: (
                lam.get_function_configuration(FunctionName="labex-q05-worker").get(
                    "LastUpdateStatus"
                )
                in (None, "Successful")
            )
        )
        answer = lam.invoke(FunctionName="labex-q05-worker", Payload=b"{}")
        assert answer.get("FunctionError") == "Unhandled"
        yield running
    finally:
        running.stop()


def _dump(running: RunningEmulator, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return processes.awsview("dump", *args, env={**running.env, **env}, timeout=60)


def _assert_never_shown(where: str, text: str) -> None:
    for secret in NEVER:
        assert secret not in text, f"{where} shows {secret!r}"


def test_dump_never_prints_the_secret(
    starts_processes, leaky_lab: RunningEmulator, secret_env: dict[str, str]
):
    url = leaky_lab.endpoint_url
    shown = []
    for args in (
        ["--lab", "q05"],
        ["--lab", "q05", "--json"],
        [],
        ["--prefix", "labex-", "--json"],
    ):
        done = _dump(leaky_lab, secret_env, "--endpoint-url", url, *args)
        assert done.returncode == 0, done.stderr
        _assert_never_shown(f"awsview dump {' '.join(args)}", done.stdout + done.stderr)
        shown.append(done.stdout)
    text = shown[0]
    assert "‹redacted›" in text and "RESULT" in text and "WORKER_MODE" not in text
    assert KEY_ID not in text  # an access key id is redacted too
    payload = json.loads(shown[1])
    functions = json.dumps(payload["snapshots"]["functions"])
    assert "WORKER_MODE" in functions and "leaky" not in functions  # names only, never values
    # The same with a named profile from the config file, and with credentials the endpoint refuses.
    profile_env = {
        k: v
        for k, v in secret_env.items()
        if not k.startswith(("AWS_ACCESS", "AWS_SECRET", "AWS_SESSION"))
    }
    done = _dump(
        leaky_lab,
        {
            **profile_env,
            "AWS_ACCESS_KEY_ID": "",
            "AWS_SECRET_ACCESS_KEY": "",
            "AWS_SESSION_TOKEN": "",
        },
        "--endpoint-url",
        url,
        "--profile",
        "lab",
        "--lab",
        "q05",
    )
    assert done.returncode == 0, done.stderr
    _assert_never_shown("awsview dump --profile lab", done.stdout + done.stderr)
    refused = _dump(
        leaky_lab, {**secret_env, "AWS_ACCESS_KEY_ID": "INVALIDKEY9F3C"}, "--endpoint-url", url
    )
    assert refused.returncode == 2 and "credentials not recognised" in refused.stderr
    _assert_never_shown("awsview dump with refused credentials", refused.stdout + refused.stderr)


async def test_panels_details_and_json_never_show_the_secret(leaky_lab: RunningEmulator):
    from awsview.core.details import describe
    from awsview.core.feed import PanelFeed

    profile = labspec.load("q05")
    async with Connection(Target(endpoint_url=leaky_lab.endpoint_url)) as conn:
        scheduler = Scheduler(conn, profile)
        model = await scheduler.run_once()
        await scheduler.stop()
    now = time.time()
    panels = render.panels(model, profile, now)
    logs = [r for p in panels if p.name == "logs" for r in p.rows]
    assert any("‹redacted›" in c for r in logs for c in r.cells) and len(logs) > 20
    everything = [
        as_text(profile, model, conn.describe(), "123456789012", now),
        json.dumps(as_json(profile, model, conn.describe(), "123456789012", now), default=str),
    ]
    for shown in PanelFeed().panels(model, profile, now):
        for row in shown.panel.rows:
            detail = describe(model, shown.panel, shown.id, row.key)
            everything.append(json.dumps(dataclasses.asdict(detail), default=str))
    for text in everything:
        _assert_never_shown("a panel, a detail or the JSON dump", text)


async def test_app_screens_never_show_the_secret(leaky_lab: RunningEmulator):
    pytest.importorskip("awsview.ui.viewer.app", reason="the Textual UI is not importable yet")
    from awsview.ui.viewer.app import AWSViewApp
    from awsview.ui.viewer.panel import PanelView
    from awsview.ui.viewer.screens import DetailScreen

    app = AWSViewApp(target=Target(endpoint_url=leaky_lab.endpoint_url), lab="q05")
    async with app.run_test(size=(180, 60)) as pilot:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            await pilot.pause(0.2)
            feeds = [
                s
                for s in (app.model.snapshots.values() if app.model else ())
                if s.key.startswith("logs:")
            ]
            if (
                feeds
                and feeds[0].data is not None
                and any("RESULT" == e.line.kind for e in feeds[0].data.lines)
            ):
                break
        await pilot.pause(0.5)
        screens = [app.export_screenshot()]
        logs = next(v for v in app.query(PanelView) if v.kind == "logs")
        for index in range(
            max(0, logs.table.row_count - 14), logs.table.row_count
        ):  # the leaky lines' details
            app.board.visit(logs)
            logs.table.move_cursor(row=index)
            await pilot.press("enter")
            await pilot.pause()
            if isinstance(app.screen, DetailScreen):
                screens.append(app.export_screenshot())
                await pilot.press("escape")
                await pilot.pause()
    assert len(screens) > 8
    for screen in screens:
        _assert_never_shown("the app's screen", screen)


async def test_a_recording_never_holds_the_secret(leaky_lab: RunningEmulator, tmp_path):
    """Every byte of a recording, raw and decompressed, made with the secret in the environment."""
    import asyncio

    import zstandard

    from awsview.recording.file import KEYFRAME, Recording
    from awsview.recording.follow import open_recording, record_headless

    path = tmp_path / "leaky.rec"
    writer = open_recording(path, "test")
    task = asyncio.create_task(
        record_headless(Target(endpoint_url=leaky_lab.endpoint_url), "q05", "", writer)
    )

    def logged() -> bool:
        try:
            player = Recording(path).player(0)
            feed = player.state(player.last).snapshots.get("logs:/aws/lambda/labex-q05-worker")
            return (
                feed is not None
                and feed.data is not None
                and any("redacted" in e.line.text for e in feed.data.lines)
            )
        except Exception:
            return False

    deadline = time.monotonic() + 30
    while not logged() and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert logged()
    raw = path.read_bytes()
    recording = Recording(path)
    plain = []
    for marks in recording.marks.values():
        decompressor = None
        for mark in marks:
            if mark.kind == KEYFRAME:
                decompressor = zstandard.ZstdDecompressor().decompressobj()
            plain.append(decompressor.decompress(raw[mark.offset : mark.offset + mark.size]))
    everything = raw + b"".join(plain)
    for secret in NEVER:
        assert secret.encode() not in everything
    assert KEY_ID.encode() not in everything
    info = recording.channels[0]
    assert info["endpoint_url"] == leaky_lab.endpoint_url and info["backend"] == "endpoint"
    said = (
        recording.player(0).state(recording.player(0).last).meta
    )  # as the connection resolved them
    assert said["account"] == "123456789012" and said["region"] == "us-east-1"
