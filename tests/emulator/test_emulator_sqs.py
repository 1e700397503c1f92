"""The SQS -> Lambda poller: batch size, Enabled/Disabled, visibility timeout, delete on
success, redrive to a DLQ, and mapping states as AWS reports them."""

from __future__ import annotations

import json
import time

from tests.support.helpers import create_function, log_messages, wait_for

CONSUMER = """
import json
def handler(event, context):
    bodies = [json.loads(r["body"]) for r in event["Records"]]
    print("BATCH " + json.dumps([b["id"] for b in bodies]))
    if any(b.get("fail") for b in bodies):
        raise ValueError("cannot process " + ",".join(b["id"] for b in bodies))
    return {"n": len(bodies)}
"""


def _queue(sqs, name, **attributes):
    url = sqs.create_queue(QueueName=name, Attributes={k: str(v) for k, v in attributes.items()})[
        "QueueUrl"
    ]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    return url, arn


def _counts(sqs, url):
    attrs = sqs.get_queue_attributes(
        QueueUrl=url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attrs["ApproximateNumberOfMessages"]), int(
        attrs["ApproximateNumberOfMessagesNotVisible"]
    )


def _events(logs, function):
    pages = logs.get_paginator("filter_log_events").paginate(logGroupName=f"/aws/lambda/{function}")
    return [e for page in pages for e in page["events"]]


def _batches(logs, function):
    return [
        json.loads(m[6:])
        for m in log_messages(logs, f"/aws/lambda/{function}")
        if m.startswith("BATCH ")
    ]


def test_mapping_reports_creating_then_enabled_and_deleting(emulator):
    lam, sqs = emulator.client("lambda"), emulator.client("sqs")
    create_function(lam, "states-consumer", CONSUMER)
    _, arn = _queue(sqs, "states-jobs")
    mapping = lam.create_event_source_mapping(
        FunctionName="states-consumer", EventSourceArn=arn, BatchSize=1, Enabled=True
    )
    assert mapping["State"] == "Creating"
    wait_for(lambda: lam.get_event_source_mapping(UUID=mapping["UUID"])["State"] == "Enabled")
    got = lam.get_event_source_mapping(UUID=mapping["UUID"])
    assert got["BatchSize"] == 1 and got["EventSourceArn"] == arn
    assert got["FunctionArn"].endswith(":function:states-consumer")
    assert lam.delete_event_source_mapping(UUID=mapping["UUID"])["State"] == "Deleting"
    assert (
        lam.list_event_source_mappings(FunctionName="states-consumer")["EventSourceMappings"] == []
    )


def test_failed_message_returns_after_its_timeout_and_never_blocks_others(emulator):
    lam, sqs, logs = emulator.client("lambda"), emulator.client("sqs"), emulator.client("logs")
    create_function(lam, "vt-consumer", CONSUMER)
    # 4 s: the good message is handled well inside the failed one's invisibility, even on a
    # busy machine (a warm invocation takes milliseconds).
    url, arn = _queue(sqs, "vt-jobs", VisibilityTimeout=4)
    lam.create_event_source_mapping(FunctionName="vt-consumer", EventSourceArn=arn, BatchSize=1)
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": "bad", "fail": True}))
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": "good"}))
    wait_for(lambda: ["good"] in _batches(logs, "vt-consumer"), timeout=60)
    assert _counts(sqs, url) == (0, 1)  # only the failed one, in flight until its timeout
    wait_for(lambda: _batches(logs, "vt-consumer").count(["bad"]) >= 2, timeout=60)
    # It came back only after the visibility timeout: the gap between its two runs, on the
    # emulator's own clock (the test noticing the good one late must not shorten it).
    first, second = [
        e["timestamp"] for e in _events(logs, "vt-consumer") if e["message"] == 'BATCH ["bad"]'
    ][:2]
    assert second - first >= 3000
    assert (
        _batches(logs, "vt-consumer").count(["good"]) == 1
    )  # success was deleted, never redelivered


def test_batch_size_and_delete_on_success(emulator):
    lam, sqs, logs = emulator.client("lambda"), emulator.client("sqs"), emulator.client("logs")
    create_function(lam, "batch-consumer", CONSUMER)
    url, arn = _queue(sqs, "batch-jobs")
    mapping = lam.create_event_source_mapping(
        FunctionName="batch-consumer", EventSourceArn=arn, BatchSize=3, Enabled=False
    )
    for i in range(6):
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": f"m{i}"}))
    time.sleep(0.8)
    assert _counts(sqs, url) == (6, 0)  # a Disabled mapping does not poll
    assert (
        lam.update_event_source_mapping(UUID=mapping["UUID"], Enabled=True)["State"] == "Enabling"
    )
    wait_for(lambda: _counts(sqs, url) == (0, 0), timeout=60)
    batches = _batches(logs, "batch-consumer")
    assert sorted(i for b in batches for i in b) == [f"m{i}" for i in range(6)]
    assert all(1 <= len(b) <= 3 for b in batches)
    assert (
        lam.update_event_source_mapping(UUID=mapping["UUID"], Enabled=False)["State"] == "Disabling"
    )
    wait_for(lambda: lam.get_event_source_mapping(UUID=mapping["UUID"])["State"] == "Disabled")


def test_redrive_to_dlq_after_max_receive_count(emulator):
    lam, sqs, logs = emulator.client("lambda"), emulator.client("sqs"), emulator.client("logs")
    create_function(lam, "dlq-consumer", CONSUMER)
    dlq_url, dlq_arn = _queue(sqs, "dlq-dead")
    url, arn = _queue(
        sqs,
        "dlq-jobs",
        VisibilityTimeout=1,
        RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 2}),
    )
    lam.create_event_source_mapping(FunctionName="dlq-consumer", EventSourceArn=arn, BatchSize=1)
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": "poison", "fail": True}))
    wait_for(lambda: _counts(sqs, dlq_url) == (1, 0), timeout=60)
    assert _counts(sqs, url) == (0, 0)
    assert _batches(logs, "dlq-consumer").count(["poison"]) == 2
