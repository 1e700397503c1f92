"""Stock moto does not run executions: its GetExecutionHistory answers one fixed example (a Pass
state "A State", dated 2020-01-01) for every execution. AWS View says so on the history panel
instead of presenting it as what the execution did, and explains no attempts from it."""

from __future__ import annotations

import json

import boto3
import pytest

from awsview.labs.player import LabPlayer
from tests.support import processes
from tests.support.emulator import CREDENTIALS, REGION


@pytest.fixture(scope="module")
def moto_url(stock_moto, tmp_path_factory):
    server = stock_moto(cwd=tmp_path_factory.mktemp("moto"))
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="module")
def with_execution(moto_url):
    """ev04 set up on stock moto, its workflow created and one execution started."""
    player = LabPlayer("ev04", endpoint_url=moto_url, log=lambda line: None)
    player.setup()
    player.play(until="workflow")
    sfn = boto3.client("stepfunctions", endpoint_url=moto_url, region_name=REGION, **CREDENTIALS)
    machine = sfn.list_state_machines()["stateMachines"][0]["stateMachineArn"]
    sfn.start_execution(
        stateMachineArn=machine, name="retry-order", input=json.dumps({"id": "retry-order"})
    )
    return moto_url


def test_stock_moto_s_example_history_is_named_as_such(starts_processes, with_execution):
    moto_url = with_execution
    env = {
        "AWS_ACCESS_KEY_ID": CREDENTIALS["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": CREDENTIALS["aws_secret_access_key"],
        "AWS_DEFAULT_REGION": REGION,
    }
    done = processes.awsview(
        "dump", "--endpoint-url", moto_url, "--lab", "ev04", env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    title = next(line for line in lines if line.startswith("== History · retry-order"))
    assert "not this execution's" in title and "2020-01-01" in title
    assert "stock moto" in title
    retries = lines[lines.index(next(x for x in lines if x.startswith("== Retry / Catch"))) + 1]
    assert "no task attempts yet" in retries  # nothing explained from the example


async def test_the_doctor_says_the_histories_are_an_example(with_execution):
    moto_url = with_execution
    from awsview.aws.session import Target
    from awsview.doctor.diagnosis import EXACT, MISSING, diagnose

    diagnosis = await diagnose(Target(endpoint_url=moto_url), "ev04")
    probe = diagnosis.probe("step functions")
    assert probe.state == "example" and "2020-01-01" in probe.detail, probe
    assert "awsview emulator" in probe.fix
    assert diagnosis.panel("executions").level == EXACT
    for panel in ("history", "retries"):
        verdict = diagnosis.panel(panel)
        assert verdict.level == MISSING and "fixed example" in verdict.why, verdict
