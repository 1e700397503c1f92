"""Log lines: worker tags, runtime lines, errors, redaction, control characters, odd input."""

from __future__ import annotations

import json

import pytest

from awsview.model.loglines import (
    MAX_LINE_BYTES,
    REDACTED,
    LogLine,
    classify,
    parse_event,
    redact,
    redact_data,
    split_event,
)

RECEIPT = (
    "AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a+Kk/NUsQ6ZBK0XMbWmvsRTz4CFbU2yZGqkZr0Zr6PXlHzTzW/5EULBw=="
)
ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
REQUEST = "6f3a1c2e-1111-4a2b-9c3d-0123456789ab"


def sqs_event_line():
    """The EVENT line q05's worker prints for one SQS record (json.dumps, sort_keys=True)."""
    event = {
        "Records": [
            {
                "messageId": "059f36b4-87a3-44ab-83d2-661975830a7d",
                "receiptHandle": RECEIPT,
                "body": json.dumps({"id": "dedup-order", "quantity": 4}),
                "attributes": {
                    "ApproximateReceiveCount": "1",
                    "SentTimestamp": "1545082649183",
                    "SenderId": "AIDAIENQZJOLO23YVJ4VO",
                    "ApproximateFirstReceiveTimestamp": "1545082649185",
                },
                "messageAttributes": {},
                "md5OfBody": "e4e68fb7bd0e697a0ae8f1bb342846b3",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:labex-q05-jobs",
                "awsRegion": "us-east-1",
            }
        ]
    }
    return "EVENT " + json.dumps(event, sort_keys=True)


def test_sqs_event_line_has_its_receipt_handle_redacted():
    line = classify(sqs_event_line())
    assert line.kind == "EVENT"
    assert RECEIPT not in line.text and RECEIPT[:20] not in line.text
    assert f'"receiptHandle": "{REDACTED}"' in line.text
    record = line.data["Records"][0]
    assert record["receiptHandle"] == REDACTED
    assert json.loads(record["body"]) == {"id": "dedup-order", "quantity": 4}
    assert record["attributes"]["SenderId"] == "AIDAIENQZJOLO23YVJ4VO"
    assert RECEIPT not in json.dumps(line.data)


def test_result_line_parses():
    line = classify(
        'RESULT {"duplicate": true, "id": "dedup-order", "processed": false, "quantity": 4}'
    )
    assert line == LogLine(
        "RESULT",
        line.text,
        {"duplicate": True, "id": "dedup-order", "processed": False, "quantity": 4},
    )
    assert line.text.startswith("RESULT {")


@pytest.mark.parametrize(
    "text, kind, data",
    [
        ("RESULT not json", "RESULT", None),
        ("RESULT", "RESULT", None),
        ('JOB "just a string"', "JOB", "just a string"),
        ("WORKFLOW 42", "WORKFLOW", 42),
        ("WORKFLOW NaN", "WORKFLOW", None),
        ('EVENT {"a": [1, 2.5, null]}', "EVENT", {"a": [1, 2.5, None]}),
        ("RESULTS {}", "OTHER", None),
        ("result {}", "OTHER", None),
        ("some print output", "OTHER", None),
        ("", "OTHER", None),
    ],
)
def test_tagged_lines(text, kind, data):
    line = classify(text)
    assert (line.kind, line.data) == (kind, data)


def test_runtime_lines():
    start = classify(f"START RequestId: {REQUEST} Version: $LATEST")
    assert (start.kind, start.request_id) == ("START", REQUEST)
    assert start.data == {"RequestId": REQUEST, "Version": "$LATEST"}
    end = classify(f"END RequestId: {REQUEST}")
    assert (end.kind, end.request_id, end.data) == ("END", REQUEST, {"RequestId": REQUEST})
    report = classify(
        f"REPORT RequestId: {REQUEST}\tDuration: 12.34 ms\tBilled Duration: 13 ms\t"
        "Memory Size: 128 MB\tMax Memory Used: 41 MB\tInit Duration: 105.20 ms\t"
    )
    assert report.kind == "REPORT" and report.request_id == REQUEST
    assert report.data == {
        "RequestId": REQUEST,
        "Duration": 12.34,
        "Billed Duration": 13,
        "Memory Size": 128,
        "Max Memory Used": 41,
        "Init Duration": 105.2,
    }
    timeout = classify(f"REPORT RequestId: {REQUEST}\tDuration: 3000.00 ms\tStatus: timeout")
    assert timeout.data["Status"] == "timeout"
    assert classify("START of something").kind == "OTHER"


