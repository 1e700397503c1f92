"""A proxy in front of the emulator that answers some requests itself: a backend that lacks a
service, or an AWS error worded as a test needs, with everything else forwarded as sent."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Intercepting(BaseHTTPRequestHandler):
    """Forwards every request to ``upstream`` unless ``intercept`` answers it."""

    upstream: tuple[str, int] = ("127.0.0.1", 0)

    def intercept(self, body: bytes) -> tuple[int, str, bytes] | None:
        """(status, content type, body) to answer with instead of the upstream; None forwards."""
        return None

    def body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def forward(self, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        """The upstream's answer to this request (raises OSError when it takes none)."""
        connection = http.client.HTTPConnection(*self.upstream, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        connection.request(self.command, self.path, body=body or None, headers=headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        kept = [
            (name, value)
            for name, value in response.getheaders()
            if name.lower() not in ("transfer-encoding", "connection", "content-length")
        ]
        return response.status, kept, data

    def answer(self, status: int, headers: list[tuple[str, str]], data: bytes) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self) -> None:
        body = self.body()
        answer = self.intercept(body)
        if answer is not None:
            status, content_type, data = answer
            self.answer(status, [("Content-Type", content_type)], data)
        else:
            self.answer(*self.forward(body))

    do_GET = do_POST = do_PUT = do_DELETE = _handle

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[str]:
    """``server`` serving on a thread of its own for the block: its URL."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def proxy(handler: type[Intercepting], port: int) -> Iterator[str]:
    """The proxy's URL, forwarding to the emulator on ``port`` (loopback)."""
    bound = type("Handler", (handler,), {"upstream": ("127.0.0.1", port)})
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), bound)) as url:
        yield url
