"""The age of a queue's oldest message (AWS's ApproximateAgeOfOldestMessage, which
GetQueueAttributes does not give): read from the embedded emulator's own data, shown by
`dump --json` and in the queue panel, and tested by the dlq lab's checkpoints — never by
receiving a message."""

from __future__ import annotations

import json

import pytest

from awsview import labspec
from awsview.aws.session import Connection, Target
from awsview.polling.scheduler import Scheduler
from awsview.polling.store import DecisionStore
from tests.support.emulator import REGION, RunningEmulator

pytestmark = pytest.mark.timeout(180)

WAITS = "the poison job waits in the DLQ: its oldest message has an age"
GONE = "no message waits in the DLQ any more: it has no oldest message"


def result(model, text: str):
    return next(r for r in model.data("checkpoints") if r.checkpoint.text == text)


async def test_the_dlq_age_checkpoint_fails_with_what_is_there_then_holds(
    emulator: RunningEmulator, tmp_path
):
    sqs = emulator.client("sqs")
    dlq = sqs.create_queue(QueueName="labex-dlq-jobs-dlq")["QueueUrl"]
    sqs.create_queue(QueueName="labex-dlq-jobs")
    async with Connection(Target(endpoint_url=emulator.endpoint_url, region=REGION)) as conn:
        viewer = Scheduler(conn, labspec.load("dlq"), store=DecisionStore(tmp_path / "v.sqlite3"))
        try:
            await _judged(sqs, dlq, viewer)
        finally:
            await viewer.stop()


async def _judged(sqs, dlq: str, viewer: Scheduler) -> None:
    """Before the poison job reaches the DLQ, the age checkpoint says what is there; after, it
    holds."""
    await viewer.run_once()
    waits = result(viewer.model, WAITS)
    assert waits.passed is False
    assert '"queue": "labex-dlq-jobs-dlq"' in waits.detail, waits.detail
    assert '"oldest_age_s": null' in waits.detail, waits.detail
    assert result(viewer.model, GONE).passed is True

    sqs.send_message(QueueUrl=dlq, MessageBody='{"job": "poison"}')
    await viewer.run_once()
    (queue,) = [q for q in viewer.model.data("queues") if q.name == "labex-dlq-jobs-dlq"]
    assert queue.visible == 1 and queue.oldest_age_s is not None and queue.oldest_age_s >= 0
    assert result(viewer.model, WAITS).passed is True, result(viewer.model, WAITS).detail
    # The message is still there to be received: the age was not read by receiving it.
    attributes = sqs.get_queue_attributes(
        QueueUrl=dlq, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    assert attributes["ApproximateNumberOfMessages"] == "1"


def test_dump_json_and_the_queue_panel_show_the_age(emulator: RunningEmulator, awsview):
    sqs = emulator.client("sqs")
    url = sqs.create_queue(QueueName="labex-age-q")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="m")
    done = awsview(
        "dump", "--json", "--prefix", "labex-age-", "--endpoint-url", emulator.endpoint_url
    )
    assert done.returncode == 0, done.stderr
    (queue,) = json.loads(done.stdout)["snapshots"]["queues"]["data"]
    assert isinstance(queue["oldest_age_s"], float) and queue["oldest_age_s"] >= 0
    text = awsview("dump", "--prefix", "labex-age-", "--endpoint-url", emulator.endpoint_url)
    panel = text.stdout.split("== SQS queues")[1].split("\n== ")[0]
    header, row = panel.splitlines()[1:3]
    assert "OLDEST" in header and row.split()[0] == "labex-age-q"
    assert row[header.index("OLDEST") :].split()[0].replace(".", "").isdigit(), panel
