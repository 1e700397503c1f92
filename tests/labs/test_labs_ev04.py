"""ev04 played step by step on the emulator; after each step, what the lab text says holds.

The lab folder labs/ev04 is played by one LabPlayer (one lab VM) a step per test, in order.
"""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from awsview.labs import LabError
from awsview.labs.player import LabPlayer
from tests.support.helpers import folder_workflow, log_messages

pytestmark = pytest.mark.timeout(120)

WORKER = "labex-ev04-worker"
ORDERS = "labex-ev04-orders"
ATTEMPTS = "labex-ev04-attempts"
REFERENCE = "labex-ev04-reference"
ROLE = "labex-ev04-workflow-role"
LOG_GROUP = "/aws/lambda/labex-ev04-worker"
REFERENCE_ITEMS = [{"id": {"S": "reference"}, "note": {"S": "keep unchanged"}}]


_players: dict[str, LabPlayer] = {}


def run(emulator, action: str, **kwargs) -> list[str]:
    """One call of the module's LabPlayer (setup, play or clean): its VM keeps the files a step
    writes for a later one. Returns the lines the commands printed."""
    lines: list[str] = []
    player = _players.get(emulator.endpoint_url)
    if player is None:
        player = _players[emulator.endpoint_url] = LabPlayer(
            "ev04", endpoint_url=emulator.endpoint_url
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


def policy_document(document) -> dict:
    return json.loads(document) if isinstance(document, str) else document


def test_setup_provides_worker_tables_and_reference(emulator):
    run(emulator, "setup")
    run(emulator, "setup")  # a second setup keeps what exists, and does not fail
    config = emulator.client("lambda").get_function_configuration(FunctionName=WORKER)
    assert config["Runtime"] == "python3.12" and config["Handler"] == "app.handler"
    assert config["Role"].endswith(":role/labex-ev04-worker-role")
    environment = config["Environment"]["Variables"]
    assert environment == {"ORDERS_TABLE": ORDERS, "ATTEMPTS_TABLE": ATTEMPTS}
    dynamodb = emulator.client("dynamodb")
    assert {ORDERS, ATTEMPTS, REFERENCE} <= set(dynamodb.list_tables()["TableNames"])
    assert dynamodb.scan(TableName=REFERENCE)["Items"] == REFERENCE_ITEMS
    assert emulator.client("stepfunctions").list_state_machines()["stateMachines"] == []


def test_authorize_creates_the_workflow_role_scoped_to_the_worker(emulator):
    run(emulator, "play", only="authorize")
    iam = emulator.client("iam")
    trust = policy_document(iam.get_role(RoleName=ROLE)["Role"]["AssumeRolePolicyDocument"])
    assert trust["Statement"][0]["Principal"] == {"Service": "states.amazonaws.com"}
    policy = policy_document(
        iam.get_role_policy(RoleName=ROLE, PolicyName="InvokeWorker")["PolicyDocument"]
    )
    worker_arn = emulator.client("lambda").get_function_configuration(FunctionName=WORKER)[
        "FunctionArn"
    ]
    assert policy["Statement"] == [
        {"Effect": "Allow", "Action": "lambda:InvokeFunction", "Resource": worker_arn}
    ]


def test_workflow_has_retry_and_catch_and_nothing_ran_yet(emulator):
    run(emulator, "play", only="workflow")
    sfn = emulator.client("stepfunctions")
    machines = sfn.list_state_machines()["stateMachines"]
    assert [m["name"] for m in machines] == [ORDERS]
    described = sfn.describe_state_machine(stateMachineArn=machines[0]["stateMachineArn"])
    assert described["type"] == "STANDARD"
    assert described["roleArn"].endswith(f":role/{ROLE}")
    definition = json.loads(described["definition"])
    worker_arn = emulator.client("lambda").get_function_configuration(FunctionName=WORKER)[
        "FunctionArn"
    ]
    assert definition == folder_workflow("ev04", worker_arn)
    assert definition["States"]["StoreOrder"]["Catch"][0]["ErrorEquals"] == ["InvalidOrder"]
    assert definition["States"]["Rejected"]["Error"] == "OrderRejected"
    assert sfn.list_executions(stateMachineArn=machines[0]["stateMachineArn"])["executions"] == []
    assert emulator.client("dynamodb").scan(TableName=ORDERS)["Items"] == []


def test_executions_retry_catch_and_denied_invocation(emulator):
    lines = run(emulator, "play", only="executions")
    assert any(line.endswith("retry-order SUCCEEDED") for line in lines)

    retry, events = execution(emulator, "retry-order")
    assert retry["status"] == "SUCCEEDED"
    output = json.loads(retry["output"])
    assert output["quantity"] == 2 and output["total_cents"] == 600
    tasks = [e for e in events if e["type"] in ("TaskFailed", "TaskSucceeded")]
    assert [e["type"] for e in tasks] == ["TaskFailed", "TaskSucceeded", "TaskSucceeded"]
    assert tasks[0]["taskFailedEventDetails"]["error"] == "TransientOrderError"
    assert item(emulator, ORDERS, "retry-order") == {
        "id": {"S": "retry-order"},
        "quantity": {"N": "2"},
        "total_cents": {"N": "600"},
    }
    assert item(emulator, ATTEMPTS, "retry-order")["attempts"] == {"N": "2"}

    permanent, events = execution(emulator, "permanent-order")
    assert permanent["status"] == "FAILED" and permanent["error"] == "OrderRejected"
    failed = [e for e in events if e["type"] == "TaskFailed"]
    assert [e["taskFailedEventDetails"]["error"] for e in failed] == ["InvalidOrder"]
    entered = [
        e["stateEnteredEventDetails"]["name"] for e in events if e["type"] == "FailStateEntered"
    ]
    assert entered == ["Rejected"]
    assert item(emulator, ORDERS, "permanent-order") is None

    denied, events = execution(emulator, "denied-order")
    assert denied["status"] == "FAILED"
    assert not [e for e in events if e["type"] == "TaskSucceeded"]
    assert item(emulator, ORDERS, "denied-order") is None
    assert item(emulator, ATTEMPTS, "denied-order") is None

    workflow_lines = [
        m for m in log_messages(emulator.client("logs"), LOG_GROUP) if m.startswith("WORKFLOW ")
    ]
    assert sum('"permanent-order"' in m for m in workflow_lines) == 1
    assert not any('"denied-order"' in m for m in workflow_lines)
    # The lab restores the permission after the denied run.
    emulator.client("iam").get_role_policy(RoleName=ROLE, PolicyName="InvokeWorker")
    assert [i["id"]["S"] for i in emulator.client("dynamodb").scan(TableName=ORDERS)["Items"]] == [
        "retry-order"
    ]


def test_cleanup_leaves_only_the_provided_resources(emulator):
    run(emulator, "clean")
    assert emulator.client("stepfunctions").list_state_machines()["stateMachines"] == []
    iam = emulator.client("iam")
    with pytest.raises(ClientError, match="NoSuchEntity"):
        iam.get_role(RoleName=ROLE)
    roles = [r["RoleName"] for r in iam.list_roles()["Roles"]]
    assert "labex-ev04-worker-role" in roles and ROLE not in roles
    dynamodb = emulator.client("dynamodb")
    assert dynamodb.scan(TableName=ORDERS)["Items"] == []
    assert item(emulator, ATTEMPTS, "retry-order") is None
    groups = emulator.client("logs").describe_log_groups()["logGroups"]
    assert LOG_GROUP not in [g["logGroupName"] for g in groups]
    assert dynamodb.scan(TableName=REFERENCE)["Items"] == REFERENCE_ITEMS
    # The provided worker and tables stay.
    emulator.client("lambda").get_function_configuration(FunctionName=WORKER)
    # The lab text's cleanup is run once; run again it stops at its first command, said in
    # one line that names the command and AWS's answer.
    with pytest.raises(LabError) as again:
        run(emulator, "clean")
    assert "\n" not in str(again.value)
    assert str(again.value).startswith("ev04 step 4/4 cleanup: `aws ")
