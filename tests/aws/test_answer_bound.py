"""An endpoint that answers without end: a learner's machine on a class network, or anything that
claims to be AWS or the emulator. The viewer reads at most `MAX_ANSWER` bytes of an answer, on
the AWS calls and on the emulator's own routes, and says so as an error; it never reads the
rest (the server counts what it could send)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from botocore.exceptions import HTTPClientError

from awsview.aws import answers
from awsview.aws.answers import AnswerTooLarge, EndlessListing, bounded_session
from awsview.aws.errors import classify
from awsview.aws.session import Connection, Target

LIMIT = 1 << 20  # the bound, made small for the test: the mechanism is the same
CHUNK = b"x" * 65536


class Endless(BaseHTTPRequestHandler):
    """200 and a JSON-looking body that goes on for ever, chunked or with a declared length."""

    sent = 0
    declared: int | None = None

    def _answer(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if self.declared is not None:
            self.send_header("Content-Length", str(self.declared))
        else:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for n in range(4096):  # 256 MiB at most, if nobody stops reading
                data = (b'{"x": "' if n == 0 else b"") + CHUNK
                if self.declared is None:
                    data = b"%x\r\n%s\r\n" % (len(data), data)
                self.wfile.write(data)
                type(self).sent += len(CHUNK)
        except OSError:  # the client hung up: what it was meant to do
            pass

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(params=["chunked", "declared"])
def endless(request, monkeypatch) -> Iterator[str]:
    monkeypatch.setattr(answers, "MAX_ANSWER", LIMIT)
    handler = type("Handler", (Endless,), {"sent": 0})
    if request.param == "declared":
        handler.declared = 1 << 40  # a terabyte said up front: refused before the body
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        # Read up to the bound, then hung up: the server could not send much past it (what the
        # sockets' buffers hold on the way), far from the 256 MiB it had.
        assert handler.sent < 32 * LIMIT, handler.sent


async def test_an_aws_call_stops_reading_at_the_bound_and_says_so(endless, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    async with Connection(Target(endpoint_url=endless, region="us-east-1")) as conn:
        with pytest.raises(HTTPClientError) as raised:  # aiobotocore wraps what its session raises
            await conn.call("sqs", "list_queues")
    assert isinstance(raised.value.kwargs["error"], AnswerTooLarge)
    failure = classify(raised.value)
    assert failure.text == f"{endless}/ answered more than 1 MiB; not read"


async def test_the_emulator_routes_stop_reading_at_the_bound(endless):
    async with bounded_session() as session:
        async with session.get(f"{endless}/_awsview/feed?since=0") as response:
            with pytest.raises(AnswerTooLarge, match=r"/_awsview/feed answered more than 1 MiB"):
                await response.json()


async def test_an_answer_within_the_bound_is_read_whole(monkeypatch):
    monkeypatch.setattr(answers, "MAX_ANSWER", LIMIT)
    handler = type("Handler", (Endless,), {"sent": 0, "declared": None})

    class Short(handler):  # type: ignore[misc, valid-type]
        def _answer(self) -> None:
            body = b'{"x": "' + b"y" * (LIMIT - 9) + b'"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = _answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), Short)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        async with bounded_session() as session:
            async with session.get(f"http://127.0.0.1:{server.server_address[1]}/") as response:
                assert len((await response.json())["x"]) == LIMIT - 9
    finally:
        server.shutdown()
        server.server_close()


class Looping(BaseHTTPRequestHandler):
    """SQS's ListQueues, always with a next page: the same token again, or a new one each time."""

    same = True
    asked = 0

    def do_POST(self) -> None:
        sent = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
        type(self).asked += 1
        token = sent.get("NextToken") or "t0" if self.same else f"t{type(self).asked}"
        body = json.dumps({"QueueUrls": [f"http://q/{self.asked}"], "NextToken": token}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize(
    ("same", "said", "asked"),
    [
        (True, "list_queues: the endpoint answered the same page again; the rest not read", 2),
        (False, "list_queues: more than 50 pages; the rest not read", 50),
    ],
    ids=["same-token", "no-end"],
)
async def test_a_listing_that_never_ends_is_an_error_not_a_hang(monkeypatch, same, said, asked):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setattr(answers, "MAX_PAGES", 50)  # the bound, made small for the test
    handler = type("Handler", (Looping,), {"same": same, "asked": 0})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        async with Connection(Target(endpoint_url=endpoint, region="us-east-1")) as conn:
            with pytest.raises(EndlessListing) as raised:
                await conn.pages(
                    "sqs", "list_queues", "QueueUrls", token_in="NextToken", token_out="NextToken"
                )
    finally:
        server.shutdown()
        server.server_close()
    assert classify(raised.value).text == said
    assert handler.asked == asked
