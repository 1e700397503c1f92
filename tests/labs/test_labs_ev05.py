"""ev05 played step by step on the emulator: one business write through retries and re-runs.

The lab folder labs/ev05 is played by one LabPlayer (one lab VM) a step per test, in order.
"""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from botocore.exceptions import ClientError

from awsview.labs.player import LabPlayer
from awsview.labspec.folder import builtin_dir
from tests.support.helpers import folder_workflow, log_messages

pytestmark = pytest.mark.timeout(120)

WORKER = "labex-ev05-worker"
ORDERS = "labex-ev05-orders"
ATTEMPTS = "labex-ev05-attempts"
REFERENCE = "labex-ev05-reference"
ROLE = "labex-ev05-workflow-role"
LOG_GROUP = "/aws/lambda/labex-ev05-worker"
REFERENCE_ITEMS = [{"id": {"S": "reference"}, "note": {"S": "keep unchanged"}}]
PROTECTED = {"id": {"S": "protected-order"}, "quantity": {"N": "4"}, "total_cents": {"N": "1100"}}
DIFFERENT = {"id": {"S": "different-order"}, "quantity": {"N": "1"}, "total_cents": {"N": "350"}}


_players: dict[str, LabPlayer] = {}


def run(emulator, action: str, **kwargs) -> list[str]:
    """One call of the module's LabPlayer (setup, play or clean): its VM keeps the files a step
    writes for a later one. Returns the lines the commands printed."""
    lines: list[str] = []
    player = _players.get(emulator.endpoint_url)
    if player is None:
        player = _players[emulator.endpoint_url] = LabPlayer(
            "ev05", endpoint_url=emulator.endpoint_url
        )
    player.log = lines.append
    getattr(player, action)(**kwargs)
    return lines


def item(emulator, table: str, order_id: str) -> dict | None:
    return (
        emulator.client("dynamodb")
        .get_item(TableName=table, Key={"id": {"S": order_id}}, ConsistentRead=True)
        .get("Item")
    )


def execution(emulator, name: str) -> tuple[dict, list[dict]]:
    sfn = emulator.client("stepfunctions")
    machine = sfn.list_state_machines()["stateMachines"][0]["stateMachineArn"]
    arn = machine.replace(":stateMachine:", ":execution:") + ":" + name
    events = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    return sfn.describe_execution(executionArn=arn), events


def task_outputs(events: list[dict]) -> list[dict]:
    return [
        json.loads(e["taskSucceededEventDetails"]["output"])
        for e in events
        if e["type"] == "TaskSucceeded"
    ]


def sorted_items(emulator, table: str) -> list[dict]:
    items = emulator.client("dynamodb").scan(TableName=table)["Items"]
    return sorted(items, key=lambda i: i["id"]["S"])


def test_setup_provides_the_unprotected_worker(emulator):
    run(emulator, "setup")
    config = emulator.client("lambda").get_function_configuration(FunctionName=WORKER)
    assert config["Runtime"] == "python3.12" and config["Handler"] == "app.handler"
    environment = config["Environment"]["Variables"]
    assert environment == {"ORDERS_TABLE": ORDERS, "ATTEMPTS_TABLE": ATTEMPTS}
    assert "ConditionExpression" not in (builtin_dir() / "ev05" / "assets" / "app.py").read_text()
    assert emulator.client("dynamodb").scan(TableName=REFERENCE)["Items"] == REFERENCE_ITEMS


def test_deploy_replaces_the_code_with_the_protected_handler(emulator):
    lam = emulator.client("lambda")
    before = lam.get_function_configuration(FunctionName=WORKER)["CodeSha256"]
    lines = run(emulator, "play", until="deploy")
    project = _players[emulator.endpoint_url].workspace.cwd
    assert 'ConditionExpression="attribute_not_exists(id)"' in (project / "app.py").read_text()
    archive = (project / "worker.zip").read_bytes()
    expected = base64.b64encode(hashlib.sha256(archive).digest()).decode()
    after = lam.get_function_configuration(FunctionName=WORKER)
    assert after["CodeSha256"] == expected != before
    assert any(line.endswith(expected) for line in lines)
    assert after["Handler"] == "app.handler"


