"""A warm Lambda worker process: imports the handler once, then serves invocations.

Runs as a plain script (never imports awsview or moto) with the function's code directory as its
working directory. Requests arrive as JSON lines on stdin; responses leave as JSON lines on the
file descriptor that was stdout at start. The handler's own prints are captured per invocation.
Every botocore request made during an invocation carries an ``x-awsview-invocation`` header so
the emulator can say which function and request made a DynamoDB write.

A worker ends with the emulator that started it, however that ends (killed, its terminal closed):
end-of-file on stdin says so between invocations, and a watcher thread says so during one (a
handler may sleep or loop for minutes). Not PR_SET_PDEATHSIG: it fires when the *thread* that
spawned the worker ends, and workers are spawned from the emulator's per-request threads.
"""

import io
import json
import os
import select
import sys
import threading
import time
import traceback

CURRENT = {"header": None}


def _tag_botocore_requests():
    # Patched lazily, only if the handler uses botocore at all.
    try:
        from botocore.endpoint import Endpoint
    except ImportError:
        return
    original = Endpoint._send

    def _send(self, request):
        if CURRENT["header"]:
            request.headers["x-awsview-invocation"] = CURRENT["header"]
        return original(self, request)

    Endpoint._send = _send


def _error(exc, kind=None):
    tb = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != __file__]
    root = os.getcwd()
    for frame in tb:  # code runs from /var/task on AWS; say so rather than leak the state dir
        if frame.filename.startswith(root):
            frame.filename = "/var/task" + frame.filename[len(root) :]
    return {
        "errorMessage": str(exc),
        "errorType": kind or type(exc).__name__,
        "stackTrace": traceback.format_list(tb),
    }


def _load_handler(spec):
    module_name, _, function_name = spec.rpartition(".")
    if not module_name:
        raise _InitError(
            "Runtime.MalformedHandlerName",
            f"Bad handler '{spec}': not enough values to unpack (expected 2, got 1)",
        )
    try:
        module = __import__(module_name.replace("/", "."), fromlist=["_"])
    except SyntaxError as exc:
        raise _InitError(
            "Runtime.UserCodeSyntaxError",
            f"Syntax error in module '{module_name}': {exc.msg} "
            f"({exc.filename and os.path.basename(exc.filename)}, line {exc.lineno})",
        ) from exc
    except ImportError as exc:
        raise _InitError(
            "Runtime.ImportModuleError", f"Unable to import module '{module_name}': {exc}"
        ) from exc
    except Exception as exc:  # an error raised while the module body runs
        raise _InitError(type(exc).__name__, str(exc)) from exc
    handler = getattr(module, function_name, None)
    if handler is None:
        raise _InitError(
            "Runtime.HandlerNotFound",
            f"Handler '{function_name}' missing on module '{module_name}'",
        )
    return handler


class _InitError(Exception):
    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


class _Context:
    def __init__(self, ctx, deadline):
        self.aws_request_id = ctx["request_id"]
        self.function_name = ctx["function_name"]
        self.function_version = ctx["function_version"]
        self.invoked_function_arn = ctx["invoked_function_arn"]
        self.memory_limit_in_mb = str(ctx["memory_limit_in_mb"])
        self.log_group_name = ctx["log_group_name"]
        self.log_stream_name = ctx["log_stream_name"]
        self.identity = None
        self.client_context = None
        self._deadline = deadline

    def get_remaining_time_in_millis(self):
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def _die_with_the_emulator(parent):
    """Exit as soon as stdin hangs up (the emulator's end closed) or the parent changes."""
    poller = select.poll()
    poller.register(0, 0)  # only hangups and errors are reported
    while True:
        hung_up = any(
            mask & (select.POLLHUP | select.POLLERR | select.POLLNVAL)
            for _, mask in poller.poll(1000)
        )
        if hung_up or os.getppid() != parent:
            os._exit(1)


def main():
    threading.Thread(target=_die_with_the_emulator, args=(os.getppid(),), daemon=True).start()
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # stray writes to fd 1 (C code, subprocesses) must not corrupt the protocol
    sys.path.insert(0, os.getcwd())
    started = time.monotonic()
    init_error = None
    handler = None
    capture = io.StringIO()
    real_out, real_err = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = capture
    try:
        handler = _load_handler(os.environ["_HANDLER"])
        _tag_botocore_requests()
    except _InitError as exc:
        init_error = _error(exc, exc.kind)
    finally:
        sys.stdout, sys.stderr = real_out, real_err
    hello = {
        "ready": True,
        "init_ms": (time.monotonic() - started) * 1000,
        "log": capture.getvalue(),
    }
    if init_error:
        hello["init_error"] = init_error
    proto.write(json.dumps(hello) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        ctx = request["context"]
        deadline = time.monotonic() + request["timeout_s"]
        capture = io.StringIO()
        response = {"request_id": ctx["request_id"]}
        CURRENT["header"] = f"{ctx['function_name']}/{ctx['request_id']}"
        os.environ["_X_AMZN_REQUEST_ID"] = ctx["request_id"]
        t0 = time.monotonic()
        sys.stdout = sys.stderr = capture
        try:
            if init_error:
                response["error"] = init_error
            else:
                result = handler(json.loads(request["payload"]), _Context(ctx, deadline))
                try:
                    response["payload"] = json.dumps(result)
                except (TypeError, ValueError) as exc:
                    response["error"] = {
                        "errorType": "Runtime.MarshalError",
                        "errorMessage": f"Unable to marshal response: {exc}",
                    }
        except Exception as exc:  # whatever the handler raised is its error
            response["error"] = _error(exc)
        except SystemExit as exc:
            response["error"] = {
                "errorType": "Runtime.ExitError",
                "errorMessage": (
                    f"RequestId: {ctx['request_id']} Error: Runtime exited with error: "
                    f"exit status {exc.code}"
                ),
            }
        finally:
            sys.stdout, sys.stderr = real_out, real_err
            CURRENT["header"] = None
        response["duration_ms"] = (time.monotonic() - t0) * 1000
        response["log"] = capture.getvalue()
        proto.write(json.dumps(response) + "\n")


if __name__ == "__main__":
    main()
