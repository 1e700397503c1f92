"""Deterministic lab models built by hand from the core's frozen dataclasses.

For screenshots (the docs theme), snapshot tests and benchmarks: the same shapes the pollers
make, with fixed names, times and ids, so two runs draw the same screen. Times are UTC.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

from awsview import labspec
from awsview.core import timeline
from awsview.model.asl import parse_definition
from awsview.model.history import parse_history
from awsview.model.loglines import classify
from awsview.model.resources import (
    Execution,
    Function,
    History,
    LogEntry,
    LogFeed,
    Mapping,
    PolicyGrant,
    Queue,
    Role,
    StateMachine,
    Table,
)
from awsview.model.snapshot import Health, Snapshot
from awsview.model.state import LabState
from awsview.polling.pollers.journal import JournalData

T0 = 1_767_261_600.0  # 2026-01-01 10:00:00 UTC
NOW = T0 + 60.4  # "0.4 s ago" for snapshots fetched at T0 + 60
ACCOUNT = "123456789012"
REGION = "us-east-1"


def at(seconds: float) -> datetime:
    return datetime.fromtimestamp(T0 + seconds, tz=UTC)


def ok(key: str, data: Any, fetched: float = NOW - 0.4) -> Snapshot[Any]:
    return Snapshot(
        key.split(":", 1)[0], key, Health.OK, data, fetched_at=fetched, attempted_at=fetched
    )


def _arn(service: str, kind: str, name: str) -> str:
    separator = "/" if service == "dynamodb" else ":"
    return f"arn:aws:{service}:{REGION}:{ACCOUNT}:{kind}{separator}{name}"


def _role(name: str, trust: str, grants: list[tuple[str, str, str]]) -> Role:
    return Role(
        name,
        f"arn:aws:iam::{ACCOUNT}:role/{name}",
        (trust,),
        tuple(
            PolicyGrant(policy, "Allow", action, resource) for policy, action, resource in grants
        ),
    )


def _logs(group: str, invocations: list[tuple[float, str, list[str]]]) -> LogFeed:
    """Each invocation: (seconds after T0, request id, the lines its handler printed)."""
    lines: list[LogEntry] = []
    for start, request, printed in invocations:
        stamp = int((T0 + start) * 1000)
        texts = [
            f"START RequestId: {request} Version: $LATEST",
            *printed,
            f"END RequestId: {request}",
            f"REPORT RequestId: {request}\tDuration: 12.00 ms\tBilled Duration: 13 ms\t"
            "Memory Size: 128 MB\tMax Memory Used: 47 MB",
        ]
        stream = "2026/01/01/[$LATEST]0123456789abcdef"
        lines += [
            LogEntry(stamp, stream, f"{request}-{i}", classify(t)) for i, t in enumerate(texts)
        ]
    return LogFeed(group, tuple(lines), len(lines))


def _decision(
    cursor: int,
    seconds: float,
    table: str,
    key: str,
    before: dict | None,
    after: dict | None,
    outcome: str = "accepted",
    request: str | None = None,
    function: str | None = None,
    operation: str = "PutItem",
    condition: str | None = "attribute_not_exists(id)",
) -> dict:
    def wire(item: dict | None) -> dict | None:
        if item is None:
            return None
        return {
            k: ({"N": str(v)} if isinstance(v, int) else {"S": str(v)}) for k, v in item.items()
        }

    caller = (
        {"kind": "lambda", "function": function, "request_id": request}
        if function
        else {"kind": "api", "user_agent": "aws-cli/2"}
    )
    return {
        "cursor": cursor,
        "time": T0 + seconds,
        "table_name": table,
        "key": {"id": {"S": key}},
        "operation": operation,
        "condition": condition,
        "expression": {"names": {}, "values": {}, "update": None},
        "outcome": outcome,
        "message": None if outcome == "accepted" else "The conditional request failed",
        "before": wire(before),
        "after": wire(after),
        "request": {"Item": wire(after or before)},
        "caller": caller,
    }


def _finish(
    profile: labspec.LabSpec,
    model: LabState,
    journal: tuple[dict, ...],
    histories: tuple[History, ...] = (),
) -> LabState:
    """Adds the journal, the timeline and the checkpoints, the way their pollers would."""
    from awsview.core.checkpoints import evaluate
    from awsview.polling.pollers.timeline import log_evidence

    model.apply([ok("journal", JournalData(journal, (), "sample-journal"))])
    results, errors = log_evidence(model)
    built = timeline.build(
        timeline.Evidence(
            business_tables=profile.tables("business"),
            business_key=profile.business_key,
            journal_id="sample-journal",
            decisions=journal,
            results=tuple(results),
            errors=tuple(errors),
            histories=histories,
        )
    )
    model.apply([ok("timeline", built)])
    with mock.patch("time.time", return_value=NOW):
        model.apply([ok("checkpoints", evaluate(profile, model))])
    return model


# -- ev04 after its executions step ----------------------------------------------------------


def _history_events(
    name: str, payload: dict, steps: list[tuple[str, str | None, dict]]
) -> list[dict]:
    events = [
        {
            "id": 1,
            "previousEventId": 0,
            "timestamp": at(0),
            "type": "ExecutionStarted",
            "executionStartedEventDetails": {"input": json.dumps(payload)},
        }
    ]
    for offset, (kind, state, details) in enumerate(steps, start=2):
        key = {
            "TaskScheduled": "taskScheduledEventDetails",
            "TaskFailed": "taskFailedEventDetails",
            "TaskSucceeded": "taskSucceededEventDetails",
            "ExecutionFailed": "executionFailedEventDetails",
            "ExecutionSucceeded": "executionSucceededEventDetails",
        }.get(kind)
        if kind.endswith(("StateEntered", "StateExited")):
            key = (
                "stateEnteredEventDetails"
                if kind.endswith("Entered")
                else "stateExitedEventDetails"
            )
            details = {"name": state, **details}
        event = {
            "id": offset,
            "previousEventId": offset - 1,
            "timestamp": at(offset / 10),
            "type": kind,
        }
        if key:
            event[key] = details
        events.append(event)
    return events


def workflow_definition(worker: str) -> str:
    """The order workflow of the synthetic ev04 model (ev04_workflow.json beside this module),
    with the worker's name in its two tasks."""
    definition = json.loads((Path(__file__).with_name("ev04_workflow.json")).read_text("utf-8"))
    definition["States"]["StoreOrder"]["Parameters"]["FunctionName"] = worker
    definition["States"]["ReadSummary"]["Parameters"]["FunctionName"] = worker
    return json.dumps(definition, indent=2)


