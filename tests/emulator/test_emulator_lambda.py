"""Lambda without Docker: real code, real logs, AWS's error shapes, warm workers."""

from __future__ import annotations

import json

from tests.support.helpers import create_function, invoke, log_messages, wait_for

ECHO = """
import json, os
def handler(event, context):
    print("EVENT " + json.dumps(event, sort_keys=True))
    print("two\\nlines")
    return {"event": event, "request": context.aws_request_id,
            "endpoint": os.environ.get("AWS_ENDPOINT_URL"), "color": os.environ.get("COLOR"),
            "remaining": context.get_remaining_time_in_millis() > 0}
"""

RAISES = """
class TransientOrderError(Exception):
    pass
def handler(event, context):
    raise TransientOrderError("Dependency temporarily unavailable")
"""


def test_uploaded_zip_runs_with_its_environment_and_logs_like_aws(emulator):
    lam, logs = emulator.client("lambda"), emulator.client("logs")
    create_function(lam, "echo", ECHO, env={"COLOR": "blue"})
    error, payload = invoke(lam, "echo", {"id": "a"})
    assert error is None
    assert payload["event"] == {"id": "a"}
    assert payload["endpoint"] == emulator.endpoint_url
    assert payload["color"] == "blue" and payload["remaining"] is True
    messages = log_messages(logs, "/aws/lambda/echo")
    request = payload["request"]
    assert messages[0] == f"START RequestId: {request} Version: $LATEST"
    assert messages[1:4] == ['EVENT {"id": "a"}', "two", "lines"]
    assert messages[4] == f"END RequestId: {request}"
    assert messages[5].startswith(f"REPORT RequestId: {request}\tDuration: ")


def test_exception_returns_lambda_error_payload_marked_unhandled(emulator):
    lam, logs = emulator.client("lambda"), emulator.client("logs")
    create_function(lam, "raises", RAISES)
    error, payload = invoke(lam, "raises", {})
    assert error == "Unhandled"
    assert payload["errorType"] == "TransientOrderError"
    assert payload["errorMessage"] == "Dependency temporarily unavailable"
    assert payload["stackTrace"] and "_bootstrap" not in "".join(payload["stackTrace"])
    failure = [m for m in log_messages(logs, "/aws/lambda/raises") if m.startswith("[ERROR]")]
    assert failure[0].startswith(
        "[ERROR] TransientOrderError: Dependency temporarily unavailable\n"
    )


def test_syntax_error_and_missing_handler_answer_as_aws_and_the_emulator_keeps_serving(emulator):
    lam = emulator.client("lambda")
    create_function(lam, "broken", "def handler(event, context)\n    return 1\n")
    error, payload = invoke(lam, "broken", {})
    assert error == "Unhandled"
    assert payload["errorType"] == "Runtime.UserCodeSyntaxError"
    assert "Syntax error in module 'app'" in payload["errorMessage"]

    create_function(lam, "nohandler", "def other(event, context):\n    return 1\n")
    error, payload = invoke(lam, "nohandler", {})
    assert payload == {
        "errorMessage": "Handler 'handler' missing on module 'app'",
        "errorType": "Runtime.HandlerNotFound",
        "stackTrace": [],
        "requestId": payload["requestId"],
    }

    create_function(lam, "nomodule", "x = 1\n", handler="missing.handler")
    error, payload = invoke(lam, "nomodule", {})
    assert payload["errorType"] == "Runtime.ImportModuleError"
    assert "Unable to import module 'missing'" in payload["errorMessage"]
    create_function(lam, "serving", ECHO)  # of its own: not another test's "echo"
    assert invoke(lam, "serving", {"still": "serving"})[0] is None


def test_handler_that_hangs_past_its_timeout_is_stopped(emulator):
    lam, logs = emulator.client("lambda"), emulator.client("logs")
    create_function(
        lam,
        "hangs",
        "import time\ndef handler(e, c):\n    time.sleep(e['s'])\n    return e['s']\n",
        timeout=1,
    )
    error, payload = invoke(lam, "hangs", {"s": 30})
    assert error == "Unhandled"
    assert payload["errorType"] == "Sandbox.Timedout"
    assert "Task timed out after 1.00 seconds" in payload["errorMessage"]
    assert any("Status: timeout" in m for m in log_messages(logs, "/aws/lambda/hangs"))
    assert invoke(lam, "hangs", {"s": 0}) == (None, 0)  # a fresh worker replaces the killed one


def test_update_function_code_runs_the_new_archive(emulator):
    lam = emulator.client("lambda")
    create_function(lam, "versioned", "def handler(e, c):\n    return 'old'\n")
    assert invoke(lam, "versioned", {}) == (None, "old")
    from tests.support.helpers import zip_code

    sha = lam.update_function_code(
        FunctionName="versioned", ZipFile=zip_code("def handler(e, c):\n    return 'new'\n")
    )["CodeSha256"]
    assert sha and sha == lam.get_function_configuration(FunctionName="versioned")["CodeSha256"]
    assert invoke(lam, "versioned", {}) == (None, "new")


