"""Hostile input through the parsers, the renderers, `awsview dump` and the app: markup, ANSI/OSC
escapes and every other control character, invalid UTF-8, 400 KB items, binary and set
attributes, non-JSON RESULT lines, 10,000-event histories, malformed definitions.

Each case builds a whole lab model from its input (every string at once: names, values, log
lines, errors, causes) and renders every panel. Pass: no crash, no control character in any
rendered title, freshness, note or cell, and text that looks like markup comes out as written.
Hand-picked cases live in tests/corpus/; hypothesis generates the rest.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import time
import unicodedata
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awsview import kinds, labspec
from awsview.aws.errors import classify as classify_error
from awsview.aws.session import Target
from awsview.core import checkpoints, render, timeline
from awsview.core import printout as dump
from awsview.model.asl import DefinitionError, parse_definition
from awsview.model.history import parse_history
from awsview.model.items import diff_items, format_value, item_to_plain, plain_to_json
from awsview.model.loglines import classify, parse_event, split_event
from awsview.model.resources import (
    Execution,
    Function,
    History,
    LogFeed,
    Mapping,
    Queue,
    Role,
    StateMachine,
    Table,
)
from awsview.model.snapshot import absent, failed, succeeded
from awsview.model.state import LabState
from awsview.polling.pollers.iam import grants, principals
from awsview.polling.pollers.journal import JournalData
from awsview.polling.pollers.logs import _Follow
from tests.support.examples import examples

CORPUS = Path(__file__).parents[1] / "corpus"
STRINGS: dict[str, str] = json.loads((CORPUS / "strings.json").read_text())["strings"]
LOG_BYTES = {
    name: bytes.fromhex(text)
    for name, text in json.loads((CORPUS / "log-bytes.json").read_text())["messages"].items()
}
DEFINITIONS: list[str] = json.loads((CORPUS / "definitions.json").read_text())["definitions"]

# Terminal controls (C0, DEL, C1) and the bidi overrides and isolates that reorder what is shown.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
NOW = 1_800_000_000.0
T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
PROFILE = dataclasses.replace(labspec.load("ev04"), panels=kinds.NAMES)  # every panel
BUSINESS = PROFILE.tables("business")[0]
TARGET = Target(endpoint_url="http://127.0.0.1:5000").describe()
MACHINE_ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:labex-ev04-orders"

# Reasons a failed call leaves on a snapshot (AWS error messages, exception text) are cleaned by
# errors.classify, so the corpus models carry the hostile text itself.
REASONS_UNCLEANED = False

SETTINGS = settings(
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)


# -- a whole model from one hostile input ---------------------------------------------------


def definition_for(text: str) -> str:
    return json.dumps(
        {
            "StartAt": text or "A",
            "States": {
                text or "A": {
                    "Type": "Task",
                    "Resource": "arn:aws:states:::lambda:invoke",
                    "Parameters": {"FunctionName": text, "Payload.$": "$"},
                    "Retry": [
                        {
                            "ErrorEquals": [text],
                            "IntervalSeconds": 1,
                            "BackoffRate": 2,
                            "MaxAttempts": 3,
                        }
                    ],
                    "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "F"}],
                    "End": True,
                },
                "F": {"Type": "Fail", "Error": text, "Cause": text},
            },
        }
    )


def events_for(text: str) -> list[dict[str, Any]]:
    state = text or "A"
    payload = json.dumps({"Payload": {"id": text, "duplicate": True, "note": text}})
    t = [T0 + timedelta(seconds=s) for s in range(8)]
    return [
        {
            "id": 1,
            "type": "ExecutionStarted",
            "timestamp": t[0],
            "executionStartedEventDetails": {"input": json.dumps({"id": text})},
        },
        {
            "id": 2,
            "previousEventId": 1,
            "type": "TaskStateEntered",
            "timestamp": t[1],
            "stateEnteredEventDetails": {"name": state, "input": text},
        },
        {
            "id": 3,
            "previousEventId": 2,
            "type": "TaskScheduled",
            "timestamp": t[1],
            "taskScheduledEventDetails": {
                "resource": "invoke",
                "resourceType": "lambda",
                "parameters": json.dumps({"FunctionName": text}),
            },
        },
        {
            "id": 4,
            "previousEventId": 3,
            "type": "TaskFailed",
            "timestamp": t[2],
            "taskFailedEventDetails": {"error": text, "cause": text},
        },
        {
            "id": 5,
            "previousEventId": 4,
            "type": "TaskScheduled",
            "timestamp": t[3],
            "taskScheduledEventDetails": {"resource": "invoke", "resourceType": "lambda"},
        },
        {
            "id": 6,
            "previousEventId": 5,
            "type": "TaskSucceeded",
            "timestamp": t[4],
            "taskSucceededEventDetails": {"output": payload},
        },
        {
            "id": 7,
            "previousEventId": 6,
            "type": "TaskStateExited",
            "timestamp": t[5],
            "stateExitedEventDetails": {"name": state, "output": text},
        },
        {
            "id": 8,
            "previousEventId": 7,
            "type": "ExecutionFailed",
            "timestamp": t[6],
            "executionFailedEventDetails": {"error": text, "cause": text},
        },
    ]


def item_for(text: str) -> dict[str, Any]:
    return {
        "id": {"S": text or "k"},
        "note": {"S": text},
        (text or "n")[:64]: {"S": text},
        "tags": {"SS": [text, "[/]"]},
        "blob": {"B": text.encode("utf-8", "surrogatepass")},
        "nested": {"M": {text: {"L": [{"S": text}, {"N": "1.50"}, {"NULL": True}]}}},
    }


def model_for(
    text: str,
    log: str | bytes | None = None,
    item: dict[str, Any] | None = None,
    events: list[dict[str, Any]] | None = None,
    definition: str | None = None,
    table_name: str = BUSINESS,
    slot: str | None = None,
) -> LabState:
    """Every panel's data, built by the real parsers from one hostile input.

    ``slot`` names the per-resource keys (table, log groups) instead of the input, so a screen fed
    case after case updates its panels in place rather than mounting new ones."""
    where = text if slot is None else slot
    log = text if log is None else log
    item = item_for(text) if item is None else item
    events = events_for(text) if events is None else events
    definition = definition_for(text) if definition is None else definition
    model = LabState()
    parsed, error = None, None
    try:
        parsed = parse_definition(definition)
    except DefinitionError as exc:
        error = str(exc)
    machine = StateMachine(
        f"labex-ev04-orders{text}",
        MACHINE_ARN,
        "STANDARD",
        T0,
        f"arn:aws:iam::123456789012:role/{text}",
        parsed,
        definition,
        error,
    )
    arn = f"arn:aws:states:us-east-1:123456789012:execution:labex-ev04-orders:{text}"
    execution = Execution(
        text,
        arn,
        MACHINE_ARN,
        "FAILED",
        T0,
        T0 + timedelta(seconds=7),
        input={"id": text},
        output=text,
        error=text,
        cause=text,
        described=True,
    )
    history = parse_history(events)
    history = parse_history(events, previous=history)  # a second page changes nothing
    wire = dict(item)
    plain = item_to_plain(wire)
    table = Table(table_name, "ACTIVE", ("id",), (plain,), baseline=f"changed: {text}")
    follow = _Follow()
    follow.add(
        {
            "eventId": "1",
            "timestamp": 1,
            "logStreamName": text,
            "message": f"START RequestId: r-{text} Version: $LATEST",
        }
    )
    if isinstance(log, bytes):
        for i, line in enumerate(split_event(log)):
            follow.add({"eventId": f"b{i}", "timestamp": 2, "logStreamName": text, "message": line})
    else:
        follow.add({"eventId": "2", "timestamp": 2, "logStreamName": text, "message": log})
    follow.add(
        {
            "eventId": "3",
            "timestamp": 3,
            "logStreamName": text,
            "message": f"RESULT {json.dumps({'id': text, 'processed': text})}",
        }
    )
    follow.add(
        {"eventId": "4", "timestamp": 4, "logStreamName": text, "message": f"[ERROR] {text}"}
    )
    logs = LogFeed(f"/aws/lambda/{where}", tuple(follow.lines), follow.events)
    policy = {
        "Statement": [
            {"Effect": "Allow", "Action": [text, "lambda:InvokeFunction"], "Resource": text},
            {"Effect": text, "NotAction": text, "NotResource": [text]},
        ]
    }
    role = Role(
        text,
        f"arn:aws:iam::123456789012:role/{text}",
        principals(
            {"Statement": [{"Effect": "Allow", "Principal": {"Service": text, "AWS": [text]}}]}
        ),
        tuple(grants(text, policy)),
    )
    mapping = Mapping(
        text, f"arn:aws:sqs:us-east-1:123456789012:{text}", f"{text}", 10, text, text, text
    )
    function = Function(
        text,
        f"arn:aws:lambda:us-east-1:123456789012:function:{text}",
        text,
        text,
        text,
        3,
        text,
        text,
        text,
        (text,),
        (mapping,),
    )
    queue = Queue(
        text,
        f"https://sqs/{text}",
        f"arn:aws:sqs:us-east-1:123456789012:{text}",
        1,
        2,
        3,
        30,
        f"arn:aws:sqs:us-east-1:123456789012:{text}",
        5,
    )
    rid = f"r-{text}"
    row = {
        "cursor": 1,
        "time": NOW - 5,
        "table_name": BUSINESS,
        "key": {"id": wire.get("id")},
        "operation": "PutItem",
        "condition": text,
        "outcome": "ConditionalCheckFailedException",
        "before": wire,
        "after": wire,
        "request": {"Item": wire},
        "caller": {"kind": "lambda", "request_id": rid, "function": text},
    }
    accepted = {**row, "cursor": 2, "outcome": "accepted", "before": None, "condition": None}
    odd = {
        **row,
        "cursor": 3,
        "outcome": text,
        "operation": text,
        "caller": {"kind": text, "user_agent": text},
    }
    invocation = {
        "request_id": rid,
        "caller": {
            "kind": "stepfunctions",
            "execution_name": text,
            "state": text,
            "attempt": 2,
            "execution_arn": arn,
        },
    }
    results, errors = [], []
    for entry in follow.lines:
        if entry.line.kind == "RESULT":
            results.append((rid, entry.line.data))
        elif entry.line.kind == "ERROR":
            errors.append((rid, entry.line.text))
    built = timeline.build(
        timeline.Evidence(
            business_tables=(BUSINESS,),
            business_key="id",
            journal_id=text,
            decisions=(row, accepted, odd),
            invocations=(invocation,),
            results=tuple(results),
            errors=tuple(errors),
            histories=(History(arn, text, history, True),),
        )
    )
    model.apply(
        [
            succeeded(None, "state_machines", "state_machines", (machine,), at=NOW),
            succeeded(None, "executions", f"executions:{machine.name}", (execution,), at=NOW),
            succeeded(None, "history", f"history:{arn}", History(arn, text, history, True), at=NOW),
            succeeded(None, "table", f"table:{table_name}", table, note=text, at=NOW),
            succeeded(None, "queues", "queues", (queue,), at=NOW),
            succeeded(None, "functions", "functions", (function,), at=NOW),
            succeeded(None, "logs", f"logs:/aws/lambda/{where}", logs, at=NOW),
            succeeded(None, "roles", "roles", (role,), at=NOW),
            succeeded(
                None,
                "journal",
                "journal",
                JournalData((row, accepted, odd), (invocation,), text),
                at=NOW,
            ),
            succeeded(None, "timeline", "timeline", built, at=NOW),
        ]
    )
    # The errors a failed call leaves on a snapshot come from AWS too.
    said = "ResourceNotFoundException" if REASONS_UNCLEANED else text
    reason = classify_error(
        ClientError({"Error": {"Code": said[:40] or "X", "Message": said}}, "Scan")
    ).text
    model.apply(
        [
            failed(model.get("queues"), "queues", "queues", reason, at=NOW),
            failed(None, "table", f"table:{where}", classify_error(OSError(said)).text, at=NOW),
            absent(None, "table", "table:labex-ev04-reference", reason, at=NOW),
            failed(
                absent(None, "logs", f"logs:{where}x", reason, at=NOW - 1),
                "logs",
                f"logs:{where}x",
                reason,
                at=NOW,
            ),
        ]
    )
    model.apply(
        [
            succeeded(
                None,
                "checkpoints",
                "checkpoints",
                checkpoints.evaluate(PROFILE, model, checkpoints.Memory()),
                at=NOW,
            )
        ]
    )
    return model


# -- what may be shown ------------------------------------------------------------------


def shown_strings(panels: list[render.Panel]) -> list[tuple[str, str]]:
    out = []
    for p in panels:
        out += [
            (f"{p.name} freshness", p.freshness),
            (f"{p.name} body", p.body_text),
            (f"{p.name} title", p.title),
            (f"{p.name} note", p.note),
            (f"{p.name} empty", p.empty_text),
            (f"{p.name} health", p.health),
        ]
        out += [(f"{p.name} column", c) for c in p.columns]
        out += [(f"{p.name} row {r.key[:40]!r}", c) for r in p.rows for c in r.cells]
    return out


def assert_clean(where: str, text: str, allowed: str = "") -> None:
    bad = CONTROL.search(text.translate({ord(c): None for c in allowed}))
    assert bad is None, f"{where}: control character {bad.group()!r} in {text[:200]!r}"
    text.encode("utf-8")  # a lone surrogate would break the terminal's encoder


def literal(text: str) -> str | None:
    """What a cell must show of ``text`` when nothing in it needs cleaning, else None."""
    if (
        CONTROL.search(text)
        or re.search(r"[\ud800-\udfff]", text)
        or any(unicodedata.category(c) == "Cf" and c not in "\u200c\u200d" for c in text)
        or re.search(r"(?i)secret|token|signature|receipt|authorization|AKIA|ASIA", text)
    ):
        return None
    shown = " ".join(text.split())
    return shown if 0 < len(shown) <= 150 else None


def check(model: LabState, text: str | None = None, json_dump: bool = True) -> list[render.Panel]:
    """Render every panel and both dump forms; nothing unclean, markup kept as written."""
    panels = render.panels(model, PROFILE, NOW)
    for where, value in shown_strings(panels):
        assert_clean(where, value)
    text_dump = dump.as_text(PROFILE, model, TARGET, "123456789012", NOW)
    for line in text_dump.split("\n"):
        assert_clean("dump text", line)
    as_json = (
        dump.as_json(PROFILE, model, TARGET, "123456789012", NOW) if json_dump else {"panels": []}
    )
    encoded = json.dumps(as_json, indent=2, sort_keys=True)  # what `awsview dump --json` writes
    assert json.loads(encoded)["panels"] == json.loads(json.dumps(as_json["panels"]))
    for panel in as_json["panels"]:
        for where, value in _strings({k: v for k, v in panel.items() if k != "rows"}):
            assert_clean(f"dump json {where}", value)
        for row in panel["rows"]:  # a row's key is its identity, never shown
            for value in row["cells"]:
                assert_clean("dump json cell", value)
    expected = literal(text) if text is not None else None
    if expected is not None:
        names = [r.cells[0] for p in panels if p.name == "executions" for r in p.rows]
        assert expected in names, f"{expected!r} not shown as written: {names!r}"
        assert expected in text_dump
    return panels


def _strings(value: Any, where: str = "") -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [(where, value)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [s for i, v in enumerate(value) for s in _strings(v, f"{where}[{i}]")]
    return []


# -- hand-picked ------------------------------------------------------------------------


def test_error_reasons_are_cleaned():
    reason = classify_error(
        ClientError({"Error": {"Code": "X", "Message": "\x1b]0;owned\x07\x1b[2J\x9b6n"}}, "Scan")
    ).text
    model = LabState()
    model.apply(
        [
            failed(None, "queues", "queues", reason, at=NOW),
            absent(None, "table", f"table:{BUSINESS}", reason, at=NOW),
        ]
    )
    for panel in render.panels(model, PROFILE, NOW):
        assert_clean(f"{panel.name} freshness", panel.freshness)
        assert_clean(f"{panel.name} body", panel.body_text)


def test_two_machines_with_an_execution_of_the_same_name():
    model = model_for("same")
    machine = model.data("state_machines")[0]
    execution = model.data(f"executions:{machine.name}")[0]
    other = dataclasses.replace(machine, name="other", arn=f"{MACHINE_ARN}-other")
    twin = dataclasses.replace(execution, arn=f"{execution.arn}-other", machine_arn=other.arn)
    history = History(
        twin.arn, twin.name, parse_history(events_for("same")[:4]), True
    )  # one attempt fewer
    model.apply(
        [
            succeeded(None, "state_machines", "state_machines", (machine, other), at=NOW),
            succeeded(None, "executions", "executions:other", (twin,), at=NOW),
            succeeded(None, "history", f"history:{twin.arn}", history, at=NOW),
        ]
    )
    check(model)


@pytest.mark.parametrize(
    "raw",
    [
        {"id": float("inf")},
        {"id": 1, "previousEventId": float("inf")},
        {"id": 1, "timestamp": 1e20},
        {"id": 1, "timestamp": float("nan")},
    ],
    ids=["id inf", "previous inf", "timestamp 1e20", "timestamp nan"],
)
def test_history_numbers_out_of_range(raw: dict[str, Any]):
    parse_history([{"type": "TaskStateEntered", **raw}])


def test_history_mixing_naive_and_aware_timestamps():
    events = events_for("A")
    events[4] = {**events[4], "timestamp": "2026-11-01T12:00:03"}  # no offset: a naive datetime
    check(model_for("A", events=events))


@pytest.mark.parametrize("name", sorted(STRINGS))
def test_hand_picked_string_everywhere(name: str):
    check(model_for(STRINGS[name]), STRINGS[name])


@pytest.mark.parametrize("name", sorted(LOG_BYTES))
def test_invalid_utf8_log_message(name: str):
    message = LOG_BYTES[name]
    lines = split_event(message)
    assert all(isinstance(line, str) for line in lines)
    for line in (
        *parse_event(message),
        *(classify(line.encode("utf-8", "surrogateescape")) for line in lines),
    ):
        assert_clean("log line", line.text, allowed="\t")
    check(model_for("bytes", log=message))


@pytest.mark.parametrize("index", range(len(DEFINITIONS)))
def test_malformed_definition(index: int):
    definition = DEFINITIONS[index]
    try:
        parse_definition(definition)
    except DefinitionError:
        pass  # said plainly on the panel
    panels = check(model_for("def", definition=definition))
    machines = next(p for p in panels if p.name == "state_machines")
    assert machines.rows, "a machine whose definition cannot be read is still listed"


def test_markup_is_shown_as_written():
    model = model_for("[link=http://x]click[/link] [/bold] [red]")
    panels = check(model)
    cells = " ".join(c for p in panels for r in p.rows for c in r.cells)
    for markup in ("[link=http://x]click[/link]", "[/bold]", "[red]"):
        assert markup in cells
    assert "[/bold]" in dump.as_text(PROFILE, model, TARGET, "1", NOW)


def test_400_kb_item_and_binary_and_set_attributes():
    big = "é" * (200 * 1024)  # 400 KB of UTF-8
    item = {
        "id": {"S": "big"},
        "payload": {"S": big},
        "blob": {"B": base64.b64encode(bytes(range(256)) * 1500).decode()},
        "raw": {"B": bytes(range(256))},
        "ss": {"SS": ["[/]", "\x1b[31m", "b"]},
        "ns": {"NS": ["1", "2.5", "-0"]},
        "bs": {"BS": [b"\x00\xff", b"[/bold]"]},
        "odd": {"XX": "unknown tag"},
        "bad n": {"N": "1e400"},
        "bad b": {"B": "not base64!"},
        "list": {"L": [{"SS": ["x"]}, {"M": {}}]},
    }
    plain = item_to_plain(item)
    assert plain["raw"] == bytes(range(256)) and plain["ss"] == frozenset({"[/]", "\x1b[31m", "b"})
    assert len(format_value(plain["payload"])) <= 200
    assert diff_items(plain, {**plain, "ss": frozenset()}).changed[0][0] == "ss"
    json.dumps(plain_to_json(plain))
    started = time.perf_counter()
    check(model_for("big", item=item))
    assert time.perf_counter() - started < 5


def test_10000_event_history():
    events = [
        {"id": 1, "type": "ExecutionStarted", "timestamp": T0, "executionStartedEventDetails": {}}
    ]
    for n in range(2, 10_001):
        kind = ("TaskStateEntered", "TaskScheduled", "TaskFailed", "TaskStateExited")[n % 4]
        details = {
            "name": "[/bold]\x1b[31mRetry",
            "error": "[red]E\x9b",
            "cause": "c" * 300,
            "output": json.dumps({"Payload": {"n": n}}),
        }
        events.append(
            {
                "id": n,
                "previousEventId": n - 1,
                "type": kind,
                "timestamp": T0 + timedelta(milliseconds=n),
                f"{kind[0].lower()}{kind[1:]}EventDetails": details,
            }
        )
    started = time.perf_counter()
    history = parse_history(events)
    assert len(history.events) == 10_000
    panels = check(model_for("[/bold]\x1b[31mRetry", events=events), json_dump=False)
    rows = [r for p in panels if p.name == "history" for r in p.rows]
    assert len(rows) == 10_000
    assert time.perf_counter() - started < 20


def test_huge_log_feed():
    follow = _Follow()
    for n in range(5_000):
        follow.add(
            {
                "eventId": str(n),
                "timestamp": n,
                "logStreamName": "s",
                "message": f'RESULT {{"id": "[/bold]{n}"}}\n\x1b[31mline {n}\x07\r\n[ERROR] x',
            }
        )
    model = model_for("feed")
    model.apply(
        [
            succeeded(
                None,
                "logs",
                "logs:/aws/lambda/huge",
                LogFeed("/aws/lambda/huge", tuple(follow.lines), follow.events),
                at=NOW,
            )
        ]
    )
    panels = check(model)
    assert sum(len(p.rows) for p in panels if p.title == "Logs · /aws/lambda/huge") == 15_000


# -- generated --------------------------------------------------------------------------

FRAGMENTS = sorted(
    {s for s in STRINGS.values() if len(s) <= 40}
    | {
        "[",
        "]",
        "/",
        "=",
        "\x1b",
        "\x9b",
        "\x9d",
        "\x07",
        "\x1b\\",
        "\x9c",
        ";",
        "\udcff",
        "\ud800",  # noqa: B033 -- not the surrogate above; ruff reads both as U+FFFD
        "\n",
        "\r",
        "\t",
        "RESULT ",
        "{",
        "}",
        '"',
        ":",
        "link",
        "bold",
        "\u2028",
        "\x00",
    }
)
MARKUP = [
    "[/bold]",
    "[red]",
    "[link=http://x]",
    "[/link]",
    "[/]",
    "[@click=app.quit]",
    "[on red]",
    ":smile:",
    "\\[",
    "[",
    "]",
    "x",
    " ",
    "ü",
    "全",
    "[b]",
    "[#ff0000]",
    "{a}",
    "$x",
]

hostile_text = st.one_of(
    st.text(max_size=60),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0xA0), max_size=60),
    st.lists(
        st.one_of(
            st.sampled_from(FRAGMENTS),
            st.characters(categories=["Cc", "Cs", "Cf", "Zl", "Zp"]),
            st.text(max_size=5),
        ),
        max_size=10,
    ).map("".join),
)
markup_text = st.lists(st.sampled_from(MARKUP), min_size=1, max_size=12).map("".join)


@settings(SETTINGS, max_examples=examples(250))
@given(hostile_text)
def test_generated_text_everywhere(text: str):
    check(model_for(text), text)


@settings(SETTINGS, max_examples=examples(100))
@given(markup_text)
def test_generated_markup_is_kept(text: str):
    check(model_for(text), text)


@settings(SETTINGS, max_examples=examples(150))
@given(
    st.one_of(
        hostile_text.map(lambda t: "RESULT " + t),
        hostile_text,
        st.binary(max_size=80),
        st.binary(max_size=40).map(lambda b: b'RESULT {"a": "' + b + b'"}'),
    )
)
def test_generated_log_message(message: str | bytes):
    for line in parse_event(message):
        assert_clean("log line", line.text, allowed="\t")  # a cell turns tabs into spaces
        json.dumps(line.data)  # what the JSON dump carries
    check(model_for("log", log=message))


numbers = st.one_of(
    st.integers().map(str),
    st.decimals(allow_nan=False, allow_infinity=False).map(str),
    st.sampled_from(["NaN", "Infinity", "-0", "1e400", "1E-130", " 12 ", "", "0x10", "9" * 50]),
    hostile_text,
)
scalar = st.one_of(
    st.builds(lambda s: {"S": s}, hostile_text),
    st.builds(lambda n: {"N": n}, numbers),
    st.builds(lambda b: {"B": b}, st.one_of(st.binary(max_size=64), st.text(max_size=12))),
    st.builds(lambda b: {"BOOL": b}, st.one_of(st.booleans(), hostile_text)),
    st.just({"NULL": True}),
    st.builds(lambda v: {"SS": v}, st.one_of(st.lists(hostile_text, max_size=4), hostile_text)),
    st.builds(lambda v: {"NS": v}, st.lists(numbers, max_size=4)),
    st.builds(lambda v: {"BS": v}, st.lists(st.binary(max_size=16), max_size=4)),
    st.builds(lambda t, v: {t: v}, hostile_text, hostile_text),  # a type tag nobody knows
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=3),  # not one tag
    st.one_of(st.none(), st.integers(), hostile_text),  # not even a mapping
)
wire_value = st.recursive(
    scalar,
    lambda inner: st.one_of(
        st.builds(lambda m: {"M": m}, st.dictionaries(hostile_text, inner, max_size=4)),
        st.builds(lambda v: {"L": v}, st.lists(inner, max_size=4)),
    ),
    max_leaves=20,
)
wire_item = st.dictionaries(hostile_text, wire_value, max_size=6).map(
    lambda d: {"id": {"S": "k"}, **d}
)


@settings(SETTINGS, max_examples=examples(120))
@given(wire_item, wire_item)
def test_generated_items(item: dict[str, Any], other: dict[str, Any]):
    plain, plain_other = item_to_plain(item), item_to_plain(other)
    diff_items(plain, plain_other)
    json.dumps(plain_to_json(plain))
    for value in plain.values():
        assert_clean("format_value", format_value(value), allowed="\t")
    check(model_for("item", item=item))


EVENT_TYPES = [
    "ExecutionStarted",
    "TaskStateEntered",
    "TaskScheduled",
    "TaskStarted",
    "TaskFailed",
    "TaskSucceeded",
    "TaskTimedOut",
    "TaskStateExited",
    "LambdaFunctionScheduled",
    "LambdaFunctionFailed",
    "ChoiceStateEntered",
    "FailStateEntered",
    "ExecutionFailed",
    "ExecutionSucceeded",
    "ExecutionAborted",
    "MapIterationStarted",
    "ParallelStateEntered",
]
detail_value = st.one_of(
    hostile_text,
    st.integers(),
    st.none(),
    st.builds(lambda d: json.dumps({"Payload": d}), hostile_text),
    st.builds(json.dumps, st.dictionaries(hostile_text, hostile_text, max_size=3)),
)
event = st.builds(
    lambda base, name, details: {**base, name: details},
    st.fixed_dictionaries(
        {
            "id": st.one_of(st.integers(-3, 40), st.text(max_size=3), st.none()),
            "type": st.one_of(st.sampled_from(EVENT_TYPES), hostile_text),
            "timestamp": st.one_of(
                st.datetimes(timezones=st.just(UTC)),
                st.integers(0, 2**31),
                hostile_text,
                st.none(),
            ),
        },
        optional={"previousEventId": st.one_of(st.integers(-3, 40), st.none(), hostile_text)},
    ),
    st.sampled_from(
        [
            "stateEnteredEventDetails",
            "taskFailedEventDetails",
            "taskSucceededEventDetails",
            "taskScheduledEventDetails",
            "executionFailedEventDetails",
            "notDetails",
        ]
    ),
    st.dictionaries(
        st.sampled_from(
            ["name", "error", "cause", "output", "input", "parameters", "resource", "resourceType"]
        ),
        detail_value,
        max_size=6,
    ),
)


@settings(SETTINGS, max_examples=examples(120))
@given(st.lists(event, max_size=25), hostile_text)
def test_generated_histories(events: list[dict[str, Any]], name: str):
    history = parse_history(events[: len(events) // 2])
    parse_history(events[len(events) // 2 :], previous=history)
    check(model_for(name, events=events), name)


json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), hostile_text),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(hostile_text, inner, max_size=4)
    ),
    max_leaves=25,
)
state_body = st.fixed_dictionaries(
    {
        "Type": st.one_of(
            st.sampled_from(
                ["Task", "Pass", "Choice", "Wait", "Parallel", "Map", "Fail", "Succeed"]
            ),
            json_value,
        )
    },
    optional={
        "Retry": json_value,
        "Catch": json_value,
        "Next": json_value,
        "End": json_value,
        "Resource": json_value,
        "Parameters": json_value,
        "Branches": json_value,
        "Choices": json_value,
        "ItemProcessor": json_value,
    },
)
definition = st.one_of(
    st.builds(
        lambda start, states: json.dumps({"StartAt": start, "States": states}),
        hostile_text,
        st.dictionaries(hostile_text, state_body, max_size=4),
    ),
    st.builds(json.dumps, json_value),
    hostile_text,
)


@settings(SETTINGS, max_examples=examples(150))
@given(definition)
def test_generated_definitions(text: str):
    try:
        parse_definition(text)
    except DefinitionError:
        pass
    check(model_for("def", definition=text))


# -- through the real emulator and `awsview dump` -----------------------------------------

NASTY_WORKER = r"""
import json
def handler(event, context):
    print("\x1b[31mred\x1b[0m [/bold] [link=http://x]click[/link] \x1b]0;owned\x07 \x9b31m")
    print("RESULT not json [red]")
    print("RESULT {\"id\": \"[/bold]\", \"processed\": \"\\u001b[2J\"}")
    print("line with NUL \x00 and DEL \x7f and BOM \ufeff")
    print("START RequestId: [/] Version: \x1b[6n")
    print("[ERROR] \x1b]52;c;Y2xpcA==\x07 [link=http://evil]")
    raise ValueError("\x1b[2J[bold]boom[/bold]")