def ev04() -> tuple[labspec.LabSpec, LabState]:
    profile = labspec.load("ev04")
    prefix, worker = profile.prefix, f"{profile.prefix}worker"
    machine_arn = _arn("states", "stateMachine", f"{prefix}orders")
    definition = workflow_definition(worker)
    machine = StateMachine(
        f"{prefix}orders",
        machine_arn,
        "STANDARD",
        at(-30),
        f"arn:aws:iam::{ACCOUNT}:role/{prefix}workflow-role",
        parse_definition(definition),
        definition,
    )
    failed = {
        "error": "TransientOrderError",
        "cause": json.dumps(
            {
                "errorMessage": "Dependency temporarily unavailable",
                "errorType": "TransientOrderError",
            }
        ),
    }
    summary = {"completed": True, "id": "retry-order", "quantity": 2, "total_cents": 600}
    runs = {
        "retry-order": (
            "SUCCEEDED",
            0,
            {"id": "retry-order", "quantity": 2, "mode": "flaky"},
            [
                ("TaskStateEntered", "StoreOrder", {}),
                ("TaskScheduled", "StoreOrder", {"resource": "invoke"}),
                ("TaskFailed", "StoreOrder", failed),
                ("TaskScheduled", "StoreOrder", {"resource": "invoke"}),
                (
                    "TaskSucceeded",
                    "StoreOrder",
                    {"output": json.dumps({"Payload": {"id": "retry-order", "total_cents": 600}})},
                ),
                ("TaskStateExited", "StoreOrder", {}),
                ("TaskStateEntered", "ReadSummary", {}),
                ("TaskScheduled", "ReadSummary", {"resource": "invoke"}),
                ("TaskSucceeded", "ReadSummary", {"output": json.dumps({"Payload": summary})}),
                ("TaskStateExited", "ReadSummary", {}),
                ("ExecutionSucceeded", None, {"output": json.dumps(summary)}),
            ],
        ),
        "permanent-order": (
            "FAILED",
            2,
            {"id": "permanent-order", "quantity": 2, "mode": "permanent"},
            [
                ("TaskStateEntered", "StoreOrder", {}),
                ("TaskScheduled", "StoreOrder", {"resource": "invoke"}),
                (
                    "TaskFailed",
                    "StoreOrder",
                    {"error": "InvalidOrder", "cause": "Order cannot be completed"},
                ),
                ("TaskStateExited", "StoreOrder", {}),
                ("FailStateEntered", "Rejected", {}),
                (
                    "ExecutionFailed",
                    None,
                    {"error": "OrderRejected", "cause": "Order could not be completed"},
                ),
            ],
        ),
        "denied-order": (
            "FAILED",
            3,
            {"id": "denied-order", "quantity": 2, "mode": "flaky"},
            [
                ("TaskStateEntered", "StoreOrder", {}),
                ("TaskScheduled", "StoreOrder", {"resource": "invoke"}),
                (
                    "TaskFailed",
                    "StoreOrder",
                    {
                        "error": "Lambda.AWSLambdaException",
                        "cause": "is not authorized to perform: lambda:InvokeFunction",
                    },
                ),
                (
                    "ExecutionFailed",
                    None,
                    {"error": "Lambda.AWSLambdaException", "cause": "not authorized"},
                ),
            ],
        ),
    }
    executions, histories = [], []
    for name, (status, start, payload, steps) in runs.items():
        arn = _arn("states", "execution", f"{prefix}orders:{name}")
        error = None if status == "SUCCEEDED" else steps[-1][2]
        executions.append(
            Execution(
                name,
                arn,
                machine_arn,
                status,
                at(start),
                at(start + 1.2 if start == 0 else start + 0.1),
                payload,
                summary if status == "SUCCEEDED" else None,
                error and error["error"],
                error and error["cause"],
                True,
            )
        )
        histories.append(
            History(arn, name, parse_history(_history_events(name, payload, steps)), True)
        )
    executions.sort(key=lambda e: e.started, reverse=True)
    model = LabState()
    model.apply(
        [
            ok("state_machines", (machine,)),
            ok(f"executions:{machine.name}", tuple(executions)),
            *(ok(f"history:{h.execution_arn}", h) for h in histories),
            ok(
                f"table:{prefix}orders",
                Table(
                    f"{prefix}orders",
                    "ACTIVE",
                    ("id",),
                    ({"id": "retry-order", "quantity": 2, "total_cents": 600},),
                ),
            ),
            ok(
                f"table:{prefix}attempts",
                Table(
                    f"{prefix}attempts", "ACTIVE", ("id",), ({"id": "retry-order", "attempts": 2},)
                ),
            ),
            ok(
                f"table:{prefix}reference",
                Table(
                    f"{prefix}reference",
                    "ACTIVE",
                    ("id",),
                    ({"id": "reference", "note": "keep unchanged"},),
                    baseline="unchanged",
                ),
            ),
            ok("queues", ()),
            ok(
                "functions",
                (
                    Function(
                        worker,
                        _arn("lambda", "function", worker),
                        "python3.12",
                        "app.handler",
                        f"arn:aws:iam::{ACCOUNT}:role/{worker}-role",
                        10,
                        "OzhtXR2Btpah2y2E=",
                        "2026-01-01T09:59:00.000+0000",
                        "Active",
                        ("ATTEMPTS_TABLE", "ORDERS_TABLE"),
                    ),
                ),
            ),
            ok(
                f"logs:/aws/lambda/{worker}",
                _logs(
                    f"/aws/lambda/{worker}",
                    [
                        (
                            0.3,
                            "req-0001",
                            [
                                'WORKFLOW {"id": "retry-order", "mode": "flaky", "quantity": 2}',
                                "[ERROR] TransientOrderError: Dependency temporarily unavailable",
                            ],
                        ),
                        (
                            1.3,
                            "req-0002",
                            [
                                'WORKFLOW {"id": "retry-order", "mode": "flaky", "quantity": 2}',
                                'RESULT {"id": "retry-order", "quantity": 2, "total_cents": 600}',
                            ],
                        ),
                        (
                            1.5,
                            "req-0003",
                            [
                                'RESULT {"completed": true, "id": "retry-order", "quantity": 2, '
                                '"total_cents": 600}'
                            ],
                        ),
                        (2.3, "req-0004", ["[ERROR] InvalidOrder: Order cannot be completed"]),
                    ],
                ),
            ),
            ok(
                "roles",
                (
                    _role(
                        f"{worker}-role",
                        "lambda.amazonaws.com",
                        [
                            (
                                "OrdersAndAttempts",
                                "dynamodb:PutItem",
                                _arn("dynamodb", "table", f"{prefix}orders"),
                            )
                        ],
                    ),
                    _role(
                        f"{prefix}workflow-role",
                        "states.amazonaws.com",
                        [
                            (
                                "InvokeWorker",
                                "lambda:InvokeFunction",
                                _arn("lambda", "function", worker),
                            )
                        ],
                    ),
                ),
            ),
        ]
    )
    journal = (
        _decision(
            1,
            1.3,
            f"{prefix}orders",
            "retry-order",
            None,
            {"id": "retry-order", "quantity": 2, "total_cents": 600},
            request="req-0002",
            function=worker,
            condition=None,
        ),
    )
    return profile, _finish(profile, model, journal, tuple(histories))


