"""What the viewer reads when the emulator's change feed names something, on the real emulator:
a table waits out its scan budget (and holds no other table back), a queue's depth points survive
a read caused by another queue, and the feed is found wherever the SDK found the endpoint
(a profile's ``endpoint_url``, ``AWS_ENDPOINT_URL``), not only from ``--endpoint-url``.

As in test_change_feed.py, polling is slowed a thousandfold and the safety read set to an hour:
what reaches the model within the deadline came through the feed.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
import time
from typing import Any

import pytest

from awsview import labspec
from awsview.aws.session import Connection, Target
from awsview.core import render
from awsview.model.snapshot import Health
from awsview.polling.pollers.dynamodb import READ_UNITS_PER_S, TablePoller
from awsview.polling.scheduler import Scheduler
from tests.polling.test_change_feed import WAIT_MACHINE, _ready, _rows, until
from tests.support.helpers import create_table

SLOWER = 1000.0  # polling: every 5 min while active, 2 h idle
DEADLINE = 60.0  # generous for a busy machine, far below any poll
# The big table: 1,500 items of ~220 bytes, read whole in one page of 40 read units: 8 s at AWS's
# pace.
BIG_ITEMS, FILLER = 1500, "x" * 200


def _scheduler(conn: Connection, prefix: str) -> Scheduler:
    return Scheduler(conn, labspec.generic_spec(prefix), speed=SLOWER, safety=3600.0)


def _tables(scheduler: Scheduler) -> TablePoller:
    return next(p for p in scheduler.pollers if isinstance(p, TablePoller))


def _ids(scheduler: Scheduler, table: str) -> set[str]:
    return {item["id"] for item in _rows(scheduler, f"table:{table}").items}


def _fill(emulator: Any, table: str) -> None:
    ddb = emulator.client("dynamodb")
    for first in range(0, BIG_ITEMS, 25):
        ddb.batch_write_item(
            RequestItems={
                table: [
                    {
                        "PutRequest": {
                            "Item": {"id": {"S": f"filler-{i:05d}"}, "note": {"S": FILLER}}
                        }
                    }
                    for i in range(first, min(first + 25, BIG_ITEMS))
                ]
            }
        )


# -- a table named by the feed and its scan budget --------------------------------------------


async def test_a_table_named_by_the_feed_waits_out_its_read_units_then_is_read_once(emulator):
    big, small = "feed-j-big", "feed-j-small"
    ddb = emulator.client("dynamodb")
    create_table(ddb, big)
    create_table(ddb, small)
    _fill(emulator, big)

    def put(table, key):
        return asyncio.to_thread(ddb.put_item, TableName=table, Item={"id": {"S": key}})

    async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
        conn.limiter.scale = 1.0  # the budget as on AWS: the big table waits seconds between reads
        scheduler = _scheduler(conn, "feed-j-")
        tables = _tables(scheduler)
        scheduler.start()
        try:
            await _ready(scheduler)
            # A change read through the feed: the big table's last read, and what it must wait now.
            await put(big, "first")
            await until(
                lambda: "first" in _ids(scheduler, big),
                DEADLINE,
                "the first change, through the feed",
            )
            read_at, units = tables._passes[big].read_at, conn.limiter.read_units[big]
            wait = tables.wait(big, conn)
            assert wait == pytest.approx(tables._passes[big].units / READ_UNITS_PER_S) and wait > 5

            # Changed again at once, with a small table beside it: the small one is read now, the
            # big one when its read units are paid back — once, and the change is not lost.
            await put(big, "second")
            await put(small, "beside")
            await until(
                lambda: "beside" in _ids(scheduler, small), DEADLINE, "the small table's change"
            )
            assert tables._passes[small].read_at < read_at + wait, (
                "the small table waited for the big one"
            )
            await until(
                lambda: "second" in _ids(scheduler, big), DEADLINE + wait, "the big table's change"
            )
            assert tables._passes[big].read_at >= read_at + wait, (
                "read before its read units were paid back"
            )
            assert conn.limiter.read_units[big] == pytest.approx(
                units + tables._passes[big].units
            )  # one read
        finally:
            await scheduler.stop()


# -- a queue's depth across a read of another queue -------------------------------------------


async def test_a_queues_depth_stays_whole_across_a_feed_read_of_another_queue(emulator):
    sqs = emulator.client("sqs")
    a = sqs.create_queue(QueueName="feed-k-a")["QueueUrl"]
    b = sqs.create_queue(QueueName="feed-k-b")["QueueUrl"]
    send = lambda url: asyncio.to_thread(sqs.send_message, QueueUrl=url, MessageBody="m")  # noqa: E731

    async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
        scheduler = _scheduler(conn, "feed-k-")
        scheduler.start()

        def queue(name: str) -> Any:
            return next((q for q in _rows(scheduler, "queues") or () if q.name == name), None)

        try:
            await _ready(scheduler)
            for count in (1, 2, 3):  # three depth points on A, each read because the feed named A
                await send(a)
                await until(
                    lambda n=count: queue("feed-k-a").visible == n, DEADLINE, f"A at {count}"
                )
            before = queue("feed-k-a")
            assert [p[1:] for p in before.depth] == [(0, 0), (1, 0), (2, 0), (3, 0)]
            lists = conn.limiter.calls[("sqs", "ListQueues")]

            await send(b)  # a read of B alone
            await until(lambda: queue("feed-k-b").visible == 1, DEADLINE, "B's change")
            assert conn.limiter.calls[("sqs", "ListQueues")] == lists, (
                "B was read alone, not the whole list"
            )
            assert queue("feed-k-a").depth == before.depth  # not dropped, not reset
            now = time.time()
            assert render.sparklines(queue("feed-k-a").depth, now) == render.sparklines(
                before.depth, now
            )

            await send(a)  # A again: its points go on from where they were
            await until(lambda: queue("feed-k-a").visible == 4, DEADLINE, "A at 4")
            assert queue("feed-k-a").depth[:-1] == before.depth and queue("feed-k-a").depth[-1][
                1:
            ] == (4, 0)
            assert [p[1:] for p in queue("feed-k-b").depth] == [(0, 0), (1, 0)]
        finally:
            await scheduler.stop()


# -- executions named by the feed ---------------------------------------------------------------


def _breaks(scheduler: Scheduler) -> list[str]:
    """From now on, each time the feed dropped (its long poll timed out on a loaded machine) or
    reset: either makes every kind read everything once, rightly."""
    follower = scheduler.follower
    assert follower is not None
    breaks: list[str] = []
    on_state, on_changes = follower.on_state, follower.on_changes

    def state(up: bool) -> None:
        if not up and follower.feed is not None:  # down after it was up once
            breaks.append("down")
        on_state(up)

    def changes(found: Any, reset: bool) -> None:
        if reset and follower.answers > 1:  # not the first answer's
            breaks.append("reset")
        on_changes(found, reset)

    follower.on_state, follower.on_changes = state, changes
    return breaks


async def test_a_viewer_starting_lists_each_machines_executions_once(emulator):
    """A viewer started beside a lab reads everything once before the feed answers and once when
    it first answers; the second read of the machines finds nothing new and only becomes live,
    which must not make every machine's executions listed again."""
    sfn = emulator.client("stepfunctions")
    role = "arn:aws:iam::123456789012:role/feed-z-role"
    for name in ("feed-z-one", "feed-z-two"):
        machine = sfn.create_state_machine(
            name=name, definition=json.dumps(WAIT_MACHINE), roleArn=role
        )["stateMachineArn"]
        sfn.start_execution(stateMachineArn=machine, name="done")
    await until(
        lambda: all(
            e["status"] == "SUCCEEDED"
            for m in sfn.list_state_machines()["stateMachines"]
            if m["name"].startswith("feed-z-")
            for e in sfn.list_executions(stateMachineArn=m["stateMachineArn"])["executions"]
        ),
        DEADLINE,
        "both executions ended before the viewer starts",
    )
    async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
        scheduler = _scheduler(conn, "feed-z-")
        breaks = _breaks(scheduler)
        scheduler.start()
        try:
            await _ready(scheduler)
            await until(
                lambda: all(
                    (s := scheduler.model.get(f"executions:{name}")) is not None and s.live
                    for name in ("feed-z-one", "feed-z-two")
                ),
                DEADLINE,
                "both machines' executions, live",
            )
            await asyncio.sleep(1.0)  # a listing still to come would be asked by now
            if not breaks:
                assert conn.limiter.calls[("stepfunctions", "ListExecutions")] == 2
        finally:
            await scheduler.stop()


