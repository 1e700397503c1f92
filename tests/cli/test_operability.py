"""Operability: the log file (--log-file, AWSVIEW_LOG) records failed calls, retries, throttles
and recoveries with their API and time; AWSVIEW_TOKEN keeps serve's token out of `ps`; the theme
and the usage line are remembered in $XDG_CONFIG_HOME/awsview/config.toml."""

from __future__ import annotations

import asyncio
import json
import os
import re
import time

import pytest

from awsview.aws.log import configure, stop
from awsview.aws.session import Connection, Target
from awsview.labspec import load
from awsview.polling.scheduler import Scheduler
from awsview.ui import preferences
from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
from tests.support.sample import sample

STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ")


@pytest.fixture
def log_file(tmp_path):
    """The log file for this test; logging is off again afterwards."""
    saved = os.environ.get("AWSVIEW_LOG")
    path = tmp_path / "awsview.log"
    yield path
    stop()
    if saved is None:
        os.environ.pop("AWSVIEW_LOG", None)
    else:
        os.environ["AWSVIEW_LOG"] = saved


def test_log_file_records_the_failed_call_with_its_api(awsview, tmp_path):
    log = tmp_path / "dump.log"
    result = awsview("dump", "--endpoint-url", "http://127.0.0.1:9", "--log-file", str(log))
    assert result.returncode == 1
    lines = log.read_text().splitlines()
    assert any(
        STAMP.match(line) and "WARNING call sts:GetCallerIdentity: connection refused" in line
        for line in lines
    ), lines
    by_env = tmp_path / "env.log"
    awsview("--endpoint-url", "http://127.0.0.1:9", "dump", env={"AWSVIEW_LOG": str(by_env)})
    assert "sts:GetCallerIdentity: connection refused" in by_env.read_text()


def test_an_unwritable_log_file_is_one_line(awsview, tmp_path):
    result = awsview(
        "dump",
        "--log-file",
        str(tmp_path / "missing" / "dir" / "x.log"),
        "--endpoint-url",
        "http://127.0.0.1:9",
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert (
        result.stderr.startswith("awsview: cannot write the log file ")
        and len(result.stderr.splitlines()) == 1
    )


async def test_throttles_retries_and_recovery_are_logged(emulator, log_file):
    configure(log_file)
    faults = emulator.state_dir / "faults.json"
    faults.write_text(json.dumps({"throttle": 1.0}))  # every viewer call throttled
    try:
        async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
            scheduler = Scheduler(conn, load("q05"), speed=0.1)
            scheduler.start()
            try:
                deadline = time.monotonic() + 60
                while (
                    "poll queues: retry in" not in log_file.read_text()
                    and time.monotonic() < deadline
                ):
                    await asyncio.sleep(0.2)
                faults.unlink()
                while (
                    "poll queues: recovered" not in log_file.read_text()
                    and time.monotonic() < deadline
                ):
                    await asyncio.sleep(0.2)
            finally:
                await scheduler.stop()
    finally:
        faults.unlink(missing_ok=True)
    text = log_file.read_text()
    assert re.search(r"WARNING call sqs:ListQueues: throttled \(ThrottlingException\)", text), text
    assert re.search(r"INFO poll queues: retry in [\d.]+ s after throttled", text), text
    assert "INFO poll queues: recovered" in text


def test_awsview_token_is_read_from_the_environment(awsview):
    refused = awsview("serve", "--host", "0.0.0.0", "--endpoint-url", "http://127.0.0.1:9")
    assert refused.returncode == 2 and "set AWSVIEW_TOKEN or pass --token" in refused.stderr
    short = awsview(
        "serve",
        "--host",
        "0.0.0.0",
        "--endpoint-url",
        "http://127.0.0.1:9",
        env={"AWSVIEW_TOKEN": "short"},
    )
    assert short.returncode == 2 and "at least 12 characters" in short.stderr


async def test_the_theme_and_usage_picked_are_remembered():
    preferences.path().unlink(missing_ok=True)
    profile, model = sample("q05")
    app = AWSViewApp(model=model, profile=profile, options=ViewerOptions(remember=True))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("t")
        await pilot.pause()
        picked = app.theme
        await pilot.press("u")
        await pilot.pause()
    assert preferences.load() == ({"theme": picked, "usage": True}, None)
    assert "theme = " in preferences.path().read_text()
    again = AWSViewApp(
        model=model, profile=profile, options=ViewerOptions(theme=preferences.load()[0]["theme"])
    )
    async with again.run_test(size=(100, 30)):
        assert again.theme == picked
    unremembered = AWSViewApp(model=model, profile=profile)  # tests, screenshots, docs: never saved
    async with unremembered.run_test(size=(100, 30)) as pilot:
        await pilot.press("t")
    assert preferences.load()[0]["theme"] == picked
    preferences.path().unlink()


def test_a_bad_preferences_file_is_ignored_with_one_line():
    file = preferences.path()
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text("theme = [\n")
    kept, problem = preferences.load()
    assert kept == {} and problem.startswith(str(file)) and problem.endswith("(ignored)")
    file.write_text('theme = 3\ncolour = "red"\nusage = true\n')
    kept, problem = preferences.load()
    assert kept == {"usage": True} and "ignored colour, theme" in problem
    file.unlink()
