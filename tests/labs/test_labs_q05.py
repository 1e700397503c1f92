"""q05 played step by step on the emulator: an idempotent SQS consumer.

The lab folder labs/q05 is played by one LabPlayer (one lab VM) a step per test, in order.
"""

from __future__ import annotations

import json

import pytest

from awsview.labs.player import LabPlayer
from tests.support.helpers import log_messages

pytestmark = pytest.mark.timeout(120)

WORKER = "labex-q05-worker"
ORDERS = "labex-q05-orders"
REFERENCE = "labex-q05-reference"
QUEUE = "labex-q05-jobs"
LOG_GROUP = "/aws/lambda/labex-q05-worker"
REFERENCE_ITEMS = [{"id": {"S": "reference"}, "note": {"S": "keep unchanged"}}]
DEDUP = {"id": {"S": "dedup-order"}, "quantity": {"N": "4"}, "total_cents": {"N": "1100"}}
OTHER = {"id": {"S": "other-order"}, "quantity": {"N": "1"}, "total_cents": {"N": "350"}}


_players: dict[str, LabPlayer] = {}


def run(emulator, action: str, **kwargs) -> list[str]:
    """One call of the module's LabPlayer (setup, play or clean): its VM keeps the files a step
    writes for a later one. Returns the lines the commands printed."""
    lines: list[str] = []
    player = _players.get(emulator.endpoint_url)
    if player is None:
        player = _players[emulator.endpoint_url] = LabPlayer(
            "q05", endpoint_url=emulator.endpoint_url
        )
    player.log = lines.append
    getattr(player, action)(**kwargs)
    return lines


def sorted_items(emulator, table: str) -> list[dict]:
    items = emulator.client("dynamodb").scan(TableName=table, ConsistentRead=True)["Items"]
    return sorted(items, key=lambda i: i["id"]["S"])


def queue_counts(emulator) -> tuple[int, int]:
    sqs = emulator.client("sqs")
    url = sqs.get_queue_url(QueueName=QUEUE)["QueueUrl"]
    attributes = sqs.get_queue_attributes(
        QueueUrl=url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return (
        int(attributes["ApproximateNumberOfMessages"]),
        int(attributes["ApproximateNumberOfMessagesNotVisible"]),
    )


def results(emulator) -> list[dict]:
    """The worker's RESULT lines, as the lab's jq pipeline selects them."""
    lines = [
        line
        for message in log_messages(emulator.client("logs"), LOG_GROUP)
        for line in message.split("\n")
    ]
    return [json.loads(line[len("RESULT ") :]) for line in lines if line.startswith("RESULT ")]


def invocations(emulator) -> int:
    messages = log_messages(emulator.client("logs"), LOG_GROUP)
    return sum(m.startswith("START RequestId: ") for m in messages)


def test_setup_provides_worker_role_and_tables(emulator):
    run(emulator, "setup")
    config = emulator.client("lambda").get_function_configuration(FunctionName=WORKER)
    assert config["Runtime"] == "python3.12" and config["Handler"] == "app.handler"
    assert config["Role"].endswith(":role/labex-q05-worker-role")
    assert config["Environment"]["Variables"] == {"TABLE_NAME": ORDERS}
    assert sorted_items(emulator, ORDERS) == []
    assert sorted_items(emulator, REFERENCE) == REFERENCE_ITEMS


def test_connect_creates_an_empty_queue_and_an_enabled_mapping(emulator):
    run(emulator, "play", only="connect")
    sqs = emulator.client("sqs")
    url = sqs.get_queue_url(QueueName=QUEUE)["QueueUrl"]
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["VisibilityTimeout"] == "30"
    assert queue_counts(emulator) == (0, 0)
    mappings = emulator.client("lambda").list_event_source_mappings(FunctionName=WORKER)[
        "EventSourceMappings"
    ]
    assert len(mappings) == 1
    mapping = mappings[0]
    assert mapping["EventSourceArn"] == attributes["QueueArn"]
    assert mapping["FunctionArn"].endswith(f":function:{WORKER}")
    assert mapping["BatchSize"] == 1 and mapping["State"] == "Enabled"
    assert sorted_items(emulator, ORDERS) == []
    assert invocations(emulator) == 0


def test_deploy_consumes_the_first_order(emulator):
    lines = run(emulator, "play", only="deploy")
    assert any(
        line.endswith("queue: 0+0 visible+in flight; dedup-order stored as: dedup-order")
        for line in lines
    )
    logged = [
        line for m in log_messages(emulator.client("logs"), LOG_GROUP) for line in m.split("\n")
    ]
    assert any(
        line.endswith(
            'RESULT {"duplicate": false, "id": "dedup-order", "processed": true, "quantity": 4}'
        )
        for line in logged
    )
    assert sorted_items(emulator, ORDERS) == [DEDUP]
    assert queue_counts(emulator) == (0, 0)
    assert results(emulator) == [
        {"id": "dedup-order", "quantity": 4, "processed": True, "duplicate": False}
    ]


def test_repeats_are_acknowledged_without_a_second_write(emulator):
    run(emulator, "play", only="repeats")
    assert invocations(emulator) == 4
    reported = results(emulator)
    assert len(reported) == 4
    accepted = [r["id"] for r in reported if r["processed"]]
    assert sorted(accepted) == ["dedup-order", "other-order"]
    repeats = [r for r in reported if not r["processed"]]
    assert (
        repeats == [{"id": "dedup-order", "quantity": 4, "processed": False, "duplicate": True}] * 2
    )
    assert sorted_items(emulator, ORDERS) == [DEDUP, OTHER]
    assert queue_counts(emulator) == (0, 0)
    assert not any("receiptHandle" in json.dumps(r) for r in reported)


def test_cleanup_leaves_only_the_provided_resources(emulator):
    run(emulator, "clean")
    lam = emulator.client("lambda")
    assert lam.list_event_source_mappings(FunctionName=WORKER)["EventSourceMappings"] == []
    queues = emulator.client("sqs").list_queues().get("QueueUrls", [])
    assert not [url for url in queues if url.endswith(f"/{QUEUE}")]
    assert sorted_items(emulator, ORDERS) == []
    assert sorted_items(emulator, REFERENCE) == REFERENCE_ITEMS
    groups = emulator.client("logs").describe_log_groups()["logGroups"]
    assert LOG_GROUP not in [g["logGroupName"] for g in groups]
    lam.get_function_configuration(FunctionName=WORKER)
