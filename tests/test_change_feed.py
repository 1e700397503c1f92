"""The emulator's change feed (GET /_awsview/changes)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from helpers import create_function, create_table, wait_for

WAIT_MACHINE = {"StartAt": "Pause", "States": {"Pause": {"Type": "Wait", "Seconds": 1, "Next": "Done"},
                                               "Done": {"Type": "Succeed"}}}
WORKER = "def handler(event, context):\n    print('MARK ' + str(event.get('mark')))\n    return {'ok': True}\n"


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


# -- the feed itself ---------------------------------------------------------------------------

def test_every_kind_of_change_is_in_the_feed_with_those_the_emulator_makes_itself(emulator):
    url = emulator.endpoint_url
    ddb, sqs, lam, sfn, iam = (emulator.client(s) for s in ("dynamodb", "sqs", "lambda", "stepfunctions", "iam"))

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
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    start = cursor(url)
    queue = sqs.create_queue(QueueName="feed-a-jobs", Attributes={
        "VisibilityTimeout": "1",
        "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "1"})})["QueueUrl"]
    heard(url, start, "queue", "feed-a-jobs")
    sqs.send_message(QueueUrl=queue, MessageBody="x")
    assert sqs.receive_message(QueueUrl=queue)["Messages"]
    start = cursor(url)  # nothing is asked of the emulator from here …
    back = heard(url, start, "queue", "feed-a-jobs")  # … but the visibility timeout ends
    assert back["cursor"] > start
    assert int(sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["ApproximateNumberOfMessages"])
               ["Attributes"]["ApproximateNumberOfMessages"]) == 1
    start = cursor(url)
    assert not sqs.receive_message(QueueUrl=queue).get("Messages")  # received once: redriven
    heard(url, start, "queue", "feed-a-dlq")

    start = cursor(url)
    mapping = lam.create_event_source_mapping(EventSourceArn=sqs.get_queue_attributes(
        QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"],
        FunctionName="feed-a-worker", BatchSize=1)["UUID"]
    heard(url, start, "mapping", mapping)
    start = cursor(url)
    heard(url, start, "mapping", mapping)  # Creating → Enabled, with no call in between
    start = cursor(url)
    sqs.send_message(QueueUrl=queue, MessageBody="y")
    sent = cursor(url)
    heard(url, sent, "queue", "feed-a-jobs")  # the emulator's SQS poller received and deleted it
    heard(url, start, "log_group", "/aws/lambda/feed-a-worker")
    wait_for(lambda: int(sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])["Attributes"]
                         ["ApproximateNumberOfMessagesNotVisible"]) == 0)

    start = cursor(url)
    machine = sfn.create_state_machine(name="feed-a-flow", definition=json.dumps(WAIT_MACHINE),
                                       roleArn="arn:aws:iam::123456789012:role/feed-a-role")["stateMachineArn"]
    heard(url, start, "state_machine", machine)
    execution = sfn.start_execution(stateMachineArn=machine, name="run-1")["executionArn"]
    started = cursor(url)  # the Wait state ends and the execution succeeds with no call from here
    heard(url, started, "execution", execution)
    wait_for(lambda: sfn.describe_execution(executionArn=execution)["status"] == "SUCCEEDED")
    assert heard(url, started, "execution", execution)["time"] > time.time() - 30


def test_the_feed_answers_at_once_and_waits_only_when_nothing_changed(emulator):
    url = emulator.endpoint_url
    now = changes(url)
    began = time.monotonic()
    quiet = changes(url, now["cursor"], wait=0.5, feed=now["feed"])
    assert time.monotonic() - began >= 0.4 and quiet["changes"] == [] and not quiet["reset"]
    emulator.client("sqs").create_queue(QueueName="feed-b-jobs")
    began = time.monotonic()
    page = changes(url, now["cursor"], wait=20, feed=now["feed"])
    assert time.monotonic() - began < 10 and ("queue", "feed-b-jobs") in {(c["kind"], c["name"]) for c in page["changes"]}
    assert changes(url, 0, feed="another-emulator")["reset"] is True  # a cursor of another feed


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "HEAD"])
def test_the_feed_is_read_only(emulator, method):
    url = emulator.endpoint_url
    sqs = emulator.client("sqs")
    before, queues = cursor(url), sqs.list_queues().get("QueueUrls", [])
    body = b"Action=CreateQueue&QueueName=feed-c-sneaky" if method in ("POST", "PUT", "PATCH") else None
    request = urllib.request.Request(f"{url}/_awsview/changes?since=0", data=body, method=method,
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 405 and refused.value.headers["Allow"] == "GET"
    assert cursor(url) == before and sqs.list_queues().get("QueueUrls", []) == queues


@pytest.mark.parametrize("query", ["since=abc", "since=0&wait=soon", "since=-1", "since=0&wait=nan"])
def test_bad_feed_queries_get_one_clear_line(emulator, query):
    with pytest.raises(urllib.error.HTTPError) as bad:
        urllib.request.urlopen(f"{emulator.endpoint_url}/_awsview/changes?{query}", timeout=10)
    assert bad.value.code == 400 and "error" in json.loads(bad.value.read())