def test_warm_worker_keeps_module_state_between_invocations(emulator):
    lam = emulator.client("lambda")
    create_function(lam, "counter", "N = [0]\ndef handler(e, c):\n    N[0] += 1\n    return N[0]\n")
    counts = [invoke(lam, "counter", {})[1] for _ in range(3)]
    assert counts == [1, 2, 3]


def test_non_json_result_is_a_marshal_error(emulator):
    lam = emulator.client("lambda")
    create_function(lam, "marshal", "def handler(e, c):\n    return {1, 2}\n")
    error, payload = invoke(lam, "marshal", {})
    assert error == "Unhandled" and payload["errorType"] == "Runtime.MarshalError"


def test_async_invoke_runs_in_the_background(emulator):
    lam, logs = emulator.client("lambda"), emulator.client("logs")
    create_function(lam, "later", "def handler(e, c):\n    print('RAN ' + e['x'])\n")
    response = lam.invoke(
        FunctionName="later", InvocationType="Event", Payload=json.dumps({"x": "y"})
    )
    assert response["StatusCode"] == 202
    wait_for(
        lambda: (
            "RAN y" in log_messages(logs, "/aws/lambda/later") if _group(logs, "later") else False
        )
    )


def _group(logs, name):
    groups = logs.describe_log_groups(logGroupNamePrefix=f"/aws/lambda/{name}")["logGroups"]
    return bool(groups)


# Written at import, before the handler runs: what the worker's interpreter had loaded already.
WHERE_FROM = """
import os, sys
SDK_ALREADY = "boto3" in sys.modules
import boto3
def handler(event, context):
    return {"sdk_already": SDK_ALREADY, "boto3": boto3.__file__, "mine": getattr(boto3, "MINE", 0),
            "path": sys.path, "leaked": sorted(k for k in os.environ if k.startswith("MOTO_")),
            "subprocess": __import__("subprocess").run(["true"]).returncode}
"""


def test_a_cold_start_is_forked_with_the_sdk_loaded_and_only_the_function_s_settings(emulator):
    """Workers are forked from a zygote that imported boto3 once (a cold start does not import
    it again), with the function's own environment and path, and can wait for a subprocess."""
    import boto3

    lam = emulator.client("lambda")
    create_function(lam, "where-from", WHERE_FROM, env={"COLOR": "red"})
    runs = iter(range(1000))

    def forked() -> dict | None:
        """A new worker's answer, once one comes from the zygote (the emulator's first cold
        start starts the zygote and does not wait for it)."""
        run = str(next(runs))
        lam.update_function_configuration(
            FunctionName="where-from", Environment={"Variables": {"COLOR": "red", "RUN": run}}
        )
        error, payload = invoke(lam, "where-from", {})
        assert error is None, payload
        return payload if payload["sdk_already"] else None

    payload = wait_for(forked, 60)
    assert payload["boto3"] == boto3.__file__
    assert payload["leaked"] == [] and payload["subprocess"] == 0
    assert not any(p.endswith("awsview/emulator") for p in payload["path"]), payload["path"]


def test_a_function_that_bundles_its_own_sdk_imports_its_own(emulator):
    """As on AWS, a package in the function's archive wins over the runtime's: such a function
    starts in a fresh interpreter rather than from the zygote, which has boto3 loaded."""
    lam = emulator.client("lambda")
    create_function(lam, "own-sdk", WHERE_FROM, more={"boto3/__init__.py": "MINE = 7\n"})
    error, payload = invoke(lam, "own-sdk", {})
    assert error is None, payload
    assert payload["sdk_already"] is False
    assert payload["mine"] == 7 and payload["boto3"].endswith("boto3/__init__.py")


def test_a_zygote_that_never_starts_is_waited_for_once(starts_processes, tmp_path, monkeypatch):
    """A zygote that never says it is ready holds up one cold start, up to ZYGOTE_START_S; the
    next ones start fresh interpreters at once."""
    import time
    from pathlib import Path

    from awsview.emulator import lambda_runtime

    silent = tmp_path / "silent.py"
    silent.write_text("import time\ntime.sleep(600)\n")
    monkeypatch.setattr(lambda_runtime, "ZYGOTE", silent)
    monkeypatch.setattr(lambda_runtime, "ZYGOTE_START_S", 0.5)
    zygote = lambda_runtime._Zygote()
    try:
        started = time.monotonic()
        assert zygote.spawn({}, Path(tmp_path)) is None
        first = time.monotonic() - started
        started = time.monotonic()
        assert zygote.spawn({}, Path(tmp_path)) is None
        assert zygote.broken and time.monotonic() - started < 0.4, first
    finally:
        zygote.close()
