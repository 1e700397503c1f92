"""The viewer polling by itself (what `awsview watch` runs): lab detection, an unreachable
endpoint and bad credentials shown as errors in the panels, the demo driver, and the command
line."""

from __future__ import annotations

import pytest

from awsview.aws.session import Target
from awsview.labs import get_lab
from awsview.labs.demo import DemoDriver
from awsview.labs.player import LabPlayer
from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
from tests.support.helpers import status, until
from tests.support.probe import body, full_rows, screen_lines, view


@pytest.fixture(scope="module")
def q05_ready(emulator):
    LabPlayer("q05", endpoint_url=emulator.endpoint_url, log=lambda line: None).setup()
    return emulator


async def test_watch_detects_the_lab_and_polls_by_itself(q05_ready):
    app = AWSViewApp(
        target=Target(endpoint_url=q05_ready.endpoint_url, region="us-east-1"),
        options=ViewerOptions(poll_speed=0.3),
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await until(
            pilot,
            lambda: app.profile is not None and app.profile.name == "q05",
            what="q05 detected",
        )
        await until(
            pilot,
            lambda: (
                "tables:labex-q05-reference" in app.board.views
                and full_rows(app, "tables:labex-q05-reference")
            ),
            what="reference item shown",
        )
        assert "account 123456789012" in status(app)
        assert full_rows(app, "tables:labex-q05-reference") == [
            ("reference", "note=keep unchanged")
        ]
        await until(pilot, lambda: body(app, "queues") == "no queues", what="empty queues")


async def test_unreachable_endpoint_shows_errors_in_the_panels():
    app = AWSViewApp(
        target=Target(endpoint_url="http://127.0.0.1:9", region="us-east-1"), lab="q05"
    )
    async with app.run_test(size=(100, 40)) as pilot:
        await until(
            pilot,
            lambda: "queues" in app.board.views and view(app, "queues").has_class("-error"),
            what="queues panel in error",
        )
        assert "connection refused" in body(app, "queues")
        assert "connection refused" in status(app) and app.query_one("#status").has_class("-error")
        text = "\n".join(screen_lines(app))
        assert "no queues" not in text and "no items" not in text  # an error never reads as empty


async def test_unreachable_endpoint_without_a_lab_still_opens_with_errors():
    app = AWSViewApp(target=Target(endpoint_url="http://127.0.0.1:9", region="us-east-1"))
    async with app.run_test(size=(100, 40)) as pilot:
        await until(
            pilot,
            lambda: any(v.has_class("-error") for v in app.board.ordered),
            what="an error panel",
        )
        assert app.profile.generic


async def test_bad_credentials_show_as_errors(q05_ready, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "INVALIDKEY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    app = AWSViewApp(
        target=Target(endpoint_url=q05_ready.endpoint_url, region="us-east-1"), lab="q05"
    )
    async with app.run_test(size=(100, 40)) as pilot:
        await until(
            pilot,
            lambda: (
                "tables:labex-q05-orders" in app.board.views
                and view(app, "tables:labex-q05-orders").has_class("-error")
                # the class and the body change in one refresh, painted a frame apart
                and "credentials not recognised" in body(app, "tables:labex-q05-orders")
            ),
            what="orders in error",
        )
        assert "credentials not recognised" in body(app, "tables:labex-q05-orders")
        assert "credentials not recognised" in status(app)


async def test_demo_driver_plays_a_lab_with_pause_and_next(q05_ready):
    driver = DemoDriver([get_lab("q05")], q05_ready.endpoint_url, step_seconds=60)
    app = AWSViewApp(
        target=Target(endpoint_url=q05_ready.endpoint_url, region="us-east-1"),
        lab="q05",
        demo=driver,
        options=ViewerOptions(poll_speed=0.3),
    )
    async with app.run_test(size=(100, 40)) as pilot:
        banner = lambda: str(app.query_one("#banner").render())  # noqa: E731
        await until(pilot, lambda: "q05 step 1/4 next" in banner(), what="first countdown")
        await pilot.press("space")
        await until(pilot, lambda: "paused" in banner(), what="paused banner")
        assert app.query_one("#banner").has_class("-paused")
        for step in range(1, 5):
            await until(
                pilot, lambda s=step: f"step {s}/4 next" in banner(), what=f"countdown {step}"
            )
            await pilot.press("n")
            await until(
                pilot,
                lambda s=step: len(driver.played) >= s,
                timeout=120,
                what=f"step {step} played",
            )
        await until(pilot, lambda: driver.finished, timeout=60, what="demo finished")
        assert driver.played == ["q05:connect", "q05:deploy", "q05:repeats", "q05:cleanup"]
        assert "Demo finished" in banner() and driver.failed is None
        await until(pilot, lambda: body(app, "queues") == "no queues", what="cleanup shown")


@pytest.mark.parametrize(
    "args,message",
    [
        (["watch", "--lab", "ev99"], "unknown lab 'ev99'"),
        (["--theme", "purple"], "unknown theme 'purple'"),
        (["watch", "--endpoint-url", "http://127.0.0.1:9"], "needs a terminal"),
        (["demo"], "needs a terminal"),
    ],
)
def test_command_line_refusals_are_one_line(awsview, args, message):
    result = awsview(*args)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
