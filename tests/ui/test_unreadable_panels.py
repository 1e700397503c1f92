"""A panel that could not read says why, every one of them: with no credentials at all the
write-decision, idempotency and checkpoint panels show the reason, not "no write decisions".

The app is pointed at AWS itself with no credentials: botocore refuses to sign, so no request
leaves the machine."""

from __future__ import annotations

import time

from awsview import labspec
from awsview.aws.session import Target
from awsview.core.render import panels
from awsview.core.timeline import Timeline
from awsview.model.snapshot import absent, failed, succeeded
from awsview.model.state import LabState
from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
from tests.support.helpers import status, until
from tests.support.probe import body, view

NO_CREDENTIALS = "no AWS credentials found"


def says(app, ident: str) -> str:
    return " ".join(body(app, ident).split())  # the body wraps at the panel's width


def test_timeline_panels_take_the_reason_of_their_evidence():
    profile = labspec.load("q05")
    model = LabState()
    model.apply(
        [
            absent(None, "journal", "journal", "no write-decision journal on real AWS"),
            failed(
                None, "table", "table:labex-q05-orders", "credentials expired (ExpiredToken: …)"
            ),
            succeeded(None, "timeline", "timeline", Timeline(keys=(), sources=(), missing=())),
            succeeded(None, "checkpoints", "checkpoints", ()),
        ]
    )
    shown = {p.name: p for p in panels(model, profile, time.time())}
    for name in ("decisions", "verdicts", "checkpoints"):
        assert shown[name].health == "error", name
        # Each derived panel names the input it could not read.
        assert shown[name].body_text == "error — table: credentials expired (ExpiredToken: …)", name
    model.apply(
        [succeeded(None, "table", "table:labex-q05-orders", None)]
    )  # read: now "none" is true
    shown = {p.name: p for p in panels(model, profile, time.time())}
    assert shown["decisions"].body_text == "no write decisions"


async def test_no_credentials_every_panel_says_so():
    app = AWSViewApp(
        target=Target(region="us-east-1"), lab="q05", options=ViewerOptions(poll_speed=0.3)
    )
    async with app.run_test(size=(160, 60)) as pilot:
        await until(pilot, lambda: NO_CREDENTIALS in status(app), what="status says why")
        panels = ("decisions", "verdicts", "queues", "functions", "tables:labex-q05-orders")
        # Each panel says so once its own first poll failed: on a busy machine not all at once.
        await until(
            pilot,
            lambda: (
                all(i in app.board.views for i in ("decisions", "verdicts", "checkpoints:q05"))
                and all(NO_CREDENTIALS in says(app, ident) for ident in panels)
            ),
            what="every panel says why",
        )
        for ident in panels:
            assert view(app, ident).has_class("-error"), ident
        assert "aws sso login" in status(app) or "awsview demo" in status(app)


async def test_a_state_machine_deleted_mid_poll_leaves_the_others_listed(emulator):
    """Found by the fault soak: a machine deleted between ListStateMachines and its
    DescribeStateMachine turned the whole listing ABSENT."""
    import json

    from awsview.aws.session import Connection
    from awsview.labspec import generic_spec
    from awsview.polling.pollers.stepfunctions import StateMachinePoller

    sfn = emulator.client("stepfunctions")
    definition = json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}})
    arns = {
        name: sfn.create_state_machine(
            name=name, definition=definition, roleArn="arn:aws:iam::123456789012:role/race"
        )["stateMachineArn"]
        for name in ("race-a", "race-b")
    }
    poller, model = StateMachinePoller(generic_spec("race-")), LabState()
    async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
        call = conn.call

        async def deleting_first(service, method, **params):
            if (
                method == "describe_state_machine"
                and params.get("stateMachineArn") == arns["race-a"]
            ):
                sfn.delete_state_machine(stateMachineArn=arns["race-a"])
            return await call(service, method, **params)

        conn.call = deleting_first
        model.apply(await poller.poll(conn, model))
    snapshot = model.get("state_machines")
    assert snapshot.health.value == "ok", snapshot.freshness()
    assert [m.name for m in snapshot.data] == ["race-b"]