"""
# What decoding invalid UTF-8 with errors="surrogateescape" gives a worker to print.
SURROGATE_WORKER = (
    "def handler(event, context):\n"
    "    print(b'invalid \\xff\\xfe utf-8'.decode('utf-8', 'surrogateescape'))\n"
)


BINARY_ITEMS = [
    {"id": {"S": "bin"}, "raw": {"B": bytes(range(256))}},
    {"id": {"S": "binset"}, "bs": {"BS": [b"\x00", b"\xff", b"[/bold]"]}},
]


def _no_retries(emulator, service: str = "dynamodb"):
    import boto3
    from botocore.config import Config

    return boto3.client(
        service,
        endpoint_url=emulator.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(retries={"max_attempts": 1}),
    )


def test_emulator_accepts_binary_attributes(emulator):
    from tests.support.helpers import create_table

    create_table(emulator.client("dynamodb"), "labex-bin")
    for item in BINARY_ITEMS:
        _no_retries(emulator).put_item(TableName="labex-bin", Item=item)


def test_emulator_invokes_a_worker_that_prints_a_lone_surrogate(emulator):
    from tests.support.helpers import create_function

    create_function(emulator.client("lambda"), "labex-surrogates", SURROGATE_WORKER)
    _no_retries(emulator, "lambda").invoke(FunctionName="labex-surrogates", Payload=b"{}")


@pytest.mark.slow
def test_nasty_items_and_log_lines_through_the_emulator_and_dump(starts_processes, emulator):
    from tests.support.helpers import create_function, create_table, zip_code

    ddb, lam = emulator.client("dynamodb"), emulator.client("lambda")
    create_table(ddb, "labex-q05-orders")
    items = [
        {
            "id": {"S": "[/bold]"},
            "note": {"S": "\x1b[31m[red]red\x1b[0m"},
            "link": {"S": "[link=http://x]y[/link]"},
        },
        {
            "id": {"S": "sets"},
            "ss": {"SS": ["[/]", "\x9b31m"]},
            "ns": {"NS": ["1", "2.5"]},
            "l": {"L": [{"NULL": True}]},
        },
        {"id": {"S": "big"}, "payload": {"S": "x" * (380 * 1024)}},
        {"id": {"S": "osc\x1b]8;;http://evil\x1b\\"}, "v": {"S": "\x07\x08\x0b\x0c\x7f\x85\u2028"}},
    ]
    for item in items:
        ddb.put_item(TableName="labex-q05-orders", Item=item)
    for item in BINARY_ITEMS:
        try:
            _no_retries(emulator).put_item(TableName="labex-q05-orders", Item=item)
        except ClientError:
            pass
    create_function(lam, "labex-q05-worker", NASTY_WORKER)
    response = lam.invoke(FunctionName="labex-q05-worker", Payload=b"{}")
    assert response.get("FunctionError") == "Unhandled"
    lam.update_function_code(
        FunctionName="labex-q05-worker", ZipFile=zip_code(SURROGATE_WORKER, "app.py")
    )
    try:
        _no_retries(emulator, "lambda").invoke(FunctionName="labex-q05-worker", Payload=b"{}")
    except ClientError:
        pass

    def run(*extra: str) -> str:
        done = starts_processes.awsview(
            "dump",
            "--lab",
            "q05",
            "--endpoint-url",
            emulator.endpoint_url,
            *extra,
            env=emulator.env,
            timeout=60,
            encoding="utf-8",
            errors="strict",  # the output is valid UTF-8
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    text = run()
    for line in text.splitlines():
        assert_clean("awsview dump", line)
    for markup in (
        "[/bold]",
        "[red]red",
        "[link=http://x]y[/link]",
        "RESULT not json [red]",
        "[link=http://evil]",
    ):
        assert markup in text, markup
    assert (
        "raw=b64:AAECAwQFBgcICQoLDA0ODxAR" in text
        and "b64:Wy9ib2xkXQ==" in text
        and "xxxxxxxx" in text
    )
    assert "invalid \ufffd\ufffd utf-8" in text  # the worker's undecodable bytes, replaced
    data = json.loads(run("--json"))
    for panel in data["panels"]:
        for where, value in _strings(panel):
            assert_clean(f"dump --json {where}", value)
    logs = next(p for p in data["panels"] if p["name"] == "logs")
    kinds = [row["cells"][1] for row in logs["rows"]]
    assert "RESULT" in kinds and "ERROR" in kinds


# -- the app ------------------------------------------------------------------------------


def merged(models: list[LabState]) -> LabState:
    """One model holding several cases: lists are joined, other snapshots kept side by side."""
    joined: dict[str, Any] = {}
    for model in models:
        for key, snapshot in model.snapshots.items():
            if (
                key in joined
                and isinstance(snapshot.data, tuple)
                and isinstance(joined[key].data, tuple)
            ):
                joined[key] = dataclasses.replace(
                    joined[key], data=joined[key].data + snapshot.data
                )
            else:
                joined.setdefault(key, snapshot)
    out = LabState()
    out.apply(list(joined.values()))
    return out


async def test_corpus_through_the_app():
    pytest.importorskip("awsview.ui.viewer.app", reason="the Textual UI is not importable yet")
    from rich.text import Text

    from awsview.core.feed import MORE_KEY
    from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
    from awsview.ui.viewer.panel import PanelView

    size = 12
    cases = [
        model_for(STRINGS[name], table_name=f"{BUSINESS}-{i % size}", slot=f"slot-{i % size}")
        for i, name in enumerate(sorted(STRINGS))
    ]
    cases += [model_for("bytes", log=LOG_BYTES[name]) for name in sorted(LOG_BYTES)]
    cases += [model_for("def", definition=d) for d in DEFINITIONS]
    batches = [merged(cases[i : i + size]) for i in range(0, len(cases), size)]
    model = LabState()
    app = AWSViewApp(
        model=model, profile=PROFILE, options=ViewerOptions(clock=lambda: NOW, tick_seconds=3600)
    )
    async with app.run_test(size=(160, 50)) as pilot:
        for n, source in enumerate(batches):
            model.drop([key for key in model.snapshots if key not in source.snapshots])
            model.apply(list(source.snapshots.values()))
            await pilot.pause()
            await pilot.pause()  # new panels compose, then show what they were given
            views = [v for v in app.query(PanelView) if v.query("PanelTable")]
            assert len(views) >= 10
            for view in views:
                for label in (view.border_title, view.border_subtitle):
                    assert_clean("app panel title", str(getattr(label, "plain", label) or ""))
                rendered = (
                    {c for r in view.shown.panel.rows for c in r.cells} if view.shown else set()
                )
                for row in view.table.ordered_rows:
                    for value in view.table.get_row(row.key):
                        plain = value.plain if isinstance(value, Text) else str(value)
                        assert_clean("app cell", plain)
                        if row.key.value != MORE_KEY and plain:  # shown as written, maybe cut short
                            assert any(
                                c.startswith(plain.rstrip("…").rstrip()) for c in rendered
                            ), f"{plain!r} is not a cell of {view.shown.panel.title!r}"
            if n % 3 == 0:
                svg = app.export_screenshot()
                assert "\x1b" not in svg and "\x9b" not in svg
    assert app.return_code in (None, 0)
