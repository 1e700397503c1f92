"""The embedded lab emulator: moto server plus real Lambda code, SQS polling, permission checks,
the write-decision journal and the change feed, on one local port.

The journal, the change feed and each queue's oldest message age (``queues``: what AWS publishes
only as a CloudWatch metric) are readable (GET only) under ``/_awsview/`` — a path no AWS API
uses. Nothing under it can change anything.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from awsview.access import is_loopback
from awsview.emulator.trust import Trust, gate, service_apps, unknown_services
from awsview.model.errors import UserError

API_PREFIX = "/_awsview/"
DEFAULT_PORT = 5000


class EmulatorError(UserError):
    """A problem starting the emulator, with a message meant for the person running it."""


def default_state_dir(port: int) -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(base) / "awsview" / f"emulator-{port}"


class PlainFormatter(logging.Formatter):
    """The log is a file, read with ``less``, an editor or ``tail -f``: werkzeug's terminal
    colours (it styles a request's line by its status) are left out, and any other control
    character a message carries, but newline and tab, is written as ``\\xNN``."""

    def format(self, record: logging.LogRecord) -> str:
        text = _STYLES.sub("", super().format(record))
        return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


_STYLES = re.compile(r"\x1b\[[0-9;]*m")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline


def _quiet_logging(state_dir: Path) -> Path:
    """moto and werkzeug talk a lot; all of it goes to a file, none to the terminal."""
    from awsview.emulator.disk import QuietFileHandler

    path = state_dir / "emulator.log"
    handler = QuietFileHandler(path)  # a full disk: said once, never a traceback per line
    handler.setFormatter(PlainFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    for name in ("werkzeug", "moto", "botocore", "urllib3"):
        noisy = logging.getLogger(name)
        noisy.handlers.clear()
        noisy.propagate = True
    logging.getLogger("botocore").setLevel(logging.WARNING)
    logging.captureWarnings(True)
    return path


@dataclass
class Emulator:
    """A running emulator. Use :func:`start` to make one."""

    host: str
    port: int
    state_dir: Path
    instance: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    started_at: float = field(default_factory=time.time)
    _server: Any = None
    _thread: threading.Thread | None = None
    _poller: Any = None
    _runtime: Any = None
    _collector: Any = None
    journal: Any = None
    feed: Any = None

    @property
    def endpoint_url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def serve_forever(self) -> None:
        self._server.serve_forever(poll_interval=0.2)

    def start_in_thread(self) -> None:
        self._thread = threading.Thread(target=self.serve_forever, name="emulator", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._collector:
            self._collector.stop()
        if self.feed:
            self.feed.close()  # answers the readers waiting on it, so the server can stop
        if self._poller:
            self._poller.stop()
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server._awsview_listener.close()
        if self._runtime:
            self._runtime.close()
        if self.journal:
            self.journal.close()


class _Newest:
    """Forwards to the newest emulator's runtime or journal. moto is patched once per process;
    an emulator started after an earlier one stopped (`awsview docs` twice in one process) must
    not run Lambdas in, or journal writes to, the stopped one."""

    def __init__(self) -> None:
        self.target: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)


_RUNTIME, _JOURNAL, _FEED = _Newest(), _Newest(), _Newest()
_patched = False


def start(
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    state_dir: Path | None = None,
    sqs_batches_in_flight: int | None = None,
    trust: Trust | None = None,
) -> Emulator:
    """Bind the port, patch moto and start the SQS poller. Call serve_forever() or
    start_in_thread().

    ``trust``: who it answers (awsview/emulator/trust.py); by default loopback clients, for the
    lab services only. Any other address needs a token.

    ``sqs_batches_in_flight``: per event source mapping (default five, as AWS starts with); 1
    delivers in queue order, so a replay processes messages in the same order every time.
    """
    global _patched
    from werkzeug.serving import make_server

    trust = trust or Trust.make(host)
    if trust.token is None and not is_loopback(host):
        raise EmulatorError(f"listening on {host} needs a token (set AWSVIEW_TOKEN)")
    # Bind before importing moto: a busy port should fail fast with a clear message. Listen only
    # once it can answer (below): a client that connected while moto loads (seconds on a busy
    # machine) waited in the backlog, unanswered, up to its read timeout, where a refused
    # connection is retried at once by its caller.
    try:
        listener = _listen(host, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise EmulatorError(
                f"port {port} on {host} is already in use — is another emulator running? "
                f"Choose another with --port (0 picks a free one)."
            ) from None
        raise EmulatorError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    server = make_server(
        host, listener.getsockname()[1], _placeholder_app, threaded=True, fd=listener.fileno()
    )
    server._awsview_listener = listener  # keep the socket object alive with the server
    unknown = unknown_services(trust)
    if unknown:
        listener.close()
        raise EmulatorError(f"no such service in the emulator: {', '.join(sorted(unknown))}")
    bound_port = listener.getsockname()[1]
    state_dir = Path(state_dir) if state_dir else default_state_dir(bound_port)
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        _quiet_logging(state_dir)
    except OSError as exc:
        server.server_close()
        listener.close()
        raise EmulatorError(_unusable(state_dir, exc)) from None
    # The ASL interpreter calls other services at http://localhost:$MOTO_PORT.
    os.environ["MOTO_PORT"] = str(bound_port)

    from awsview.emulator import moto_patches

    moto_patches.load_batch_enum_alone()
    from moto.core.config import default_user_config
    from moto.moto_server.werkzeug_app import MotoRequestHandler, create_backend_app

    # Selects the executing Step Functions backend; must happen before anything is created.
    default_user_config["stepfunctions"]["execute_state_machine"] = True

    from awsview.emulator import change_hooks, dynamo_journal
    from awsview.emulator.changes import ChangeFeed
    from awsview.emulator.disk import Notice
    from awsview.emulator.journal import Journal
    from awsview.emulator.lambda_runtime import LambdaRuntime
    from awsview.emulator.sqs_poller import MAX_BATCHES_IN_FLIGHT, SqsPoller

    emulator = Emulator(host=host, port=bound_port, state_dir=state_dir)
    emulator.feed = ChangeFeed()
    try:
        emulator.journal = Journal(
            state_dir / "journal.sqlite3",
            on_record=lambda table: emulator.feed.emit("journal", table),
            disk=Notice(state_dir),
        )
    except (OSError, sqlite3.Error) as exc:
        server.server_close()
        listener.close()
        raise EmulatorError(_unusable(state_dir, exc)) from None
    emulator._runtime = LambdaRuntime(
        state_dir, emulator.endpoint_url, emulator.journal, _write_logs
    )
    _RUNTIME.target, _JOURNAL.target, _FEED.target = (
        emulator._runtime,
        emulator.journal,
        emulator.feed,
    )
    if _patched:
        from moto.moto_api._internal.models import moto_api_backend

        moto_api_backend.reset()  # a fresh emulator: nothing left from the earlier one
    else:
        moto_patches.install(_RUNTIME)
        dynamo_journal.install(_JOURNAL)
        change_hooks.install(_FEED)  # after the patches above, so it hears what they changed too
        _patched = True
    if trust.service_on("cloudformation"):
        moto_patches.safe_cloudformation_templates()  # costs a second of imports: only if on

    moto_app = moto_patches.remembering_dispatcher(service_apps(create_backend_app, trust))
    server.app = gate(_journal_api(_json_access_denied(moto_app), emulator), trust)
    from awsview.emulator import portal

    server.RequestHandlerClass = portal.keeping_the_token(MotoRequestHandler)
    emulator._server = server
    try:
        listener.listen(128)
    except OSError as exc:  # another one bound the port meanwhile, and listened first
        server.server_close()
        listener.close()
        raise EmulatorError(
            f"cannot listen on {host}:{bound_port}: {exc.strerror or exc}"
        ) from None
    emulator._poller = SqsPoller(emulator._runtime, sqs_batches_in_flight or MAX_BATCHES_IN_FLIGHT)
    emulator._poller.start()
    emulator._collector = _ShortCollections()
    return emulator


class _ShortCollections:
    """Keeps Python's full garbage collections out of the emulator's answers.

    moto's modules and backends are ~250,000 long-lived objects (most imported by the first call
    to each service); a full collection walks them all and holds every thread for 0.25-1 s — an
    answer, a feed wake-up or a Lambda delivery waits behind it. 5 s after the start, then every
    30 s, the young garbage is collected and what survived is frozen (out of the collector's
    sight; refcounting still frees it); every 10 minutes a full collection picks up cycles among
    what was frozen. The first comes early: `lab check` runs the emulator in its own process for
    about a quarter of a minute, and a lab's first calls have imported what they import by then.
    """

    FIRST_FREEZE_S = 5.0
    FREEZE_EVERY_S = 30.0
    FULL_EVERY_S = 600.0

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="emulator-gc", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import gc

        last_full = time.monotonic()
        wait = self.FIRST_FREEZE_S
        while not self._stop.wait(wait):
            wait = self.FREEZE_EVERY_S
            if time.monotonic() - last_full > self.FULL_EVERY_S:
                last_full = time.monotonic()
                gc.unfreeze()
                gc.collect()
            else:
                gc.collect(1)
            gc.freeze()

    def stop(self) -> None:
        self._stop.set()


def _unusable(state_dir: Path, exc: BaseException) -> str:
    from awsview.emulator.disk import what_failed

    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        why = "not a directory (a file is in the way)"
    else:
        why = what_failed(exc, state_dir if state_dir.is_dir() else state_dir.parent)
    return (
        f"cannot use the state directory {state_dir}: it is {why}; choose another with --state-dir"
    )


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _placeholder_app(environ: dict, start_response: Callable) -> Iterable[bytes]:
    start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
    return [b"starting"]


def _write_logs(spec: Any, stream: str, lines: list[str]) -> None:
    from moto.logs.models import logs_backends

    backend = logs_backends[spec.account_id][spec.region]
    group = f"/aws/lambda/{spec.name}"
    backend.ensure_log_group(group)
    if stream not in backend.groups[group].streams:
        backend.create_log_stream(group, stream)
    stamp = int(time.time() * 1000)
    backend.put_log_events(group, stream, [{"timestamp": stamp, "message": line} for line in lines])


class Faults:
    """Injected faults for soak tests, read from ``faults.json`` in the state directory:
    ``{"throttle": 0.5, "credentials": "expired" | "invalid", "delay_ms": 200,
    "agent": "aiobotocore"}``.
    Only requests whose User-Agent contains ``agent`` (default: aiobotocore, i.e. the viewer) are
    affected, so a lab keeps playing. The file is re-read when it changes; delete it to stop."""

    def __init__(self, path: Path):
        self.path = path
        self._stamp: float | None = None
        self.config: dict[str, Any] = {}

    def current(self) -> dict[str, Any]:
        try:
            stamp = self.path.stat().st_mtime
        except OSError:
            self._stamp, self.config = None, {}
            return self.config
        if stamp != self._stamp:
            self._stamp = stamp
            try:
                self.config = json.loads(self.path.read_text() or "{}")
            except (OSError, ValueError):
                self.config = {}
        return self.config


def _injected(
    faults: Faults, authorization: str, agent: str
) -> tuple[str, list[tuple[str, str]], bytes] | None:
    import random

    config = faults.current()
    if not config or "Credential=" not in authorization:
        return None  # only signed AWS calls are affected, never the journal API
    if str(config.get("agent", "aiobotocore")) not in agent:
        return None
    if config.get("delay_ms"):
        time.sleep(float(config["delay_ms"]) / 1000)
    kind = config.get("credentials")
    if kind in ("expired", "invalid"):
        key = "EXPIRED" if kind == "expired" else "INVALID"
        return credential_rejection(authorization.replace("Credential=", f"Credential={key}", 1))
    if random.random() < float(config.get("throttle") or 0):
        service = authorization.split("Credential=", 1)[1].split(",", 1)[0].split("/")
        service = service[3] if len(service) > 3 else ""
        body = json.dumps(
            {
                "__type": "com.amazon.coral.availability#ThrottlingException",
                "message": "Rate exceeded",
            }
        )
        if service in _XML_SERVICES:
            body = (
                "<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code>"
                "<Message>Rate exceeded</Message></Error><RequestId>x</RequestId></ErrorResponse>"
            )
            return "400 Bad Request", [("Content-Type", "text/xml")], body.encode()
        return (
            "400 Bad Request",
            [
                ("Content-Type", "application/x-amz-json-1.0"),
                ("x-amzn-ErrorType", "ThrottlingException"),
            ],
            body.encode(),
        )
    return None


def _journal_api(app: Callable, emulator: Emulator) -> Callable:
    from awsview.emulator import portal

    faults = Faults(emulator.state_dir / "faults.json")

    def wsgi(environ: dict, start_response: Callable) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        authorization = environ.get("HTTP_AUTHORIZATION", "")
        rejected = credential_rejection(authorization) or _injected(
            faults, authorization, environ.get("HTTP_USER_AGENT", "")
        )
        if rejected is not None:
            status, headers, body = rejected
            start_response(status, headers)
            return [body]
        if path == portal.PATH:
            return portal.answer(environ, start_response)
        if not path.startswith(API_PREFIX):
            return app(environ, start_response)
        route = path[len(API_PREFIX) :]
        status, body = _answer(route, environ, emulator)
        data = json.dumps(body).encode()
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
        if status.startswith("405"):
            headers.append(("Allow", "GET" if route == "changes" else "GET, HEAD"))
        start_response(status, headers)
        return [data]

    return wsgi


def _json_access_denied(app: Callable) -> Callable:
    """moto refuses a call its IAM authorization denies with an XML body whatever the service's
    protocol; a JSON SDK then reads only "403". JSON-protocol services (an ``X-Amz-Target``
    header, or Lambda's versioned REST paths) get AWS's JSON ``AccessDeniedException`` instead."""

    def wsgi(environ: dict, start_response: Callable) -> Iterable[bytes]:
        if not (environ.get("HTTP_X_AMZ_TARGET") or environ.get("PATH_INFO", "").startswith("/20")):
            return app(environ, start_response)
        held: dict[str, Any] = {}

        def hold(status: str, headers: list, exc_info: Any = None) -> Callable:
            if not status.startswith("403"):
                return start_response(status, headers, exc_info)
            held.update(status=status, headers=headers)
            return lambda data: None

        answer = app(environ, hold)
        if not held:
            return answer
        try:
            body = b"".join(answer)
        finally:
            getattr(answer, "close", lambda: None)()
        if b"<Code>AccessDenied</Code>" in body:
            message = (
                body.split(b"<Message>", 1)[1].split(b"</Message>", 1)[0].decode("utf-8", "replace")
            )
            body = json.dumps({"__type": "AccessDeniedException", "message": message}).encode()
            held["headers"] = [
                ("Content-Type", "application/x-amz-json-1.0"),
                ("x-amzn-ErrorType", "AccessDeniedException"),
                ("Content-Length", str(len(body))),
            ]
        start_response(held["status"], held["headers"])
        return [body]

    return wsgi


_XML_SERVICES = ("sts", "iam")
_REJECTIONS = {
    # access key id prefix: (query-protocol code, JSON-protocol code, message)
    "EXPIRED": (
        "ExpiredToken",
        "ExpiredTokenException",
        "The security token included in the request is expired",
    ),
    "INVALID": (
        "InvalidClientTokenId",
        "UnrecognizedClientException",
        "The security token included in the request is invalid.",
    ),
}


def credential_rejection(authorization: str) -> tuple[str, list[tuple[str, str]], bytes] | None:
    """Access key ids starting with EXPIRED or INVALID are refused the way AWS refuses them,
    so a client's handling of bad credentials can be tested against the emulator."""
    marker = "Credential="
    if marker not in authorization:
        return None
    scope = authorization.split(marker, 1)[1].split(",", 1)[0].split("/")
    key = scope[0]
    rule = next((v for k, v in _REJECTIONS.items() if key.startswith(k)), None)
    if rule is None:
        return None
    service = scope[3] if len(scope) > 3 else ""
    request_id = uuid.uuid4().hex
    if service in _XML_SERVICES:
        body = (
            f"<ErrorResponse><Error><Type>Sender</Type><Code>{rule[0]}</Code>"
            f"<Message>{rule[2]}</Message></Error><RequestId>{request_id}</RequestId></ErrorResponse>"
        )
        return (
            "403 Forbidden",
            [("Content-Type", "text/xml"), ("x-amzn-RequestId", request_id)],
            body.encode(),
        )
    body = json.dumps({"__type": f"com.amazon.coral.service#{rule[1]}", "message": rule[2]})
    return (
        "400 Bad Request" if service != "lambda" else "403 Forbidden",
        [
            ("Content-Type", "application/x-amz-json-1.0"),
            ("x-amzn-ErrorType", rule[1]),
            ("x-amzn-RequestId", request_id),
        ],
        body.encode(),
    )


def _answer(route: str, environ: dict, emulator: Emulator) -> tuple[str, dict[str, Any]]:
    method = environ.get("REQUEST_METHOD")
    # The change feed answers GET only: a HEAD would hold a long poll open for nothing.
    if method != "GET" and (route == "changes" or method != "HEAD"):
        return "405 Method Not Allowed", {"error": "this API is read-only"}
    query = parse_qs(environ.get("QUERY_STRING", ""))
    try:
        since = int(query.get("since", ["0"])[0])
        limit = max(1, min(int(query.get("limit", ["500"])[0]), 5000))
        wait = float(query.get("wait", ["0"])[0])
    except ValueError:
        return "400 Bad Request", {"error": "since, limit and wait must be numbers"}
    if route == "health":
        return "200 OK", {
            "ok": True,
            "instance": emulator.instance,
            "started_at": emulator.started_at,
            "port": emulator.port,
            "journal": emulator.journal.id,
            "feed": emulator.feed.id,
        }
    if route == "changes":
        if wait != wait or since < 0:  # NaN
            return "400 Bad Request", {"error": "since must be ≥ 0 and wait a number of seconds"}
        return "200 OK", emulator.feed.since(since, wait, query.get("feed", [None])[0])
    if route == "queues":
        from awsview.emulator.moto_patches import oldest_message_ages

        return "200 OK", {"oldest_age_s": oldest_message_ages(), "instance": emulator.instance}
    if route in ("journal", "decisions"):
        rows = [d.to_json() for d in emulator.journal.decisions(since, limit)]
    elif route == "invocations":
        rows = [i.to_json() for i in emulator.journal.invocations(since, limit)]
    else:
        return "404 Not Found", {"error": f"no such resource: {API_PREFIX}{route}"}
    cursor = rows[-1]["cursor"] if rows else since
    # The instance and its start tell a reader the emulator restarted: moto's resources are new.
    return "200 OK", {
        "items": rows,
        "cursor": cursor,
        "more": len(rows) == limit,
        "journal": emulator.journal.id,
        "instance": emulator.instance,
        "started_at": emulator.started_at,
    }
