"""The emulator's change feed (GET /_awsview/changes) and the viewer following it.

The viewer tests run the scheduler with its polling slowed a hundredfold and its safety poll set
to an hour: a change that reaches the model within the deadline came through the feed, not a poll.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from awsview import labspec
from awsview.aws.session import Connection, Target
from awsview.model.snapshot import Health
from awsview.polling.scheduler import Scheduler
from tests.support.helpers import create_function, create_table, wait_for

PREFIX = "feed-"
SLOW = 100.0  # polling a hundred times slower: 30 s while active, 15 min idle
WAIT_MACHINE = {
    "StartAt": "Pause",
    "States": {
        "Pause": {"Type": "Wait", "Seconds": 1, "Next": "Done"},
        "Done": {"Type": "Succeed"},
    },
}
WORKER = (
    "def handler(event, context):\n"
    "    print('MARK ' + str(event.get('mark')))\n"
    "    return {'ok': True}\n"
)


def changes(url: str, since: int = 0, wait: float = 0, feed: str | None = None) -> dict[str, Any]:
    query = f"since={since}&wait={wait}" + (f"&feed={feed}" if feed else "")
    with urllib.request.urlopen(f"{url}/_awsview/changes?{query}", timeout=wait + 10) as response:
        return json.loads(response.read())


def heard(url: str, since: int, kind: str, name: str, timeout: float = 20.0) -> dict[str, Any]:
    """Long-polls from ``since`` until (kind, name) is reported; returns that change."""
    deadline = time.monotonic() + timeout
    feed = changes(url, since)["feed"]
    while time.monotonic() < deadline:
        page = changes(url, since, wait=min(5.0, max(0.1, deadline - time.monotonic())), feed=feed)
        found = [c for c in page["changes"] if (c["kind"], c["name"]) == (kind, name)]
        if found:
            return found[-1]
        since = page["cursor"]
    raise AssertionError(f"the feed never reported {kind} {name!r}")


def cursor(url: str) -> int:
    return changes(url)["cursor"]


async def until(predicate: Callable[[], Any], timeout: float = 20.0, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except (KeyError, AttributeError, TypeError, StopIteration):
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:.0f} s: {what}")
        await asyncio.sleep(0.05)


# -- the feed itself ---------------------------------------------------------------------------


def test_every_kind_of_change_is_in_the_feed_with_those_the_emulator_makes_itself(emulator):
    url = emulator.endpoint_url
    ddb, sqs, lam, sfn, iam = (
        emulator.client(s) for s in ("dynamodb", "sqs", "lambda", "stepfunctions", "iam")
    )

    start = cursor(url)
    create_table(ddb, "feed-a-orders")
    heard(url, start, "table", "feed-a-orders")
    start = cursor(url)
    ddb.put_item(TableName="feed-a-orders", Item={"id": {"S": "1"}})
    heard(url, start, "table", "feed-a-orders")
    heard(url, start, "journal", "decisions")  # the write decision

    start = cursor(url)
    iam.create_role(RoleName="feed-a-role", AssumeRolePolicyDocument="{}")
    heard(url, start, "role", "feed-a-role")

    start = cursor(url)
    create_function(lam, "feed-a-worker", WORKER)
    heard(url, start, "function", "feed-a-worker")
    start = cursor(url)
    lam.invoke(FunctionName="feed-a-worker", Payload=b'{"mark": 1}')
    heard(url, start, "log_group", "/aws/lambda/feed-a-worker")  # lines the emulator wrote
    heard(url, start, "journal", "invocations")

    dlq = sqs.create_queue(QueueName="feed-a-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    start = cursor(url)
    queue = sqs.create_queue(
        QueueName="feed-a-jobs",
        Attributes={
            "VisibilityTimeout": "1",
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "1"}),
        },
    )["QueueUrl"]
    heard(url, start, "queue", "feed-a-jobs")
    sqs.send_message(QueueUrl=queue, MessageBody="x")
    assert sqs.receive_message(QueueUrl=queue)["Messages"]
    start = cursor(url)  # nothing is asked of the emulator from here …
    back = heard(url, start, "queue", "feed-a-jobs")  # … but the visibility timeout ends
    assert back["cursor"] > start
    assert (
        int(
            sqs.get_queue_attributes(
                QueueUrl=queue, AttributeNames=["ApproximateNumberOfMessages"]
            )["Attributes"]["ApproximateNumberOfMessages"]
        )
        == 1
    )
    start = cursor(url)
    assert not sqs.receive_message(QueueUrl=queue).get("Messages")  # received once: redriven
    heard(url, start, "queue", "feed-a-dlq")

    start = cursor(url)
    mapping = lam.create_event_source_mapping(
        EventSourceArn=sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"],
        FunctionName="feed-a-worker",
        BatchSize=1,
    )["UUID"]
    heard(url, start, "mapping", mapping)
    start = cursor(url)
    heard(url, start, "mapping", mapping)  # Creating → Enabled, with no call in between
    start = cursor(url)
    sqs.send_message(QueueUrl=queue, MessageBody="y")
    sent = cursor(url)
    heard(url, sent, "queue", "feed-a-jobs")  # the emulator's SQS poller received and deleted it
    heard(url, start, "log_group", "/aws/lambda/feed-a-worker")
    wait_for(
        lambda: (
            int(
                sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])["Attributes"][
                    "ApproximateNumberOfMessagesNotVisible"
                ]
            )
            == 0
        )
    )

    start = cursor(url)
    machine = sfn.create_state_machine(
        name="feed-a-flow",
        definition=json.dumps(WAIT_MACHINE),
        roleArn="arn:aws:iam::123456789012:role/feed-a-role",
    )["stateMachineArn"]
    heard(url, start, "state_machine", machine)
    execution = sfn.start_execution(stateMachineArn=machine, name="run-1")["executionArn"]
    started = cursor(url)  # the Wait state ends and the execution succeeds with no call from here
    heard(url, started, "history", execution)  # its next events
    ended = heard(url, started, "execution", execution)  # and its end
    assert sfn.describe_execution(executionArn=execution)["status"] == "SUCCEEDED"
    assert ended["time"] > time.time() - 30


def test_the_feed_answers_at_once_and_waits_only_when_nothing_changed(emulator):
    url = emulator.endpoint_url
    now = changes(url)
    began = time.monotonic()
    quiet = changes(url, now["cursor"], wait=0.5, feed=now["feed"])
    assert time.monotonic() - began >= 0.4 and quiet["changes"] == [] and not quiet["reset"]
    emulator.client("sqs").create_queue(QueueName="feed-b-jobs")
    began = time.monotonic()
    page = changes(url, now["cursor"], wait=20, feed=now["feed"])
    assert time.monotonic() - began < 10 and ("queue", "feed-b-jobs") in {
        (c["kind"], c["name"]) for c in page["changes"]
    }
    assert changes(url, 0, feed="another-emulator")["reset"] is True  # a cursor of another feed


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "HEAD"])
def test_the_feed_is_read_only(emulator, method):
    url = emulator.endpoint_url
    sqs = emulator.client("sqs")
    before, queues = cursor(url), sqs.list_queues().get("QueueUrls", [])
    body = (
        b"Action=CreateQueue&QueueName=feed-c-sneaky"
        if method in ("POST", "PUT", "PATCH")
        else None
    )
    request = urllib.request.Request(
        f"{url}/_awsview/changes?since=0",
        data=body,
        method=method,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 405 and refused.value.headers["Allow"] == "GET"
    assert cursor(url) == before and sqs.list_queues().get("QueueUrls", []) == queues


@pytest.mark.parametrize(
    "query", ["since=abc", "since=0&wait=soon", "since=-1", "since=0&wait=nan"]
)
def test_bad_feed_queries_get_one_clear_line(emulator, query):
    with pytest.raises(urllib.error.HTTPError) as bad:
        urllib.request.urlopen(f"{emulator.endpoint_url}/_awsview/changes?{query}", timeout=10)
    assert bad.value.code == 400 and "error" in json.loads(bad.value.read())


# -- the viewer following it -------------------------------------------------------------------


def _slow_scheduler(conn: Connection, prefix: str = PREFIX) -> Scheduler:
    return Scheduler(conn, labspec.generic_spec(prefix), speed=SLOW, safety=3600.0)


def _rows(scheduler: Scheduler, key: str) -> Any:
    snapshot = scheduler.model.get(key)
    return snapshot.data if snapshot is not None and snapshot.health is Health.OK else None


async def _ready(scheduler: Scheduler) -> None:
    await until(lambda: scheduler.pushed, what="the feed is followed")
    await until(
        lambda: (
            all(
                s.live
                for s in scheduler.model.snapshots.values()
                if s.health is Health.OK and s.kind != "journal"
            )
            and scheduler.model.get("roles")
        ),
        what="the first full read, live",
    )


async def test_every_kind_reaches_the_model_without_waiting_for_a_poll(emulator):
    url = emulator.endpoint_url
    ddb, sqs, lam, sfn, iam = (
        emulator.client(s) for s in ("dynamodb", "sqs", "lambda", "stepfunctions", "iam")
    )
    act = asyncio.to_thread
    async with Connection(Target(endpoint_url=url)) as conn:
        scheduler = _slow_scheduler(conn, "feed-d-")
        scheduler.start()
        try:
            await _ready(scheduler)
            calls = conn.limiter.total_calls

            await act(create_table, ddb, "feed-d-orders")
            await until(lambda: _rows(scheduler, "table:feed-d-orders") is not None, what="table")
            await act(ddb.put_item, TableName="feed-d-orders", Item={"id": {"S": "o-1"}})
            await until(
                lambda: [
                    i for i in _rows(scheduler, "table:feed-d-orders").items if i["id"] == "o-1"
                ],
                what="item",
            )
            await until(lambda: _rows(scheduler, "journal").decisions, what="write decision")

            await act(iam.create_role, RoleName="feed-d-role", AssumeRolePolicyDocument="{}")
            await until(
                lambda: [r for r in _rows(scheduler, "roles") if r.name == "feed-d-role"],
                what="role",
            )
            await act(
                iam.put_role_policy,
                RoleName="feed-d-role",
                PolicyName="p",
                PolicyDocument=json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"}
                        ],
                    }
                ),
            )
            await until(
                lambda: (
                    next(r for r in _rows(scheduler, "roles") if r.name == "feed-d-role").grants
                ),
                what="role policy",
            )

            await act(create_function, lam, "feed-d-worker", WORKER)
            await until(
                lambda: [f for f in _rows(scheduler, "functions") if f.name == "feed-d-worker"],
                what="function",
            )
            await act(lam.invoke, FunctionName="feed-d-worker", Payload=b'{"mark": "logged-1"}')
            await until(
                lambda: [
                    e
                    for e in _rows(scheduler, "logs:/aws/lambda/feed-d-worker").lines
                    if "logged-1" in e.line.text
                ],
                what="log line",
            )

            queue = (
                await act(
                    sqs.create_queue, QueueName="feed-d-jobs", Attributes={"VisibilityTimeout": "1"}
                )
            )["QueueUrl"]
            await act(sqs.send_message, QueueUrl=queue, MessageBody="m")
            await until(
                lambda: [
                    q
                    for q in _rows(scheduler, "queues")
                    if q.name == "feed-d-jobs" and q.visible == 1
                ],
                what="queue count",
            )
            await act(sqs.receive_message, QueueUrl=queue)
            await until(
                lambda: [
                    q
                    for q in _rows(scheduler, "queues")
                    if q.name == "feed-d-jobs" and q.in_flight == 1
                ],
                what="message in flight",
            )
            await until(
                lambda: [
                    q
                    for q in _rows(scheduler, "queues")
                    if q.name == "feed-d-jobs" and q.visible == 1
                ],
                what="visible again when its visibility timeout ends (no call in between)",
            )

            arn = (
                await act(sqs.get_queue_attributes, QueueUrl=queue, AttributeNames=["QueueArn"])
            )["Attributes"]["QueueArn"]
            await act(
                lam.create_event_source_mapping, EventSourceArn=arn, FunctionName="feed-d-worker"
            )

            def mapping_state() -> str | None:
                worker = next(f for f in _rows(scheduler, "functions") if f.name == "feed-d-worker")
                return worker.mappings[0].state if worker.mappings else None

            await until(
                lambda: mapping_state() == "Enabled", what="mapping enabled (it settles by itself)"
            )
            await until(
                lambda: [
                    q for q in _rows(scheduler, "queues") if q.name == "feed-d-jobs" and q.empty
                ],
                what="the emulator's SQS poller consumed the message",
            )

            machine = (
                await act(
                    sfn.create_state_machine,
                    name="feed-d-flow",
                    definition=json.dumps(WAIT_MACHINE),
                    roleArn="arn:aws:iam::123456789012:role/feed-d-role",
                )
            )["stateMachineArn"]
            await until(
                lambda: [m for m in _rows(scheduler, "state_machines") if m.arn == machine],
                what="machine",
            )
            await act(sfn.start_execution, stateMachineArn=machine, name="run-1")
            await until(
                lambda: [
                    e for e in _rows(scheduler, "executions:feed-d-flow") if e.name == "run-1"
                ],
                what="execution started",
            )
            await until(
                lambda: [
                    e
                    for e in _rows(scheduler, "executions:feed-d-flow")
                    if e.name == "run-1" and e.status == "SUCCEEDED"
                ],
                what="execution succeeded",
            )
            assert scheduler.pushed
            assert all(s.live for s in scheduler.model.snapshots.values() if s.health is Health.OK)
            assert conn.limiter.total_calls > calls
        finally:
            await scheduler.stop()


async def test_idle_against_the_emulator_the_viewer_makes_no_calls(emulator):
    async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
        scheduler = Scheduler(conn, labspec.generic_spec("feed-e-"))  # its defaults
        scheduler.start()
        try:
            await _ready(scheduler)
            await asyncio.sleep(1.0)  # the first reads' own consequences settle
            calls = conn.limiter.total_calls
            await asyncio.sleep(3.0)
            assert conn.limiter.total_calls == calls and scheduler.pushed
        finally:
            await scheduler.stop()


async def test_the_feed_survives_an_emulator_restart(spawn_emulator, tmp_path):
    running = spawn_emulator(tmp_path)
    try:
        running.client("sqs").create_queue(QueueName="feed-f-before")
        async with Connection(Target(endpoint_url=running.endpoint_url)) as conn:
            scheduler = _slow_scheduler(conn)
            scheduler.start()
            try:
                await _ready(scheduler)
                await until(
                    lambda: [q for q in _rows(scheduler, "queues") if q.name == "feed-f-before"]
                )
                first = scheduler.follower.feed
                await asyncio.to_thread(running.restart)
                # moto's state went with the process: the new feed makes the viewer read it all
                # again
                await until(
                    lambda: scheduler.follower.feed not in (None, first) and scheduler.pushed,
                    timeout=30,
                    what="following the restarted emulator's feed",
                )
                # Read again on the new feed's reset, not by the slowed polling (30 s): a wake
                # that came as the feed was down waited out the polled pace.
                await until(
                    lambda: _rows(scheduler, "queues") == (),
                    timeout=10,
                    what="the queue the restart lost is gone from the model",
                )
                await asyncio.to_thread(
                    running.client("sqs").create_queue, QueueName="feed-f-after"
                )
                await until(
                    lambda: [q for q in _rows(scheduler, "queues") if q.name == "feed-f-after"],
                    what="a change after the restart",
                )
                assert scheduler.model.get("queues").live
            finally:
                await scheduler.stop()
    finally:
        running.stop()


async def test_a_viewer_started_again_reads_everything_then_follows(emulator):
    url = emulator.endpoint_url
    sqs = emulator.client("sqs")
    async with Connection(Target(endpoint_url=url)) as conn:
        first = _slow_scheduler(conn, "feed-g-")
        first.start()
        await _ready(first)
        await first.stop()
    await asyncio.to_thread(
        sqs.create_queue, QueueName="feed-g-while-closed"
    )  # missed by the closed viewer
    async with Connection(Target(endpoint_url=url)) as conn:
        again = _slow_scheduler(conn, "feed-g-")
        again.start()
        try:
            await _ready(again)
            await until(
                lambda: [q for q in _rows(again, "queues") if q.name == "feed-g-while-closed"]
            )
            await asyncio.to_thread(sqs.create_queue, QueueName="feed-g-after")
            await until(
                lambda: [q for q in _rows(again, "queues") if q.name == "feed-g-after"],
                what="a change after the restart, through the feed",
            )
            assert again.follower.cursor > 0 and again.pushed
        finally:
            await again.stop()


@pytest.fixture
def moto_url(stock_moto, tmp_path):
    """Plain moto server, without the emulator's additions: no change feed."""
    server = stock_moto(cwd=tmp_path, timeout=30)
    try:
        yield server.url
    finally:
        server.stop()


