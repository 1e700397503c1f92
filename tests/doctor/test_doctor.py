"""`awsview doctor` on three real backends: the embedded emulator, a stock moto server, and the
emulator behind a loopback proxy that answers Step Functions calls as a backend without that
service does. Each says per panel what is exact, inferred or missing, and what to do.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import boto3
import pytest

from awsview.aws.session import Target
from awsview.doctor.diagnosis import EXACT, INFERRED, MISSING, diagnose
from awsview.labs.player import LabPlayer
from tests.support.cli import awsview_here
from tests.support.emulator import CREDENTIALS, REGION, RunningEmulator
from tests.support.proxy import Intercepting, proxy


@pytest.fixture(scope="module")
def moto_server(stock_moto) -> Iterator[str]:
    """A stock moto server (no AWS View additions), on a free port."""
    server = stock_moto()
    try:
        yield server.url
    finally:
        server.stop()


class _NoStepFunctions(Intercepting):
    """Forwards everything to the emulator except Step Functions, which it does not know."""

    def intercept(self, body: bytes) -> tuple[int, str, bytes] | None:
        if not self.headers.get("X-Amz-Target", "").startswith("AWSStepFunctions."):
            return None
        answer = {
            "__type": "UnknownOperationException",
            "message": "Step Functions is not enabled on this backend",
        }
        return 400, "application/x-amz-json-1.0", json.dumps(answer).encode()


@pytest.fixture(scope="module")
def no_step_functions(emulator: RunningEmulator) -> Iterator[str]:
    with proxy(_NoStepFunctions, emulator.port) as url:
        yield url


def _levels(diagnosis) -> dict[str, str]:
    return {v.panel: v.level for v in diagnosis.panels}


async def test_on_the_embedded_emulator_every_panel_is_exact(emulator: RunningEmulator):
    LabPlayer("q05", endpoint_url=emulator.endpoint_url, log=lambda line: None).setup()
    diagnosis = await diagnose(Target(endpoint_url=emulator.endpoint_url), "q05")
    assert diagnosis.backend == "AWS View emulator" and diagnosis.account == "123456789012"
    assert set(_levels(diagnosis).values()) == {EXACT}
    assert diagnosis.probe("emulator journal").state == "ok"
    feed = diagnosis.probe("change feed")
    assert feed.state == "ok" or feed.detail.startswith("no change feed: polled")
    assert (
        diagnosis.probe("stream labex-q05-orders").state == "absent"
    )  # no stream, and the journal is exact
    assert "exact" in diagnosis.summary and diagnosis.summary.startswith(
        "backend: AWS View emulator"
    )
    ev04 = await diagnose(Target(endpoint_url=emulator.endpoint_url), "ev04")
    assert _levels(ev04)["executions"] == EXACT


async def test_on_stock_moto_decisions_are_inferred_and_a_stream_is_advised(
    awsview, moto_server: str
):
    ddb = boto3.client("dynamodb", endpoint_url=moto_server, region_name=REGION, **CREDENTIALS)
    ddb.create_table(
        TableName="labex-q05-orders",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    diagnosis = await diagnose(Target(endpoint_url=moto_server), "q05")
    assert diagnosis.backend == "an AWS-compatible endpoint (not the AWS View emulator)"
    assert diagnosis.probe("emulator journal").state == "absent"
    assert diagnosis.probe("change feed").detail.startswith("no change feed: polled")
    decisions = diagnosis.panel("decisions")
    assert decisions.level == INFERRED and "RESULT lines" in decisions.why
    assert (
        "update-table --table-name labex-q05-orders" in decisions.fix
        and "NEW_AND_OLD_IMAGES" in decisions.fix
    )
    assert _levels(diagnosis)["tables"] == EXACT and _levels(diagnosis)["queues"] == EXACT
    # With the stream the advice asked for, accepted writes come from it; rejections stay unseen.
    ddb.update_table(
        TableName="labex-q05-orders",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    streamed = await diagnose(Target(endpoint_url=moto_server), "q05")
    assert streamed.panel("decisions").level == INFERRED
    assert (
        "DynamoDB Streams" in streamed.panel("decisions").why
        and "rejected writes" in streamed.panel("decisions").why
    )
    ev04 = await diagnose(Target(endpoint_url=moto_server), "ev04")
    assert _levels(ev04)["executions"] == EXACT  # moto answers Step Functions reads
    done = awsview(
        "doctor",
        "--endpoint-url",
        moto_server,
        "--lab",
        "q05",
        timeout=60,
        env={"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"},
    )
    assert done.returncode == 0, done.stderr
    assert (
        "decisions" in done.stdout
        and "inferred" in done.stdout
        and "nothing was changed" in done.stdout
    )


async def test_without_step_functions_the_workflow_panels_are_missing(no_step_functions: str):
    diagnosis = await diagnose(Target(endpoint_url=no_step_functions), "ev04")
    levels = _levels(diagnosis)
    for panel in ("state_machines", "executions", "history", "retries"):
        assert levels[panel] == MISSING, panel
        verdict = diagnosis.panel(panel)
        assert "not on this backend" in verdict.why and "Step Functions" in verdict.fix
    assert diagnosis.probe("step functions").state == "unavailable"
    assert levels["decisions"] == EXACT  # the emulator's journal is still there
    assert levels["checkpoints"] == MISSING
    assert "missing" in diagnosis.summary


def test_doctor_says_an_unreachable_endpoint_in_one_line():
    done = awsview_here("doctor", "--endpoint-url", "http://127.0.0.1:9")
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


async def test_the_viewer_says_it_in_the_status_line_and_the_help(emulator: RunningEmulator):
    from awsview.ui.viewer.app import AWSViewApp
    from awsview.ui.viewer.screens import HelpScreen

    app = AWSViewApp(target=Target(endpoint_url=emulator.endpoint_url), lab="q05")
    async with app.run_test(size=(200, 40)) as pilot:
        deadline = time.monotonic() + 60
        while app.diagnosis is None and time.monotonic() < deadline:
            await pilot.pause(0.2)
        assert app.diagnosis is not None
        await pilot.pause()
        assert "backend: AWS View emulator · all panels exact" in str(
            app.query_one("#status").render()
        )
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert "This backend: AWS View emulator" in app.screen.backend
