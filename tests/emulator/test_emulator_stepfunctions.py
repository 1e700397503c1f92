"""Step Functions execute for real: Choice, lambda:invoke Tasks, Retry with real backoff, Catch,
Fail, and the state machine role's permission to invoke."""

from __future__ import annotations

import json

import pytest

from tests.support.helpers import create_function, run_execution

WORKER = """
import json
class TransientOrderError(Exception):
    pass
class InvalidOrder(Exception):
    pass
SEEN = {}
def handler(event, context):
    if event.get("stage") == "summary":
        return {"id": event["id"], "summary": True}
    SEEN[event["id"]] = SEEN.get(event["id"], 0) + 1
    if event.get("mode") == "permanent":
        raise InvalidOrder("Order cannot be completed")
    if event.get("mode") == "flaky" and SEEN[event["id"]] <= event.get("failures", 1):
        raise TransientOrderError("Dependency temporarily unavailable")
    return {"id": event["id"], "attempt": SEEN[event["id"]]}
"""

DEFINITION = {
    "StartAt": "CheckQuantity",
    "States": {
        "CheckQuantity": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.quantity", "NumericGreaterThan": 0, "Next": "StoreOrder"}],
            "Default": "Rejected",
        },
        "StoreOrder": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": "sfn-worker", "Payload.$": "$"},
            "ResultSelector": {"result.$": "$.Payload"},
            "ResultPath": "$.saved",
            "Retry": [
                {
                    "ErrorEquals": ["TransientOrderError"],
                    "IntervalSeconds": 1,
                    "BackoffRate": 2,
                    "MaxAttempts": 2,
                }
            ],
            "Catch": [
                {"ErrorEquals": ["InvalidOrder"], "Next": "Rejected", "ResultPath": "$.failure"}
            ],
            "Next": "ReadSummary",
        },
        "ReadSummary": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {
                "FunctionName": "sfn-worker",
                "Payload": {"stage": "summary", "id.$": "$.saved.result.id"},
            },
            "OutputPath": "$.Payload",
            "End": True,
        },
        "Rejected": {
            "Type": "Fail",
            "Error": "OrderRejected",
            "Cause": "Order could not be completed",
        },
    },
}
TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Action": "sts:AssumeRole",
            "Principal": {"Service": "states.amazonaws.com"},
        }
    ],
}


@pytest.fixture(scope="module")
def machine(emulator):
    lam, iam, sfn = (
        emulator.client("lambda"),
        emulator.client("iam"),
        emulator.client("stepfunctions"),
    )
    worker_arn = create_function(lam, "sfn-worker", WORKER)
    role = iam.create_role(RoleName="sfn-role", AssumeRolePolicyDocument=json.dumps(TRUST))["Role"][
        "Arn"
    ]
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": "lambda:InvokeFunction", "Resource": worker_arn}
        ],
    }
    iam.put_role_policy(
        RoleName="sfn-role", PolicyName="InvokeWorker", PolicyDocument=json.dumps(policy)
    )
    arn = sfn.create_state_machine(
        name="orders", definition=json.dumps(DEFINITION), roleArn=role, type="STANDARD"
    )["stateMachineArn"]
    return {"arn": arn, "policy": policy}


def _history(sfn, execution):
    return sfn.get_execution_history(executionArn=execution["executionArn"])["events"]