def test_lambda_error_event_is_one_multiline_event():
    message = (
        "[ERROR] TransientOrderError: Temporary failure before the write\r\n"
        "Traceback (most recent call last):\n"
        '  File "/var/task/app.py", line 21, in handler\r'
        "    raise TransientOrderError('Temporary failure before the write')\n"
    )
    assert split_event(message) == (
        "[ERROR] TransientOrderError: Temporary failure before the write",
        "Traceback (most recent call last):",
        '  File "/var/task/app.py", line 21, in handler',
        "    raise TransientOrderError('Temporary failure before the write')",
    )
    lines = parse_event(message)
    assert [line.kind for line in lines] == ["ERROR"] * 4
    assert classify("Traceback (most recent call last):").kind == "OTHER"
    timed_out = f"{REQUEST} Task timed out after 3.00 seconds"
    assert classify(timed_out).kind == "ERROR"


def test_split_event_edges():
    assert split_event("") == ()
    assert split_event("\n") == ("",)
    assert split_event("a\n\nb") == ("a", "", "b")
    assert split_event(b"RESULT {}\n") == ("RESULT {}",)
    assert split_event("a\u2028b\x0bc") == ("a\u2028b\x0bc",)  # only \n, \r\n and \r split


def test_parse_event_keeps_line_kinds():
    lines = parse_event(f"START RequestId: {REQUEST} Version: $LATEST\nRESULT {{}}\n")
    assert [(line.kind, line.data) for line in lines] == [
        ("START", {"RequestId": REQUEST, "Version": "$LATEST"}),
        ("RESULT", {}),
    ]


@pytest.mark.parametrize(
    "text, secret",
    [
        (f"key {ACCESS_KEY} used", ACCESS_KEY),
        ("ASIAY34FZKBOKMUTVV7A in a role session", "ASIAY34FZKBOKMUTVV7A"),
        (f"aws_secret_access_key = {SECRET}", SECRET),
        (f'{{"SecretAccessKey": "{SECRET}"}}', SECRET),
        (
            "AWS_SESSION_TOKEN=IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJH+abc= next",
            "IQoJb3JpZ2lu",
        ),
        ('{"SessionToken": "IQoJb3JpZ2luX2VjEJr//+abc=="}', "IQoJb3JpZ2lu"),
        (f"receiptHandle={RECEIPT}", RECEIPT),
        (f"<ReceiptHandle>{RECEIPT}</ReceiptHandle>", RECEIPT),
        (f"{{'receiptHandle': '{RECEIPT}'}}", RECEIPT),
        (
            "Authorization: AWS4-HMAC-SHA256 "
            "Credential=AKIAIOSFODNN7EXAMPLE/20250501/us-east-1/sqs/"
            "aws4_request, SignedHeaders=host;x-amz-date, Signature="
            "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024",
            "fe5f80f77d5f",
        ),
        (
            "https://b.s3.amazonaws.com/k?X-Amz-Signature=fe5f80f77d5fa3beca038a248ff027d0"
            "&X-Amz-Security-Token=FQoGZXIvYXdzE",
            "fe5f80f77d5f",
        ),
    ],
)
def test_redact_free_text(text, secret):
    redacted = redact(text)
    assert secret not in redacted and REDACTED in redacted


def test_redact_keeps_ordinary_text():
    for text in (
        "RESULT processed",
        "Billed Duration: 13 ms",
        "AKIA is a prefix",
        "CodeSha256: 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
        "[/bold] [link=http://x]",
    ):
        assert redact(text) == text
    assert redact("Authorization: AWS4-HMAC-SHA256 Credential=x, Signature=ab") == (
        f"Authorization: AWS4-HMAC-SHA256 {REDACTED}"
    )