async def test_executions_named_by_the_feed_are_described_without_listing_their_machine(emulator):
    """The feed names every execution that starts and ends: each is described alone (the listing
    of its machine was one more round trip before a new execution's row, 0.1-0.2 s on a busy
    machine), and a name run again replaces the earlier run."""
    sfn = emulator.client("stepfunctions")
    machine = sfn.create_state_machine(
        name="feed-x-flow",
        definition=json.dumps(WAIT_MACHINE),
        roleArn="arn:aws:iam::123456789012:role/feed-x-role",
    )["stateMachineArn"]
    sfn.start_execution(stateMachineArn=machine, name="run-0")

    def runs(scheduler: Scheduler) -> dict[str, str]:
        return {e.name: e.status for e in _rows(scheduler, "executions:feed-x-flow") or ()}

    async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
        scheduler = _scheduler(conn, "feed-x-")
        scheduler.start()
        try:
            await _ready(scheduler)
            await until(lambda: runs(scheduler).get("run-0") == "SUCCEEDED", DEADLINE, "run-0")
            breaks = _breaks(scheduler)
            listings = conn.limiter.calls[("stepfunctions", "ListExecutions")]
            first = runs(scheduler)
            for name in ("run-1", "run-2"):
                await asyncio.to_thread(sfn.start_execution, stateMachineArn=machine, name=name)
            await until(
                lambda: runs(scheduler) == {**first, "run-1": "SUCCEEDED", "run-2": "SUCCEEDED"},
                DEADLINE,
                "two executions started and ended, through the feed",
            )
            shown = _rows(scheduler, "executions:feed-x-flow")
            assert [e.name for e in shown] == ["run-2", "run-1", "run-0"]  # newest first
            assert all(e.described and e.stopped for e in shown)
            if not breaks:
                assert conn.limiter.calls[("stepfunctions", "ListExecutions")] == listings
            await until(
                lambda: all(
                    _rows(scheduler, f"history:{e.arn}") is not None
                    and _rows(scheduler, f"history:{e.arn}").complete
                    for e in _rows(scheduler, "executions:feed-x-flow")
                ),
                DEADLINE,
                "their histories, complete",
            )
        finally:
            await scheduler.stop()