# -- q05 after its repeats step --------------------------------------------------------------


def q05() -> tuple[labspec.LabSpec, LabState]:
    profile = labspec.load("q05")
    prefix, worker = profile.prefix, f"{profile.prefix}worker"
    queue_arn = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{prefix}jobs"
    orders = f"{prefix}orders"
    dedup = {"id": "dedup-order", "quantity": 4, "total_cents": 1100}
    other = {"id": "other-order", "quantity": 1, "total_cents": 350}
    invocations = [
        (
            0.0,
            "req-0101",
            [
                'EVENT {"Records": 1, "receiptHandle": "‹redacted›"}',
                'JOB {"id": "dedup-order", "quantity": 4}',
                (
                    'RESULT {"duplicate": false, "id": "dedup-order", '
                    '"processed": true, "quantity": 4}'
                ),
            ],
        ),
        (
            5.0,
            "req-0102",
            [
                'JOB {"id": "dedup-order", "quantity": 4}',
                (
                    'RESULT {"duplicate": true, "id": "dedup-order", '
                    '"processed": false, "quantity": 4}'
                ),
            ],
        ),
        (
            5.1,
            "req-0103",
            [
                'JOB {"id": "dedup-order", "quantity": 4}',
                (
                    'RESULT {"duplicate": true, "id": "dedup-order", '
                    '"processed": false, "quantity": 4}'
                ),
            ],
        ),
        (
            5.2,
            "req-0104",
            [
                'JOB {"id": "other-order", "quantity": 1}',
                (
                    'RESULT {"duplicate": false, "id": "other-order", '
                    '"processed": true, "quantity": 1}'
                ),
            ],
        ),
    ]
    model = LabState()
    model.apply(
        [
            ok(
                "queues",
                (
                    Queue(
                        f"{prefix}jobs",
                        f"http://sqs.{REGION}.localhost/{ACCOUNT}/{prefix}jobs",
                        queue_arn,
                        0,
                        0,
                        0,
                        30,
                        depth=(
                            (T0 - 240, 0, 0),
                            (T0 + 1, 1, 0),
                            (T0 + 1.5, 0, 1),
                            (T0 + 4, 2, 1),
                            (T0 + 4.5, 0, 3),
                            (T0 + 5.5, 0, 0),
                        ),
                    ),
                ),
            ),
            ok(f"table:{orders}", Table(orders, "ACTIVE", ("id",), (dedup, other))),
            ok(
                f"table:{prefix}reference",
                Table(
                    f"{prefix}reference",
                    "ACTIVE",
                    ("id",),
                    ({"id": "reference", "note": "keep unchanged"},),
                    baseline="unchanged",
                ),
            ),
            ok(f"logs:/aws/lambda/{worker}", _logs(f"/aws/lambda/{worker}", invocations)),
            ok(
                "functions",
                (
                    Function(
                        worker,
                        _arn("lambda", "function", worker),
                        "python3.12",
                        "app.handler",
                        f"arn:aws:iam::{ACCOUNT}:role/{worker}-role",
                        10,
                        "9QfGx0m1Lk2c=",
                        "2026-01-01T09:59:00.000+0000",
                        "Active",
                        ("TABLE_NAME",),
                        (
                            Mapping(
                                "5f2c1b7e-0000-4000-8000-000000000001",
                                queue_arn,
                                _arn("lambda", "function", worker),
                                1,
                                "Enabled",
                            ),
                        ),
                    ),
                ),
            ),
            ok(
                "roles",
                (
                    _role(
                        f"{worker}-role",
                        "lambda.amazonaws.com",
                        [
                            ("QueueAndOrders", "sqs:ReceiveMessage", queue_arn),
                            (
                                "QueueAndOrders",
                                "dynamodb:PutItem",
                                _arn("dynamodb", "table", orders),
                            ),
                        ],
                    ),
                ),
            ),
        ]
    )
    journal = (
        _decision(1, 0.0, orders, "dedup-order", None, dedup, request="req-0101", function=worker),
        _decision(
            2,
            5.0,
            orders,
            "dedup-order",
            dedup,
            dedup,
            "ConditionalCheckFailedException",
            "req-0102",
            worker,
        ),
        _decision(
            3,
            5.1,
            orders,
            "dedup-order",
            dedup,
            dedup,
            "ConditionalCheckFailedException",
            "req-0103",
            worker,
        ),
        _decision(4, 5.2, orders, "other-order", None, other, request="req-0104", function=worker),
    )
    return profile, _finish(profile, model, journal)


