"""On a polled backend (stock moto: no change feed, as on AWS), a lab's resources that stopped
changing cost only the cheap probes per round: a running execution's history is asked for its
newest event alone, an execution is not described again while its listed status holds, a log
group is read from the last event seen; and in a viewer's own polling loops each of those probes,
and each listing, is asked less often while it finds nothing new."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from typing import Any

from awsview import labspec
from awsview.aws import readonly, session
from awsview.aws.session import Connection, Target
from awsview.model.state import ACTIVE_WINDOW_S
from awsview.polling.quiet import IDLE_CEILING_S, JITTER
from awsview.polling.scheduler import Scheduler
from tests.support.stock_moto import client

PREFIX = "cost-p-"
GROUP = f"/aws/lambda/{PREFIX}worker"
ROLE = "arn:aws:iam::123456789012:role/cost-p-role"


def _lab(url: str) -> None:
    """A machine with a running execution (stock moto never ends one), a log group with lines."""
    sfn, logs = client(url, "stepfunctions"), client(url, "logs")
    definition = {"StartAt": "Done", "States": {"Done": {"Type": "Pass", "End": True}}}
    machine = sfn.create_state_machine(
        name=f"{PREFIX}flow", definition=json.dumps(definition), roleArn=ROLE
    )["stateMachineArn"]
    sfn.start_execution(stateMachineArn=machine, name=f"{PREFIX}run", input="{}")
    logs.create_log_group(logGroupName=GROUP)
    logs.create_log_stream(logGroupName=GROUP, logStreamName="s")
    now = int(time.time() * 1000)  # older lines are refused
    logs.put_log_events(
        logGroupName=GROUP,
        logStreamName="s",
        logEvents=[{"timestamp": now + i, "message": f"line {i}"} for i in range(3)],
    )


async def test_nothing_changing_costs_only_the_probes(stock_moto_url, monkeypatch):
    sent: list[tuple[str, str, dict[str, Any]]] = []

    def recording_guard(client):
        guarded = readonly.guard(client)
        service = client.meta.service_model.service_name
        guarded.meta.events.register(
            "provide-client-params",
            lambda model, params, **_: sent.append((service, model.name, dict(params))),
        )
        return guarded

    monkeypatch.setattr(session, "guard", recording_guard)
    _lab(stock_moto_url)
    async with Connection(Target(endpoint_url=stock_moto_url)) as conn:
        scheduler = Scheduler(conn, labspec.generic_spec(PREFIX), feed=False)
        try:
            assert scheduler.follower is None  # polled, as on AWS
            await scheduler.run_once()  # reads everything
            await scheduler.run_once()
            histories = scheduler.model.with_prefix("history:")
            assert len(histories) == 1 and histories[0].data is not None
            events = histories[0].data.history.events
            assert len(events) > 1 and [e.id for e in events] == list(range(1, len(events) + 1))
            running = scheduler.model.with_prefix("executions:")[0].data
            assert [e.status for e in running] == ["RUNNING"]
            lines = scheduler.model.get(f"logs:{GROUP}").data.lines
            assert len(lines) == 3

            sent.clear()
            await scheduler.run_once()  # nothing changed since
        finally:
            await scheduler.stop()  # its journal's HTTP session too

    calls = [(s, op, p) for s, op, p in sent if s in ("stepfunctions", "logs")]
    histories_read = [p for s, op, p in calls if op == "GetExecutionHistory"]
    assert histories_read and all(p.get("maxResults") == 1 for p in histories_read), (
        "a running execution's unchanged history is asked for its newest event only"
    )
    assert all(p.get("startTime") for s, op, p in calls if op == "FilterLogEvents")
    assert {op for s, op, p in calls} <= {
        "ListStateMachines",
        "ListExecutions",
        "GetExecutionHistory",
        "DescribeLogGroups",
        "FilterLogEvents",
    }
    # And the unchanged history is the one already read: nothing lost, nothing added.
    assert scheduler.model.with_prefix("history:")[0].data.history.events == events


def _quiet_lab(url: str) -> None:
    """Beside _lab's machine and log group: a table (no stream) with an item, a queue."""
    ddb, sqs = client(url, "dynamodb"), client(url, "sqs")
    ddb.create_table(
        TableName=f"{PREFIX}orders",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    ddb.put_item(TableName=f"{PREFIX}orders", Item={"id": {"S": "a"}})
    sqs.create_queue(QueueName=f"{PREFIX}jobs")


# Once nothing changed for a while (the model is idle), over WINDOW_S of a viewer's own polling
# loops every read that keeps finding its resource as it was waits up to quiet.IDLE_CEILING_S.
# The scheduler alone polls each at its slow interval (6-15 s), or at 0.3 s while an execution
# runs (as here): several reads of each over the window.
WINDOW_S = 20.0
MOST = WINDOW_S / ((1 - JITTER) * IDLE_CEILING_S) + 1  # reads of one resource over the window
PROBES = {  # each resource's probe, and the listings
    ("stepfunctions", "ListStateMachines"),
    ("stepfunctions", "DescribeStateMachine"),  # its definition: a listing does not show it
    ("stepfunctions", "ListExecutions"),
    ("stepfunctions", "GetExecutionHistory"),
    ("logs", "DescribeLogGroups"),
    ("logs", "FilterLogEvents"),
    ("dynamodb", "ListTables"),
    ("dynamodb", "DescribeTable"),  # every half minute: a table created again is a new run
    ("dynamodb", "Scan"),
    ("sqs", "ListQueues"),
    ("sqs", "GetQueueAttributes"),
    ("lambda", "ListFunctions"),
    ("lambda", "ListEventSourceMappings"),
    ("iam", "ListRoles"),
}


async def test_a_polled_backend_with_nothing_changing_gets_at_most_the_probes(
    stock_moto_url, monkeypatch
):
    sent: list[tuple[str, str, dict[str, Any]]] = []

    def recording_guard(client):
        guarded = readonly.guard(client)
        service = client.meta.service_model.service_name
        guarded.meta.events.register(
            "provide-client-params",
            lambda model, params, **_: sent.append((service, model.name, dict(params))),
        )
        return guarded

    monkeypatch.setattr(session, "guard", recording_guard)
    _lab(stock_moto_url)
    _quiet_lab(stock_moto_url)
    async with Connection(Target(endpoint_url=stock_moto_url)) as conn:
        scheduler = Scheduler(conn, labspec.generic_spec(PREFIX), feed=False)
        scheduler.start()
        try:
            deadline = time.monotonic() + 60 + ACTIVE_WINDOW_S
            model = scheduler.model
            while (
                not (
                    model.with_prefix("history:")
                    and model.data(f"logs:{GROUP}")
                    and model.data(f"table:{PREFIX}orders")
                    and model.data("queues")
                )
                or model.recently_changed()
            ):
                assert time.monotonic() < deadline, "the model never settled"
                await asyncio.sleep(0.1)
            assert scheduler.active(), "the running execution keeps the scheduler polling fast"
            before, changes = len(sent), model.changed_at
            await asyncio.sleep(WINDOW_S)
            window = sent[before:]
        finally:
            await scheduler.stop()
    assert model.changed_at == changes, "something changed in the window"
    calls = Counter((service, op) for service, op, _ in window)
    assert set(calls) <= PROBES, calls
    # One resource of each: a machine, its execution, a log group, a table, a queue.
    assert all(n <= MOST for n in calls.values()), (calls, MOST)
    histories = [p for s, op, p in window if op == "GetExecutionHistory"]
    assert all(p.get("maxResults") == 1 for p in histories), "the newest event only"
    assert all(p.get("startTime") for s, op, p in window if op == "FilterLogEvents")
