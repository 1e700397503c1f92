"""Polled (stock moto, as on AWS): once a machine's executions were listed, the histories of its
executions that are no longer listed go at once (a server restarted empty), even while another
machine's listing fails; they used to wait until every listing had answered."""

from __future__ import annotations

import json

from awsview import labspec
from awsview.aws.session import Connection, Target
from awsview.model.snapshot import Health, Snapshot
from awsview.model.state import LabState
from awsview.polling.pollers.stepfunctions import (
    EXECUTIONS,
    HISTORY,
    ExecutionPoller,
    StateMachinePoller,
)
from tests.support.stock_moto import client

DEFINITION = json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}})
ROLE = "arn:aws:iam::123456789012:role/labex-sfn"


async def test_a_listed_machine_s_unlisted_histories_go_while_another_listing_fails(
    stock_moto_url,
):
    sfn = client(stock_moto_url, "stepfunctions")
    kept = sfn.create_state_machine(name="labex-kept", definition=DEFINITION, roleArn=ROLE)
    deleted = sfn.create_state_machine(name="labex-deleted", definition=DEFINITION, roleArn=ROLE)
    spec = labspec.generic_spec("labex-")
    model = LabState()
    async with Connection(Target(endpoint_url=stock_moto_url)) as conn:
        model.apply(await StateMachinePoller(spec).poll(conn, model))
        assert {m.name for m in model.data("state_machines", ())} == {"labex-kept", "labex-deleted"}
        # Both machines as last listed; one is deleted before its executions are listed, so that
        # listing fails. The other ran an execution once whose history the viewer still holds,
        # which the server no longer lists (it restarted empty, and the lab created it again).
        sfn.delete_state_machine(stateMachineArn=deleted["stateMachineArn"])
        gone = kept["stateMachineArn"].replace(":stateMachine:", ":execution:") + ":earlier-run"
        model.apply([Snapshot("history", f"{HISTORY}:{gone}", Health.OK, None, fetched_at=1.0)])
        model.apply(await ExecutionPoller(spec).poll(conn, model))
    assert model.get(f"{EXECUTIONS}:labex-kept").health is Health.OK
    assert model.get(f"{EXECUTIONS}:labex-deleted").health is not Health.OK
    assert model.get(f"{HISTORY}:{gone}") is None, "the earlier run's history is still shown"
