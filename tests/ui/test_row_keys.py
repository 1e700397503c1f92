"""`y` copies what the focused row is, `Y` the `aws …` command that reads it, `o` opens it in the
AWS console (or says the URL): in the viewer, live on the emulator and on a model, in the
replay, and never on a presenter screen."""

from __future__ import annotations

import json
import shlex

import boto3
import pytest

from awsview.aws.session import Target
from awsview.labs.player import LabPlayer
from awsview.model.resources import Table
from awsview.model.snapshot import Health, Snapshot
from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
from awsview.ui.viewer.presenter import Presenter
from awsview.ui.viewer.replay import ReplayApp
from tests.support import sample
from tests.support.helpers import until
from tests.support.probe import full_rows, settle, view

pytestmark = pytest.mark.usefixtures("utc")


def said(app) -> list[str]:
    return [n.message for n in app._notifications]


async def pick(pilot, app, ident: str, row: int = 0) -> None:
    panel = view(app, ident)
    panel.table.focus()
    panel.table.move_cursor(row=row)
    await pilot.pause()


@pytest.fixture(scope="module")
def q05_ready(emulator):
    LabPlayer("q05", endpoint_url=emulator.endpoint_url, log=lambda line: None).setup()
    return emulator


async def test_y_and_Y_on_the_emulator_copy_the_item_and_a_command_that_reads_it(q05_ready):
    app = AWSViewApp(
        target=Target(endpoint_url=q05_ready.endpoint_url, region="us-east-1"),
        options=ViewerOptions(poll_speed=0.3),
    )
    ident = "tables:labex-q05-reference"
    async with app.run_test(size=(120, 40)) as pilot:
        await until(
            pilot,
            lambda: ident in app.board.views and full_rows(app, ident),
            what="reference item shown",
        )
        await pick(pilot, app, ident)
        await pilot.press("y")
        await until(pilot, lambda: said(app), what="a notification")
        item = json.loads(app.clipboard)
        assert item["note"] == "keep unchanged"
        assert said(app)[-1].startswith("copied item as JSON: {")

        await pilot.press("Y")
        await until(pilot, lambda: len(said(app)) == 2, what="a second notification")
        words = shlex.split(app.clipboard)
        assert words[:5] == ["aws", "dynamodb", "get-item", "--table-name", ident.split(":")[1]]
        assert words[-4:] == ["--region", "us-east-1", "--endpoint-url", q05_ready.endpoint_url]
        assert said(app)[-1].startswith("copied aws command: aws dynamodb get-item")
        # The key in the command reads that very item.
        client = boto3.client(
            "dynamodb",
            endpoint_url=q05_ready.endpoint_url,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )
        got = client.get_item(TableName=words[4], Key=json.loads(words[6]))
        assert got["Item"]["note"] == {"S": "keep unchanged"}

        await pilot.press("o")  # the emulator has no console: its URL is said
        await until(pilot, lambda: len(said(app)) == 3, what="a third notification")
        assert q05_ready.endpoint_url in said(app)[-1]
        assert "console.aws.amazon.com" not in said(app)[-1]


def _on_aws() -> AWSViewApp:
    profile, model = sample.sample("ev04")
    app = AWSViewApp(model=model, profile=profile, options=ViewerOptions(clock=lambda: sample.NOW))
    app.target = Target(region="eu-west-1")  # as read from AWS; nothing is polled here
    return app