def test_redact_data_is_recursive_and_by_key():
    data = {
        "a": [{"ReceiptHandle": {"nested": "x"}}, {"receipt_handle": 5}],
        "note": f"key {ACCESS_KEY}",
        "sessionToken": "t",
        "n": 1,
        "ok": True,
        "none": None,
        "esc\x1b[31m": "red\x1b[0m text\nnext",
    }
    assert redact_data(data) == {
        "a": [{"ReceiptHandle": REDACTED}, {"receipt_handle": REDACTED}],
        "note": f"key {REDACTED}",
        "sessionToken": REDACTED,
        "n": 1,
        "ok": True,
        "none": None,
        "esc": "red text\nnext",
    }


def test_escape_sequences_in_data_strings_are_removed():
    line = classify('RESULT {"id": "\\u001b[31mred\\u001b]8;;http://x\\u0007"}')
    assert line.data == {"id": "red"}
    assert line.text == 'RESULT {"id": "\\u001b[31mred\\u001b]8;;http://x\\u0007"}'  # inert text


def test_classified_text_is_cleaned_and_keeps_markup():
    line = classify("RESULT \x1b[31m[/bold][link=http://x]\x1b]8;;http://x\x07")
    assert line.text == "RESULT [/bold][link=http://x]"
    assert line.data is None


def test_invalid_utf8_bytes():
    line = classify(b'RESULT {"id": "caf\xe9"}')
    assert line.kind == "RESULT" and line.text == 'RESULT {"id": "caf\ufffd"}'
    assert line.data == {"id": "caf\ufffd"}
    assert split_event(b"\xff\xfe\nok") == ("\ufffd\ufffd", "ok")


def test_huge_lines_are_capped():
    line = classify("x" * (MAX_LINE_BYTES + 10))
    assert line.text == "x" * MAX_LINE_BYTES + "… (10 more bytes)"
    wide = classify("é" * MAX_LINE_BYTES)  # two bytes each: a character is never cut in half
    kept = wide.text.split("…")[0]
    assert kept == "é" * (MAX_LINE_BYTES // 2)
    assert wide.text.endswith(f"… ({MAX_LINE_BYTES} more bytes)")
    big = classify("RESULT " + json.dumps({"blob": "y" * 100_000}))
    assert len(big.data["blob"]) == 100_000 and len(big.text.encode()) < MAX_LINE_BYTES + 40
    assert classify("x" * MAX_LINE_BYTES).text == "x" * MAX_LINE_BYTES


def test_deeply_nested_json_does_not_raise():
    assert classify("RESULT " + "[" * 100_000).data is None
    assert classify("RESULT 1" + "0" * 5000).data is None  # beyond int parsing limits


def test_log_row_keys_survive_the_feed_dropping_its_oldest_lines():
    """Once the 100,000-line buffer is full every poll drops lines at the front; a line's row key
    (UI diffing, `dump --json`) must not change because of that."""
    from awsview import labspec
    from awsview.core import render
    from awsview.model.loglines import classify
    from awsview.model.resources import LogEntry, LogFeed
    from awsview.model.snapshot import succeeded
    from awsview.model.state import LabState

    def entries(events):
        return tuple(
            LogEntry(1000 * n, "s", f"e{n}", classify(f"line {n}.{k}"))
            for n in events
            for k in range(3)
        )

    def keys(lines):
        model = LabState()
        model.apply([succeeded(None, "logs", "logs:/g", LogFeed("/g", lines, len(lines)))])
        (panel,) = render.logs(model, labspec.load("q05"), 0.0)
        return {row.cells[2]: row.key for row in panel.rows}

    full = entries(range(10))
    dropped = full[4:] + entries(range(10, 12))  # cut in the middle of event e1, two events more
    before, after = keys(full), keys(dropped)
    common = set(before) & set(after)
    assert len(common) == len(full) - 4
    assert all(before[text] == after[text] for text in common)
    assert len(set(after.values())) == len(after)  # still unique