SAMPLES = {"ev04": ev04, "q05": q05}


def sample(name: str) -> tuple[labspec.LabSpec, LabState]:
    return SAMPLES[name]()


def big(
    items: int = 10_000, executions: int = 1_000, log_lines: int = 100_000
) -> tuple[labspec.LabSpec, LabState]:
    """ev04 with a lot of everything: the benchmark's model."""
    profile, model = ev04()
    prefix = profile.prefix
    machine = model.data("state_machines")[0]
    runs = tuple(
        Execution(
            f"run-{i:05d}",
            _arn("states", "execution", f"{prefix}orders:run-{i:05d}"),
            machine.arn,
            "SUCCEEDED" if i % 7 else "FAILED",
            at(i),
            at(i + 1),
            {"id": f"order-{i:05d}"},
            {"total_cents": (i % 9) * 250 + 100},
        )
        for i in range(executions)
    )
    rows = tuple(
        {
            "id": f"order-{i:05d}",
            "quantity": i % 9,
            "total_cents": (i % 9) * 250 + 100,
            "note": f"bulk item {i}",
        }
        for i in range(items)
    )
    group = f"/aws/lambda/{prefix}worker"
    lines = tuple(
        LogEntry(
            int((T0 + i / 100) * 1000),
            "stream",
            f"ev{i // 4}",
            classify(
                f'RESULT {{"id": "order-{i:05d}", "processed": true}}'
                if i % 4 == 2
                else f"START RequestId: r{i} Version: $LATEST"
                if i % 4 == 0
                else f"line {i}"
            ),
        )
        for i in range(log_lines)
    )
    model.apply(
        [
            ok(f"executions:{machine.name}", runs),
            ok(f"table:{prefix}orders", Table(f"{prefix}orders", "ACTIVE", ("id",), rows)),
            ok(f"logs:{group}", LogFeed(group, lines, log_lines)),
        ]
    )
    return profile, model
