"""Execution histories: ev04's three executions, incremental parsing, odd events."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from awsview.model.history import decode_json, parse_history

T0 = datetime(2025, 5, 1, 12, 0, 0, tzinfo=UTC)
WORKER = "arn:aws:lambda:us-east-1:123456789012:function:labex-ev04-worker"
INVOKE = {"resource": "invoke", "resourceType": "lambda"}
DETAILS_KEY = {
    "ExecutionStarted": "executionStartedEventDetails",
    "ExecutionSucceeded": "executionSucceededEventDetails",
    "ExecutionFailed": "executionFailedEventDetails",
    "TaskScheduled": "taskScheduledEventDetails",
    "TaskStarted": "taskStartedEventDetails",
    "TaskSucceeded": "taskSucceededEventDetails",
    "TaskFailed": "taskFailedEventDetails",
    "LambdaFunctionScheduled": "lambdaFunctionScheduledEventDetails",
    "LambdaFunctionSucceeded": "lambdaFunctionSucceededEventDetails",
}


def history(*steps):
    """botocore-shaped events from (type, seconds after T0, details), linked one after another."""
    events = []
    for number, (kind, seconds, details) in enumerate(steps, start=1):
        event = {
            "id": number,
            "previousEventId": number - 1,
            "type": kind,
            "timestamp": T0 + timedelta(seconds=seconds),
        }
        if kind.endswith("StateEntered"):
            event["stateEnteredEventDetails"] = details
        elif kind.endswith("StateExited"):
            event["stateExitedEventDetails"] = details
        elif details is not None:
            event[DETAILS_KEY[kind]] = details
        events.append(event)
    return events


def lambda_output(payload):
    return json.dumps(
        {
            "ExecutedVersion": "$LATEST",
            "Payload": payload,
            "SdkHttpMetadata": {"httpStatusCode": 200},
            "StatusCode": 200,
        }
    )


def scheduled(payload):
    return {
        **INVOKE,
        "region": "us-east-1",
        "parameters": json.dumps({"FunctionName": "labex-ev04-worker", "Payload": payload}),
    }


ORDER = {"id": "retry-order", "quantity": 2, "mode": "flaky"}
SAVED = {"id": "retry-order", "quantity": 2, "total_cents": 600}
TRANSIENT_CAUSE = json.dumps(
    {
        "errorMessage": "Temporary failure before the write",
        "errorType": "TransientOrderError",
        "requestId": "r-1",
        "stackTrace": ['  File "/var/task/app.py", line 9\n'],
    }
)

RETRY_ORDER = history(
    ("ExecutionStarted", 0, {"input": json.dumps(ORDER), "roleArn": "arn:aws:iam::1:role/r"}),
    ("ChoiceStateEntered", 0.01, {"name": "CheckQuantity", "input": json.dumps(ORDER)}),
    ("ChoiceStateExited", 0.02, {"name": "CheckQuantity", "output": json.dumps(ORDER)}),
    ("TaskStateEntered", 0.03, {"name": "StoreOrder", "input": json.dumps(ORDER)}),
    ("TaskScheduled", 0.04, scheduled(ORDER)),
    ("TaskStarted", 0.05, INVOKE),
    ("TaskFailed", 0.30, {**INVOKE, "error": "TransientOrderError", "cause": TRANSIENT_CAUSE}),
    ("TaskScheduled", 1.30, scheduled(ORDER)),
    ("TaskStarted", 1.31, INVOKE),
    ("TaskSucceeded", 1.50, {**INVOKE, "output": lambda_output(SAVED)}),
    (
        "TaskStateExited",
        1.51,
        {"name": "StoreOrder", "output": json.dumps({**ORDER, "saved": {"result": SAVED}})},
    ),
    ("TaskStateEntered", 1.52, {"name": "ReadSummary"}),
    ("TaskScheduled", 1.53, scheduled({"stage": "summary", "id": "retry-order"})),
    ("TaskStarted", 1.54, INVOKE),
    # A worker that returns json.dumps(...) gives a Payload that is itself JSON text.
    ("TaskSucceeded", 1.70, {**INVOKE, "output": lambda_output(json.dumps(SAVED))}),
    ("TaskStateExited", 1.71, {"name": "ReadSummary", "output": json.dumps(SAVED)}),
    ("ExecutionSucceeded", 1.72, {"output": json.dumps(SAVED)}),
)

PERMANENT = {"id": "permanent-order", "quantity": 2, "mode": "permanent"}
PERMANENT_ORDER = history(
    ("ExecutionStarted", 0, {"input": json.dumps(PERMANENT)}),
    ("ChoiceStateEntered", 0.01, {"name": "CheckQuantity"}),
    ("ChoiceStateExited", 0.02, {"name": "CheckQuantity"}),
    ("TaskStateEntered", 0.03, {"name": "StoreOrder"}),
    ("TaskScheduled", 0.04, scheduled(PERMANENT)),
    ("TaskStarted", 0.05, INVOKE),
    (
        "TaskFailed",
        0.20,
        {
            **INVOKE,
            "error": "InvalidOrder",
            "cause": json.dumps({"errorType": "InvalidOrder", "errorMessage": "Order is invalid"}),
        },
    ),
    ("TaskStateExited", 0.21, {"name": "StoreOrder"}),
    ("FailStateEntered", 0.22, {"name": "Rejected"}),
    ("ExecutionFailed", 0.23, {"error": "OrderRejected", "cause": "Order could not be completed"}),
)

DENIED_CAUSE = (
    "User: arn:aws:sts::123456789012:assumed-role/labex-ev04-workflow-role/abc is not authorized"
    f" to perform: lambda:InvokeFunction on resource: {WORKER} because no identity-based policy"
    " allows the lambda:InvokeFunction action (Service: AWSLambda; Status Code: 403;"
    " Error Code: AccessDeniedException; Request ID: 1234)"
)
DENIED_ORDER = history(
    ("ExecutionStarted", 0, {"input": json.dumps({**ORDER, "id": "denied-order"})}),
    ("ChoiceStateEntered", 0.01, {"name": "CheckQuantity"}),
    ("ChoiceStateExited", 0.02, {"name": "CheckQuantity"}),
    ("TaskStateEntered", 0.03, {"name": "StoreOrder"}),
    ("TaskScheduled", 0.04, scheduled(ORDER)),
    ("TaskFailed", 0.10, {**INVOKE, "error": "Lambda.AWSLambdaException", "cause": DENIED_CAUSE}),
    ("ExecutionFailed", 0.11, {"error": "Lambda.AWSLambdaException", "cause": DENIED_CAUSE}),
)


def test_retry_order_counts_two_attempts_of_store_order():
    parsed = parse_history(RETRY_ORDER)
    assert dict(parsed.attempts) == {"StoreOrder": 2, "ReadSummary": 1}
    assert parsed.is_finished and parsed.status == "SUCCEEDED" and parsed.failure is None
    assert [(e.type, e.error) for e in parsed.task_failures] == [
        ("TaskFailed", "TransientOrderError")
    ]
    assert [e.type for e in parsed.events].count("TaskSucceeded") == 2


def test_retry_order_states_and_attempts_per_event():
    parsed = parse_history(RETRY_ORDER)
    assert [(e.id, e.type, e.state, e.attempt) for e in parsed.events] == [
        (1, "ExecutionStarted", None, None),
        (2, "ChoiceStateEntered", "CheckQuantity", None),
        (3, "ChoiceStateExited", "CheckQuantity", None),
        (4, "TaskStateEntered", "StoreOrder", None),
        (5, "TaskScheduled", "StoreOrder", 1),
        (6, "TaskStarted", "StoreOrder", 1),
        (7, "TaskFailed", "StoreOrder", 1),
        (8, "TaskScheduled", "StoreOrder", 2),
        (9, "TaskStarted", "StoreOrder", 2),
        (10, "TaskSucceeded", "StoreOrder", 2),
        (11, "TaskStateExited", "StoreOrder", None),
        (12, "TaskStateEntered", "ReadSummary", None),
        (13, "TaskScheduled", "ReadSummary", 1),
        (14, "TaskStarted", "ReadSummary", 1),
        (15, "TaskSucceeded", "ReadSummary", 1),
        (16, "TaskStateExited", "ReadSummary", None),
        (17, "ExecutionSucceeded", None, None),
    ]


def test_retry_order_decoded_fields():
    events = parse_history(RETRY_ORDER).events
    assert events[0].input == ORDER and events[0].previous_id == 0
    failed = events[6]
    assert failed.cause == TRANSIENT_CAUSE and failed.resource == "invoke"
    assert failed.resource_type == "lambda" and not failed.is_access_denied
    assert events[7].timestamp - failed.timestamp == timedelta(seconds=1)
    assert events[7].input == {"FunctionName": "labex-ev04-worker", "Payload": ORDER}
    assert events[9].output["StatusCode"] == 200 and events[9].payload == SAVED
    assert events[14].payload == SAVED  # Payload was JSON text
    assert events[10].output == {**ORDER, "saved": {"result": SAVED}}
    assert events[16].output == SAVED and events[16].payload is None
    assert events[6].details["error"] == "TransientOrderError"


def test_permanent_order_is_caught_into_rejected():
    parsed = parse_history(PERMANENT_ORDER)
    assert dict(parsed.attempts) == {"StoreOrder": 1}
    assert [e.error for e in parsed.task_failures] == ["InvalidOrder"]
    assert [(e.type, e.state) for e in parsed.events[-3:]] == [
        ("TaskStateExited", "StoreOrder"),
        ("FailStateEntered", "Rejected"),
        ("ExecutionFailed", None),
    ]
    assert parsed.status == "FAILED" and parsed.is_finished
    assert parsed.failure.error == "OrderRejected"
    assert parsed.failure.cause == "Order could not be completed"


def test_denied_order_fails_with_access_denied():
    parsed = parse_history(DENIED_ORDER)
    assert dict(parsed.attempts) == {"StoreOrder": 1}  # scheduled, though nothing was invoked
    [failure] = parsed.task_failures
    assert failure.error == "Lambda.AWSLambdaException" and failure.is_access_denied
    assert failure.state == "StoreOrder" and failure.attempt == 1
    assert parsed.failure.error == "Lambda.AWSLambdaException"
    assert "lambda:InvokeFunction" in parsed.failure.cause
    assert parsed.status == "FAILED"


@pytest.mark.parametrize("split", range(len(RETRY_ORDER) + 1))
def test_incremental_parsing_matches_one_pass(split):
    whole = parse_history(RETRY_ORDER)
    first = parse_history(RETRY_ORDER[:split])
    assert first.is_finished == (split == len(RETRY_ORDER))
    continued = parse_history(RETRY_ORDER[split:], previous=first)
    assert continued == whole
    assert first.events == whole.events[:split]  # the earlier snapshot did not change


def test_overlapping_and_reversed_pages_are_deduplicated():
    first = parse_history(RETRY_ORDER[:10])
    again = parse_history(list(reversed(RETRY_ORDER[4:])), previous=first)
    assert again == parse_history(RETRY_ORDER)
    assert parse_history([], previous=again) == again


def test_empty_history():
    parsed = parse_history([])
    assert parsed.events == () and parsed.status is None and not parsed.is_finished
    assert parsed.failure is None and parsed.last_id == 0 and dict(parsed.attempts) == {}


def test_unknown_event_type_keeps_details_and_state():
    events = history(("ExecutionStarted", 0, {}), ("TaskStateEntered", 1, {"name": "S"}))
    events.append(
        {
            "id": 3,
            "previousEventId": 2,
            "type": "FancyNewThing",
            "timestamp": "2025-05-01T12:00:03+00:00",
            "fancyNewThingEventDetails": {"x": 1, "output": "not json {"},
        }
    )
    events.append({"id": 4, "type": "Odd"})  # no link, no timestamp, no details
    parsed = parse_history(events)
    fancy, odd = parsed.events[2:]
    assert fancy.type == "FancyNewThing" and dict(fancy.details) == {"x": 1, "output": "not json {"}
    assert fancy.state == "S" and fancy.attempt is None and fancy.output == "not json {"
    assert fancy.timestamp == T0 + timedelta(seconds=3)
    assert odd.state == "S" and odd.timestamp is None and odd.previous_id is None
    assert parsed.status == "RUNNING" and not parsed.is_finished


def test_events_without_ids_are_kept_in_arrival_order():
    entered = {"type": "PassStateEntered", "stateEnteredEventDetails": {"name": "P"}}
    parsed = parse_history([{"type": "ExecutionStarted"}, entered])
    assert [(e.id, e.state) for e in parsed.events] == [(1, None), (2, "P")]


def test_concurrent_map_iterations_count_attempts_per_entry():
    def event(number, previous, kind, **details):
        event = {"id": number, "previousEventId": previous, "type": kind, "timestamp": T0}
        if details:
            key = "stateEnteredEventDetails" if kind.endswith("StateEntered") else "x"
            event[key if key != "x" else DETAILS_KEY.get(kind, "otherEventDetails")] = details
        return event

    events = [
        event(1, 0, "ExecutionStarted"),
        event(2, 1, "MapStateEntered", name="M"),
        event(3, 2, "MapStateStarted"),
        event(4, 3, "MapIterationStarted"),
        event(5, 3, "MapIterationStarted"),
        event(6, 4, "TaskStateEntered", name="I"),
        event(7, 5, "TaskStateEntered", name="I"),
        event(8, 6, "TaskScheduled"),
        event(9, 7, "TaskScheduled"),
        event(10, 8, "TaskFailed", error="E"),
        event(11, 10, "TaskScheduled"),
        event(12, 9, "TaskSucceeded", output='{"Payload": "[1, 2]"}'),
    ]
    parsed = parse_history(events)
    assert [(e.id, e.state, e.attempt) for e in parsed.events[2:]] == [
        (3, "M", None),
        (4, "M", None),
        (5, "M", None),
        (6, "I", None),
        (7, "I", None),
        (8, "I", 1),
        (9, "I", 1),
        (10, "I", 1),
        (11, "I", 2),
        (12, "I", 1),
    ]
    assert dict(parsed.attempts) == {"I": 3}
    assert parsed.events[-1].payload == [1, 2]


def test_legacy_lambda_resource_events():
    parsed = parse_history(
        history(
            ("ExecutionStarted", 0, {}),
            ("TaskStateEntered", 0, {"name": "Legacy"}),
            ("LambdaFunctionScheduled", 0, {"resource": WORKER, "input": '{"a": 1}'}),
            ("LambdaFunctionSucceeded", 1, {"output": '{"ok": true}'}),
        )
    )
    scheduled_event, succeeded = parsed.events[2:]
    assert scheduled_event.attempt == 1 and scheduled_event.resource == WORKER
    assert scheduled_event.input == {"a": 1}
    assert succeeded.payload == {"ok": True} and succeeded.attempt == 1
    assert dict(parsed.attempts) == {"Legacy": 1}


def test_redriven_execution_runs_again():
    events = PERMANENT_ORDER + [{"id": 11, "previousEventId": 10, "type": "ExecutionRedriven"}]
    parsed = parse_history(events)
    assert parsed.status == "RUNNING" and not parsed.is_finished and parsed.failure is None


def test_snapshots_are_immutable_and_hashable():
    parsed = parse_history(PERMANENT_ORDER)
    with pytest.raises(TypeError):
        parsed.attempts["StoreOrder"] = 5  # type: ignore[index]
    with pytest.raises(AttributeError):
        parsed.events[0].state = "x"  # type: ignore[misc]
    assert len({*parsed.events}) == len(parsed.events)


def test_decode_json():
    assert decode_json('{"a": [1]}') == {"a": [1]}
    assert decode_json("plain words") == "plain words"
    assert decode_json(None) is None and decode_json({"a": 1}) == {"a": 1}
    assert decode_json("[" * 50_000) == "[" * 50_000


@pytest.mark.parametrize(
    ("started", "unrelated"),
    [
        (T0, False),  # the usual: started when its first event was stamped
        (T0 + timedelta(seconds=60), False),  # a minute of skew is not a verdict
        (T0 - timedelta(seconds=5), False),  # events after the start, as always
        (T0 + timedelta(days=2000), True),  # stock moto: a fixed history dated 2020
        (None, False),  # start unknown: nothing can be said
        (datetime(2031, 1, 1), False),  # no time zone on one side: nothing can be said
    ],
)
def test_a_history_dated_before_its_execution_started_is_not_its_own(started, unrelated):
    from awsview.model.resources import History

    events = parse_history(history(("ExecutionStarted", 0, {"input": "{}"})))
    item = History("arn:x", "x", events, complete=False, started=started)
    assert bool(item.unrelated) is unrelated
    if unrelated:
        assert "not this execution's" in item.unrelated and "2025-05-01" in item.unrelated