async def test_on_stock_moto_the_viewer_polls_as_before(moto_url):
    import boto3

    sqs = boto3.client(
        "sqs",
        endpoint_url=moto_url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    async with Connection(Target(endpoint_url=moto_url)) as conn:
        scheduler = Scheduler(conn, labspec.generic_spec("feed-h-"))
        scheduler.start()
        try:
            await until(lambda: _rows(scheduler, "queues") is not None, what="first poll")
            await asyncio.to_thread(sqs.create_queue, QueueName="feed-h-jobs")
            await until(
                lambda: [q for q in _rows(scheduler, "queues") if q.name == "feed-h-jobs"],
                timeout=30,
                what="found by polling",
            )
            assert not scheduler.pushed and scheduler.follower.answers == 0
            assert not scheduler.model.get("queues").live
            assert "ago" in scheduler.model.get("queues").freshness()
        finally:
            await scheduler.stop()


async def test_a_stop_cut_short_still_closes_the_feeds_and_pollers_http_sessions(emulator):
    """An app's polling worker is cancelled as the app ends and again as its event loop does:
    the second can land while the scheduler's stop() waits for its loops. The HTTP sessions of
    the change feed and of the journal's poller close all the same (an unclosed one is reported
    on stderr when it is collected: after `q`, in the learner's shell)."""
    async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
        scheduler = Scheduler(conn, labspec.load("q05"))
        journal = next(p for p in scheduler.pollers if p.kind == "journal")
        scheduler.start()
        deadline = time.monotonic() + 30
        while journal._session is None or scheduler.follower._session is None:
            assert time.monotonic() < deadline, "the journal and the feed never read"
            await asyncio.sleep(0.05)
        sessions = [journal._session, scheduler.follower._session]
        stopping = asyncio.create_task(scheduler.stop())
        await asyncio.sleep(0)  # it has cancelled its loops and waits for them
        stopping.cancel()
        with pytest.raises(asyncio.CancelledError):
            await stopping
        assert all(session.closed for session in sessions)