def test_workflow_is_the_same_shape_as_ev04(emulator):
    run(emulator, "play", only="workflow")
    sfn = emulator.client("stepfunctions")
    machines = sfn.list_state_machines()["stateMachines"]
    assert [m["name"] for m in machines] == [ORDERS]
    described = sfn.describe_state_machine(stateMachineArn=machines[0]["stateMachineArn"])
    worker_arn = emulator.client("lambda").get_function_configuration(FunctionName=WORKER)[
        "FunctionArn"
    ]
    assert json.loads(described["definition"]) == folder_workflow("ev05", worker_arn)
    assert described["roleArn"].endswith(f":role/{ROLE}")
    emulator.client("iam").get_role_policy(RoleName=ROLE, PolicyName="InvokeWorker")
    assert sfn.list_executions(stateMachineArn=machines[0]["stateMachineArn"])["executions"] == []
    assert emulator.client("dynamodb").scan(TableName=ORDERS)["Items"] == []


def test_executions_write_each_business_order_once(emulator):
    run(emulator, "play", only="executions")

    first, events = execution(emulator, "after-write-order")
    assert first["status"] == "SUCCEEDED"
    assert json.loads(first["output"]) == {
        "id": "protected-order",
        "total_cents": 1100,
        "completed": True,
    }
    tasks = [e for e in events if e["type"] in ("TaskFailed", "TaskSucceeded")]
    assert [e["type"] for e in tasks] == ["TaskFailed", "TaskSucceeded", "TaskSucceeded"]
    assert tasks[0]["taskFailedEventDetails"]["error"] == "TransientOrderError"
    # The retry found the item its failed first attempt had already written.
    stored = task_outputs(events)[0]["Payload"]
    assert stored == {
        "id": "protected-order",
        "quantity": 4,
        "total_cents": 1100,
        "duplicate": True,
    }

    repeated, events = execution(emulator, "repeated-order")
    assert repeated["status"] == "SUCCEEDED"
    assert json.loads(repeated["output"])["total_cents"] == 1100
    assert task_outputs(events)[0]["Payload"]["duplicate"] is True
    assert not [e for e in events if e["type"] == "TaskFailed"]

    different, _ = execution(emulator, "different-order")
    assert different["status"] == "SUCCEEDED"
    assert json.loads(different["output"]) == {
        "id": "different-order",
        "total_cents": 350,
        "completed": True,
    }

    assert sorted_items(emulator, ORDERS) == [DIFFERENT, PROTECTED]
    assert item(emulator, ATTEMPTS, "protected-order")["attempts"] == {"N": "3"}
    assert item(emulator, ATTEMPTS, "different-order")["attempts"] == {"N": "1"}

    messages = log_messages(emulator.client("logs"), LOG_GROUP)
    assert sum(m.startswith("START RequestId: ") for m in messages) == 7
    results = [json.loads(m[len("RESULT ") :]) for m in messages if m.startswith("RESULT ")]
    stores = [r for r in results if "duplicate" in r]
    assert [(r["id"], r["duplicate"]) for r in stores] == [
        ("protected-order", True),
        ("protected-order", True),
        ("different-order", False),
    ]


def test_cleanup_leaves_only_the_provided_resources(emulator):
    run(emulator, "clean")
    assert emulator.client("stepfunctions").list_state_machines()["stateMachines"] == []
    with pytest.raises(ClientError, match="NoSuchEntity"):
        emulator.client("iam").get_role(RoleName=ROLE)
    assert sorted_items(emulator, ORDERS) == []
    assert sorted_items(emulator, ATTEMPTS) == []
    groups = emulator.client("logs").describe_log_groups()["logGroups"]
    assert LOG_GROUP not in [g["logGroupName"] for g in groups]
    assert sorted_items(emulator, REFERENCE) == REFERENCE_ITEMS
    emulator.client("lambda").get_function_configuration(FunctionName=WORKER)