async def test_a_running_executions_history_is_not_read_again_when_another_execution_changes(
    emulator,
):
    """A running execution's history is read when the feed names a new event of it, not each
    time some execution of the lab starts or ends (that read all unfinished histories)."""
    sfn = emulator.client("stepfunctions")
    role = "arn:aws:iam::123456789012:role/feed-y-role"
    slow = sfn.create_state_machine(
        name="feed-y-slow",
        definition=json.dumps(
            {"StartAt": "Long", "States": {"Long": {"Type": "Wait", "Seconds": 600, "End": True}}}
        ),
        roleArn=role,
    )["stateMachineArn"]
    quick = sfn.create_state_machine(
        name="feed-y-quick", definition=json.dumps(WAIT_MACHINE), roleArn=role
    )["stateMachineArn"]
    waiting = sfn.start_execution(stateMachineArn=slow, name="waits")["executionArn"]
    async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
        read: list[str] = []
        call = conn.call

        async def recording(service: str, method: str, **params: Any) -> Any:
            if method == "get_execution_history":
                read.append(params["executionArn"])
            return await call(service, method, **params)

        conn.call = recording  # the real call, counted
        scheduler = _scheduler(conn, "feed-y-")
        scheduler.start()
        try:
            await _ready(scheduler)
            await until(
                lambda: _rows(scheduler, f"history:{waiting}") is not None, DEADLINE, "history"
            )
            await asyncio.sleep(1.0)  # the first reads settle
            read.clear()
            run = (
                await asyncio.to_thread(sfn.start_execution, stateMachineArn=quick, name="run-1")
            )["executionArn"]
            await until(
                lambda: (h := _rows(scheduler, f"history:{run}")) is not None and h.complete,
                DEADLINE,
                "the other execution's history, complete",
            )
            assert run in read
            assert waiting not in read
        finally:
            await scheduler.stop()
            await asyncio.to_thread(sfn.stop_execution, executionArn=waiting)


# -- where the endpoint came from -------------------------------------------------------------


@pytest.fixture
def aws_home(tmp_path, monkeypatch):
    """An AWS configuration of the test's own; no endpoint in the environment."""
    for name in (
        "AWS_ENDPOINT_URL",
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    (tmp_path / "config").write_text("")
    return tmp_path


async def _follows_the_feed(emulator: Any, target: Target, queue: str) -> None:
    async with Connection(target) as conn:
        scheduler = _scheduler(conn, queue.rsplit("-", 1)[0] + "-")
        assert scheduler.follower is not None, "no change feed for this endpoint"
        assert scheduler.follower.url == emulator.endpoint_url + "/_awsview/changes"
        scheduler.start()
        try:
            await _ready(scheduler)
            await asyncio.to_thread(emulator.client("sqs").create_queue, QueueName=queue)
            await until(
                lambda: [q for q in _rows(scheduler, "queues") if q.name == queue],
                DEADLINE,
                "a queue created, through the feed",
            )
            assert scheduler.pushed and scheduler.model.get("queues").live
            assert scheduler.model.get("queues").health is Health.OK
        finally:
            await scheduler.stop()


async def test_the_feed_is_found_from_a_profiles_endpoint_url(emulator, aws_home):
    (aws_home / "config").write_text(
        textwrap.dedent(f"""
        [profile lab]
        region = us-east-1
        endpoint_url = {emulator.endpoint_url}
        aws_access_key_id = testing
        aws_secret_access_key = testing
        """)
    )
    await _follows_the_feed(emulator, Target(profile="lab"), "feed-l-jobs")


async def test_the_feed_is_found_from_aws_endpoint_url(emulator, aws_home, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", emulator.endpoint_url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    await _follows_the_feed(emulator, Target(region="us-east-1"), "feed-m-jobs")


async def test_one_service_elsewhere_means_no_feed_and_polling(emulator, aws_home, monkeypatch):
    """The feed holds one emulator's changes: with SQS sent elsewhere it would miss SQS's."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", emulator.endpoint_url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SQS", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    async with Connection(Target(region="us-east-1")) as conn:
        assert _scheduler(conn, "feed-n-").follower is None