def test_retry_waits_interval_times_backoff_then_succeeds(emulator, machine):
    sfn = emulator.client("stepfunctions")
    run = run_execution(
        sfn,
        machine["arn"],
        "retry-twice",
        {"id": "r2", "quantity": 2, "mode": "flaky", "failures": 2},
    )
    assert run["status"] == "SUCCEEDED"
    assert json.loads(run["output"]) == {"id": "r2", "summary": True}
    events = _history(sfn, run)
    failed = [e for e in events if e["type"] == "TaskFailed"]
    assert [e["taskFailedEventDetails"]["error"] for e in failed] == ["TransientOrderError"] * 2
    scheduled = [e for e in events if e["type"] == "TaskScheduled"]
    # Gaps: first retry after IntervalSeconds (1 s), second after 1 s x BackoffRate 2 = 2 s. Each
    # at least its own wait, and shorter than the next wait of the series: the slack a busy
    # machine needs (the bookkeeping around a wait is milliseconds here), not a guess of its speed.
    gap1 = (scheduled[1]["timestamp"] - failed[0]["timestamp"]).total_seconds()
    gap2 = (scheduled[2]["timestamp"] - failed[1]["timestamp"]).total_seconds()
    assert 0.9 <= gap1 < 2.0
    assert 1.9 <= gap2 < 4.0
    assert [e["type"] for e in events].count("TaskSucceeded") == 2


def test_catch_routes_a_permanent_error_to_the_fail_state(emulator, machine):
    sfn = emulator.client("stepfunctions")
    run = run_execution(
        sfn, machine["arn"], "permanent", {"id": "p", "quantity": 2, "mode": "permanent"}
    )
    assert run["status"] == "FAILED" and run["error"] == "OrderRejected"
    events = _history(sfn, run)
    assert [e["taskFailedEventDetails"]["error"] for e in events if e["type"] == "TaskFailed"] == [
        "InvalidOrder"
    ]
    assert [
        e["stateEnteredEventDetails"]["name"] for e in events if e["type"] == "FailStateEntered"
    ] == ["Rejected"]


def test_choice_default_rejects_non_positive_quantity(emulator, machine):
    sfn = emulator.client("stepfunctions")
    run = run_execution(sfn, machine["arn"], "zero", {"id": "z", "quantity": 0})
    assert run["status"] == "FAILED" and run["error"] == "OrderRejected"
    assert not [e for e in _history(sfn, run) if e["type"] == "TaskScheduled"]


def test_role_without_invoke_permission_fails_without_running_the_worker(emulator, machine):
    sfn, iam, _logs = (
        emulator.client("stepfunctions"),
        emulator.client("iam"),
        emulator.client("logs"),
    )
    iam.delete_role_policy(RoleName="sfn-role", PolicyName="InvokeWorker")
    try:
        before = _invocations(emulator)
        run = run_execution(
            sfn, machine["arn"], "denied", {"id": "d", "quantity": 2, "mode": "flaky"}
        )
        assert _invocations(emulator) == before
    finally:
        iam.put_role_policy(
            RoleName="sfn-role",
            PolicyName="InvokeWorker",
            PolicyDocument=json.dumps(machine["policy"]),
        )
    assert run["status"] == "FAILED"
    assert run["error"] == "Lambda.AWSLambdaException"
    assert "is not authorized to perform: lambda:InvokeFunction on resource:" in run["cause"]
    assert "AccessDeniedException" in run["cause"] and "Status Code: 403" in run["cause"]
    types = [e["type"] for e in _history(sfn, run)]
    assert "TaskSucceeded" not in types and types.count("TaskFailed") == 1
    # With the policy restored the same input runs the worker again.
    run = run_execution(sfn, machine["arn"], "allowed-again", {"id": "a", "quantity": 1})
    assert run["status"] == "SUCCEEDED"


def test_invocations_name_execution_state_and_attempt(emulator, machine):
    sfn = emulator.client("stepfunctions")
    run_execution(sfn, machine["arn"], "attributed", {"id": "at", "quantity": 1, "mode": "flaky"})
    from tests.support.helpers import journal

    callers = [
        i["caller"]
        for i in journal(emulator.endpoint_url, "invocations")["items"]
        if i["caller"].get("execution_name") == "attributed"
    ]
    assert [(c["state"], c["attempt"]) for c in callers] == [
        ("StoreOrder", 1),
        ("StoreOrder", 2),
        ("ReadSummary", 1),
    ]


def _invocations(emulator):
    from tests.support.helpers import journal

    return len(journal(emulator.endpoint_url, "invocations")["items"])
