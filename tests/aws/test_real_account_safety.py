"""Safe on a real account: a lab writes only where it is local unless told --real-account (and
then says which account and region first); with no known lab on an account the viewer asks for
a name prefix instead of scanning the whole region; the status line can show what watching cost.

"An account" here is the emulator reached as if it were not local (``is_local_url`` says no):
no test reaches AWS, whose paths are tested by their refusals only."""

from __future__ import annotations

import pytest

from awsview.aws.session import Target
from awsview.cli.main import main
from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
from awsview.ui.viewer.screens import PrefixScreen
from tests.support.helpers import status, until


@pytest.fixture
def as_account(monkeypatch):
    """The emulator, seen as an account: its loopback endpoint no longer counts as local, and it
    is not asked whether it is the emulator."""
    monkeypatch.setattr("awsview.aws.session.is_local_url", lambda url: False)
    monkeypatch.setattr("awsview.aws.session.identifies_as_emulator", lambda url, timeout: False)


@pytest.fixture(scope="module")
def myapp(spawn_emulator, tmp_path_factory):
    """An emulator with no lab in it, only an app's tables."""
    emulator = spawn_emulator(tmp_path_factory.mktemp("myapp"))
    dynamodb = emulator.client("dynamodb")
    for name in ("myapp-users", "myapp-orders"):
        dynamodb.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
    dynamodb.put_item(TableName="myapp-users", Item={"id": {"S": "ada"}})
    yield emulator
    emulator.stop()


@pytest.mark.parametrize("action", ["setup", "play", "clean"])
def test_a_lab_refuses_aws_without_real_account(awsview, action):
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "eu-west-1",
    }
    result = awsview("lab", action, "q05", timeout=60, env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == (
        f"awsview: lab {action} q05 would create and delete resources on AWS · "
        "eu-west-1, which is not a local endpoint (loopback or an AWS View emulator): "
        "pass --real-account if that is what you mean"
    )


def test_real_account_says_which_account_and_region_before_writing(
    emulator, as_account, capsys, monkeypatch
):
    # An account's own keys (the lab's commands run with the shell's credentials there).
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    assert main(["lab", "setup", "q05", "--endpoint-url", emulator.endpoint_url]) == 2
    assert "pass --real-account" in capsys.readouterr().err
    assert (
        main(["lab", "setup", "q05", "--endpoint-url", emulator.endpoint_url, "--real-account"])
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0] == "awsview: setup q05 in account 123456789012, region us-east-1 "
        f"({emulator.endpoint_url} · us-east-1)"
    )
    assert any(line.startswith("q05 setup:") for line in out[1:])


def test_dump_on_an_account_needs_a_prefix_and_names_those_found(myapp, as_account, capsys):
    assert main(["dump", "--endpoint-url", myapp.endpoint_url]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "no --prefix" in err and "names found start with myapp- (2)" in err
    assert main(["dump", "--endpoint-url", myapp.endpoint_url, "--prefix", "myapp-"]) == 0
    out = capsys.readouterr().out
    assert "== Table · myapp-users" in out and "ada" in out


async def test_the_viewer_asks_for_a_prefix_and_scans_nothing_until_then(myapp, as_account):
    app = AWSViewApp(
        target=Target(endpoint_url=myapp.endpoint_url), options=ViewerOptions(poll_speed=0.3)
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, PrefixScreen), what="the prefix picker")
        assert "no --prefix" in status(app)
        assert app.screen.found[0] == ("myapp-", 2)
        assert app.live.conn.limiter.calls[("dynamodb", "Scan")] == 0
        await pilot.press("enter")  # the first prefix found
        await until(
            pilot, lambda: "tables:myapp-users" in app.board.views, what="myapp- tables shown"
        )
        assert app.profile.generic and app.profile.prefix == "myapp-"
        await pilot.press("u")
        await until(pilot, lambda: "read units" in status(app), what="usage in the status line")
        assert "API calls" in status(app)


def test_a_local_emulator_may_be_watched_whole(myapp, capsys):
    assert main(["dump", "--endpoint-url", myapp.endpoint_url]) == 0
    assert "== Table · myapp-users" in capsys.readouterr().out
