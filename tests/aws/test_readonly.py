"""Read-only by construction: every operation outside the allow-list is refused on a guarded
aiobotocore client before a single byte leaves the process.

"No request" is witnessed twice: a real HTTP listener on 127.0.0.1 counts what reaches it, and a
`before-send` handler on the client counts what botocore was about to send. Positive controls
show both witnesses do see allowed calls, so the test can fail.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import botocore.session
import pytest
from aiobotocore.session import get_session
from botocore.config import Config

from awsview.aws.readonly import READ_OPERATIONS, ReadOnlyViolation, guard, is_read_operation

SERVICES = [
    "stepfunctions",
    "dynamodb",
    "dynamodbstreams",
    "sqs",
    "lambda",
    "logs",
    "iam",
    "sts",
    "cloudwatch",
]
CREDENTIALS = {
    "aws_access_key_id": "testing",
    "aws_secret_access_key": "testing",
    "aws_session_token": "testing",
}
CONFIG = Config(
    parameter_validation=False,  # so `{}` reaches the guard for every operation
    retries={"total_max_attempts": 1},  # a 500 must not be retried with back-off
    inject_host_prefix=False,  # a leaked call must reach the listener, not "data-…"
    proxies={},  # never route the listener through an env proxy
    connect_timeout=2,
    read_timeout=5,
)
MODELS = botocore.session.get_session()


class Listener(ThreadingHTTPServer):
    """Counts every HTTP request it receives and answers each with a 500."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Answer500)
        self.requests = 0
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Answer500(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        with self.server.lock:
            self.server.requests += 1
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"__type": "InternalFailure", "message": "test listener"}'
        self.send_response(500)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _answer

    def log_message(self, *args) -> None:  # keep pytest output quiet
        pass


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


class Sends:
    """The second witness: counts `before-send` events on a client."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, **_) -> None:
        self.count += 1


@asynccontextmanager
async def guarded_client(service: str, listener: Listener):
    async with get_session().create_client(
        service,
        region_name="us-east-1",
        endpoint_url=listener.url,
        config=CONFIG,
        **CREDENTIALS,
    ) as client:
        sends = Sends()
        client.meta.events.register("before-send", sends)
        yield guard(client), sends


def operation_names(service: str) -> list[str]:
    return sorted(MODELS.get_service_model(service).operation_names)


def method_for(client, operation: str):
    """The client's public method for a botocore operation name."""
    names = {op: method for method, op in client.meta.method_to_api_mapping.items()}
    return getattr(client, names[operation])


def test_allow_list_covers_exactly_the_viewers_services():
    assert sorted(READ_OPERATIONS) == sorted(SERVICES)


@pytest.mark.parametrize("service", SERVICES)
def test_every_allowed_name_exists_in_botocore(service):
    unknown = READ_OPERATIONS[service] - set(operation_names(service))
    assert not unknown, f"{service}: not botocore operations (typo?): {sorted(unknown)}"


@pytest.mark.parametrize("service", SERVICES)
async def test_every_other_operation_is_refused_without_a_request(service, listener):
    refused = [op for op in operation_names(service) if not is_read_operation(service, op)]
    async with guarded_client(service, listener) as (client, sends):
        for operation in refused:
            with pytest.raises(ReadOnlyViolation) as caught:
                await method_for(client, operation)()
            assert (caught.value.service, caught.value.operation) == (service, operation)
    assert sends.count == 0, f"{service}: botocore was about to send {sends.count} request(s)"
    assert listener.requests == 0, f"{service}: {listener.requests} request(s) reached the wire"


@pytest.mark.parametrize("service", SERVICES)
async def test_every_allowed_operation_is_let_through(service, listener):
    # Anything may go wrong afterwards ({} is not a valid request, the listener answers 500);
    # only the guard's refusal would be a failure.
    async with guarded_client(service, listener) as (client, _):
        for operation in sorted(READ_OPERATIONS[service]):
            try:
                await method_for(client, operation)()
            except ReadOnlyViolation:
                pytest.fail(f"{service}:{operation} is allow-listed but was refused")
            except Exception:
                pass


@pytest.mark.parametrize(
    "service, operation",
    [
        ("sts", "GetCallerIdentity"),
        ("dynamodb", "ListTables"),
        ("sqs", "ListQueues"),
    ],
)
async def test_allowed_calls_do_reach_the_listener(service, operation, listener):
    async with guarded_client(service, listener) as (client, sends):
        with pytest.raises(Exception) as caught:  # the listener's 500 becomes a ClientError
            await method_for(client, operation)()
        assert not isinstance(caught.value, ReadOnlyViolation)
    assert sends.count == 1
    assert listener.requests == 1


@pytest.mark.parametrize(
    "service, operation",
    [
        ("sqs", "ReceiveMessage"),
        ("logs", "StartQuery"),
        ("logs", "StartLiveTail"),
        ("dynamodb", "ExecuteStatement"),
        ("dynamodb", "TransactGetItems"),
        ("lambda", "Invoke"),
        ("stepfunctions", "StartExecution"),
        ("stepfunctions", "GetActivityTask"),
        ("sts", "AssumeRole"),
        ("sts", "GetSessionToken"),
        ("iam", "GenerateCredentialReport"),
    ],
)
def test_reads_in_name_only_are_refused(service, operation):
    assert not is_read_operation(service, operation)


async def test_refusal_says_what_and_why(listener):
    async with guarded_client("stepfunctions", listener) as (client, _):
        with pytest.raises(ReadOnlyViolation) as caught:
            await client.start_execution(stateMachineArn="arn:aws:states:us-east-1:1:x")
    assert str(caught.value) == "refused stepfunctions:StartExecution — AWS View only reads"
    assert listener.requests == 0


async def test_unknown_service_refuses_everything(listener):
    async with guarded_client("s3", listener) as (client, sends):
        with pytest.raises(ReadOnlyViolation, match="refused s3:ListBuckets"):
            await client.list_buckets()
    assert (sends.count, listener.requests) == (0, 0)


def test_plain_botocore_client_and_presigning_are_guarded(listener):
    client = guard(
        botocore.session.get_session().create_client(
            "sqs", region_name="us-east-1", endpoint_url=listener.url, config=CONFIG, **CREDENTIALS
        )
    )
    with pytest.raises(ReadOnlyViolation, match="refused sqs:ReceiveMessage"):
        client.receive_message(QueueUrl=f"{listener.url}/1/q")
    # A presigned URL is a write someone else could send later.
    with pytest.raises(ReadOnlyViolation, match="refused sqs:PurgeQueue"):
        client.generate_presigned_url("purge_queue", Params={"QueueUrl": f"{listener.url}/1/q"})
    assert guard(client) is client
    assert listener.requests == 0


def test_report_refused_and_allowed_per_service(capsys):
    lines = [f"{'service':<16}{'refused':>8}{'allowed':>8}"]
    for service in SERVICES:
        total = len(operation_names(service))
        allowed = len(READ_OPERATIONS[service])
        lines.append(f"{service:<16}{total - allowed:>8}{allowed:>8}")
    with capsys.disabled():
        print("\nread-only guard:\n" + "\n".join(lines))
