"""The command palette switches lab, AWS profile, region and theme without a restart: the old
target's pollers, connection and probe stop (no task or client session left), the new target's
start, and a target that cannot work shows the error, never "empty"."""

from __future__ import annotations

import asyncio
import gc

import aiohttp
import pytest

from awsview.aws.session import Target
from awsview.labs.player import LabPlayer
from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
from awsview.ui.viewer.presenter import Presenter
from tests.support import sample
from tests.support.helpers import palette, status, until
from tests.support.probe import body, full_rows, view

pytestmark = pytest.mark.timeout(180)


def titles(app: AWSViewApp) -> list[str]:
    return [command.title for command in app.get_system_commands(app.screen)]


def open_sessions() -> int:
    gc.unfreeze()  # the viewer freezes what lives long; get_objects() does not see it then
    return sum(1 for o in gc.get_objects() if isinstance(o, aiohttp.ClientSession) and not o.closed)


@pytest.fixture(scope="module")
def two_labs(spawn_emulator, tmp_path_factory):
    """One emulator with two labs set up on it: q05's and ev04's provided resources."""
    running = spawn_emulator(tmp_path_factory.mktemp("two-labs"))
    for lab in ("q05", "ev04"):
        LabPlayer(lab, endpoint_url=running.endpoint_url, log=lambda line: None).setup()
    yield running
    running.stop()


@pytest.fixture
def aws_profiles(tmp_path, monkeypatch, two_labs):
    """A config file with a profile on the emulator, one on an endpoint that does not answer,
    and one whose credentials cannot be fetched."""
    config = tmp_path / "config"
    config.write_text(
        "[profile lab]\n"
        f"endpoint_url = {two_labs.endpoint_url}\nregion = us-east-1\n"
        "[profile down]\n"
        "endpoint_url = http://127.0.0.1:9\nregion = us-east-1\n"
        "[profile expired]\n"
        "region = us-east-1\ncredential_process = false\n"
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    return two_labs


async def test_switch_lab_shows_the_other_labs_layout(two_labs):
    app = AWSViewApp(
        target=Target(endpoint_url=two_labs.endpoint_url, region="us-east-1"),
        lab="q05",
        options=ViewerOptions(poll_speed=0.3),
    )
    async with app.run_test(size=(140, 50)) as pilot:
        await until(pilot, lambda: "tables:labex-q05-orders" in app.board.views, what="q05")
        assert "Switch lab…" in titles(app)
        await palette(pilot, app, "Switch lab…", "ev04")
        await until(
            pilot,
            lambda: app.profile is not None and app.profile.name == "ev04",
            what="ev04 shown",
        )
        await until(
            pilot,
            lambda: (
                "tables:labex-ev04-reference" in app.board.views
                and full_rows(app, "tables:labex-ev04-reference")
            ),
            what="ev04's reference table",
        )
        assert "executions" in app.board.views and "queues" not in app.board.views
        assert not any("q05" in ident for ident in app.board.views)
        assert "Retry a failed step" in status(app)
        await palette(pilot, app, "Switch lab…", "no lab / prefix only")
        await until(pilot, lambda: app.profile.generic, what="no lab")


async def test_switch_region_and_profile(aws_profiles):
    app = AWSViewApp(target=Target(profile="lab"), lab="q05", options=ViewerOptions(poll_speed=0.3))
    async with app.run_test(size=(140, 50)) as pilot:
        await until(
            pilot,
            lambda: (
                "functions" in app.board.views
                and any("labex-q05-worker" in row for row in full_rows(app, "functions"))
            ),
            what="q05's function in us-east-1",
        )
        await palette(pilot, app, "Switch region…", "us-west-2")
        await until(pilot, lambda: "us-west-2" in status(app), what="the new region said")
        await until(
            pilot,
            lambda: (
                "functions" in app.board.views
                and body(app, "functions").startswith("no ")
                and body(app, "queues") == "no queues"
            ),
            what="empty but fine in us-west-2",
        )
        assert not view(app, "functions").has_class("-error")

        # Credentials that cannot be fetched: refused in one line, the old target polled on.
        await palette(pilot, app, "Switch AWS profile…", "expired")
        await until(
            pilot,
            lambda: any("cannot switch" in str(n.message) for n in app._notifications),
            what="the refusal",
        )
        assert app.target.profile == "lab" and "us-west-2" in status(app)

        await palette(pilot, app, "Switch AWS profile…", "down")
        await until(
            pilot,
            lambda: "queues" in app.board.views and view(app, "queues").has_class("-error"),
            what="the error of an endpoint that does not answer",
        )
        assert "connection refused" in body(app, "queues")
        assert "profile down" in status(app)


async def test_switching_leaves_no_task_or_client_session(aws_profiles):
    app = AWSViewApp(target=Target(profile="lab"), lab="q05", options=ViewerOptions(poll_speed=0.3))
    async with app.run_test(size=(140, 50)) as pilot:

        async def settled(region: str) -> None:
            await until(
                pilot,
                lambda: (
                    app.live is not None
                    and app.live.region == region
                    and app.diagnosis is not None
                    and "queues" in app.board.views
                    and "waiting" not in body(app, "queues")
                ),
                what=f"polling {region}",
            )

        await settled("us-east-1")
        old_tasks = {t for t in asyncio.all_tasks() if t.get_name().startswith("poll-")}
        old_conn, sessions = app.live.conn, open_sessions()
        assert old_tasks and sessions
        for region in ("us-west-2", "us-east-1"):
            await palette(pilot, app, "Switch region…", region)
            await settled(region)
        assert all(task.done() for task in old_tasks)
        assert app.live.conn is not old_conn and not old_conn._clients
        polling = [t for t in asyncio.all_tasks() if t.get_name().startswith("poll-")]
        assert len(polling) == len(old_tasks)
        await until(pilot, lambda: open_sessions() <= sessions, what="old sessions closed")


async def test_switch_theme():
    profile, model = sample.sample("ev04")
    app = AWSViewApp(model=model, profile=profile, options=ViewerOptions(clock=lambda: sample.NOW))
    async with app.run_test(size=(120, 40)) as pilot:
        other = next(name for name in app.awsview_themes if name != app.theme)
        await palette(pilot, app, "Switch theme…", other)
        await until(pilot, lambda: app.theme == other, what="the theme picked")
        assert "Theme" not in titles(app)  # Textual's own list would offer its themes too


async def test_no_switch_in_a_presenter_screen_or_a_replay():
    profile, model = sample.sample("ev04")
    app = AWSViewApp(model=model, profile=profile, presenter=Presenter())
    async with app.run_test(size=(120, 40)):
        assert not [t for t in titles(app) if t.startswith("Switch")]
    from awsview.ui.viewer.replay import ReplayApp

    assert ReplayApp.SWITCHES is False


async def test_a_switch_to_a_real_account_is_announced_and_a_broken_one_refused(
    starts_processes, tmp_path, monkeypatch
):  # the expired profile's credential_process runs `false`
    from awsview.ui.viewer import switching

    config = tmp_path / "config"
    config.write_text(
        "[profile real]\nregion = eu-west-1\n"
        "aws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = secret\n"
        "[profile expired]\nregion = eu-west-1\ncredential_process = false\n"
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    problem, announcement = await switching.check(Target(profile="real"))
    assert problem is None and "real AWS account" in announcement and "eu-west-1" in announcement
    assert "secret" not in announcement
    problem, announcement = await switching.check(Target(profile="expired"))
    assert announcement is None and problem.startswith("profile 'expired'")
    problem, _ = await switching.check(Target(profile="real", region="eu-wset-1"))
    assert "did you mean eu-west-1" in problem