async def test_o_without_a_browser_says_the_console_url(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = _on_aws()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pick(pilot, app, "executions", row=1)
        arn = view(app, "executions").cursor_key()
        await pilot.press("o")
        await until(pilot, lambda: said(app), what="a notification")
        url = (
            "https://eu-west-1.console.aws.amazon.com/states/home?region=eu-west-1"
            "#/v2/executions/details/" + arn.replace(":", "%3A")
        )
        assert said(app)[-1] == f"no browser here; open {url}"
        await pilot.press("y")
        await until(pilot, lambda: len(said(app)) == 2, what="a second notification")
        assert app.clipboard == arn
        await pilot.press("Y")
        await until(pilot, lambda: len(said(app)) == 3, what="a third notification")
        assert app.clipboard == (
            f"aws stepfunctions describe-execution --execution-arn {arn} --region eu-west-1"
        )


async def test_o_with_a_browser_opens_the_console_page(monkeypatch):
    opened = []
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr("webbrowser.open", lambda url, new=0: opened.append(url) or True)
    app = _on_aws()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pick(pilot, app, "state_machines")
        await pilot.press("o")
        await until(pilot, lambda: opened, what="the browser asked")
        assert opened[0].startswith(
            "https://eu-west-1.console.aws.amazon.com/states/home?region=eu-west-1"
            "#/statemachines/view/arn%3Aaws%3Astates%3A"
        )


async def test_the_copy_is_the_value_and_the_notification_is_clean():
    profile, model = sample.sample("q05")
    hostile = "\x1b]52;c;ZXZpbA==\x07[bold]x[/bold]\u202eevil"
    model.apply(
        [
            Snapshot(
                "table",
                "table:labex-q05-orders",
                Health.OK,
                Table("labex-q05-orders", "ACTIVE", ("id",), ({"id": "a", "note": hostile},)),
                fetched_at=sample.NOW,
            )
        ]
    )
    app = AWSViewApp(model=model, profile=profile, options=ViewerOptions(clock=lambda: sample.NOW))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pick(pilot, app, "tables:labex-q05-orders")
        await pilot.press("y")
        await until(pilot, lambda: said(app), what="a notification")
        assert json.loads(app.clipboard) == {"id": "a", "note": hostile}
        shown = said(app)[-1]
        assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
        assert "[bold]x[/bold]" in shown  # shown as written, not as markup
        assert [n.markup for n in app._notifications] == [False]


async def test_a_presenter_screen_copies_and_opens_nothing():
    profile, model = sample.sample("ev04")
    app = AWSViewApp(
        model=model,
        profile=profile,
        presenter=Presenter(),
        options=ViewerOptions(clock=lambda: sample.NOW),
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pick(pilot, app, "executions")
        for key in ("y", "Y", "o"):
            await pilot.press(key)
        await settle(pilot)
        assert app._clipboard == "" and not app._notifications


async def test_the_replay_copies_a_command_for_where_it_was_recorded(tmp_path):
    from awsview.recording.file import Recording
    from tests.recording.test_recording import _record

    _record(tmp_path / "q05.rec", steps=2)
    recording = Recording(tmp_path / "q05.rec")
    player = recording.player(recording.channel_named(None))
    app = ReplayApp(player, start=player.last)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pick(pilot, app, "queues")
        await pilot.press("Y")
        await until(pilot, lambda: said(app), what="a notification")
        words = shlex.split(app.clipboard)
        assert words[:4] == ["aws", "sqs", "get-queue-attributes", "--queue-url"]
        assert words[-2:] == ["--endpoint-url", "http://127.0.0.1:5000"]


async def test_the_class_views_lab_panels_copy_for_the_learners_endpoint(q05_ready):
    from awsview.classroom.monitor import Learner
    from awsview.ui.classview.learner import LearnerScreen
    from awsview.ui.classview.view import ClassApp

    app = ClassApp((Learner("Ada", q05_ready.endpoint_url, "q05", region="us-east-1"),))
    ident = "tables:labex-q05-reference"
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "Ada" in app.grid.cards and app.grid.cards["Ada"].status)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, LearnerScreen))
        screen = app.screen
        await until(pilot, lambda: ident in screen.board.views and full_rows(screen, ident))
        await pick(pilot, screen, ident)
        await pilot.press("y")
        await until(pilot, lambda: said(app), what="a notification")
        assert json.loads(app.clipboard)["note"] == "keep unchanged"
        await pilot.press("Y")
        await until(pilot, lambda: len(said(app)) == 2, what="a second notification")
        assert app.clipboard.endswith(f"--region us-east-1 --endpoint-url {q05_ready.endpoint_url}")
