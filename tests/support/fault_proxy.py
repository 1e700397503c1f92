"""A proxy in front of a stock moto server that injects the soak's faults, as the embedded
emulator does itself: the same ``faults.json`` (throttling, refused credentials, slow answers,
for the viewer's aiobotocore calls only), plus ``{"refuse": true}``, a connection dropped before
any answer — an endpoint that does not answer. A request the upstream cannot take (the stock
server killed) is dropped the same way."""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from awsview.emulator.server import Faults, _injected


class _Faulting(BaseHTTPRequestHandler):
    upstream: tuple[str, int] = ("127.0.0.1", 0)
    faults: Faults
    protocol_version = "HTTP/1.1"

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        agent = self.headers.get("User-Agent", "")
        if self.faults.current().get("refuse") and "aiobotocore" in agent:
            self._drop()
            return
        injected = _injected(self.faults, self.headers.get("Authorization", ""), agent)
        if injected is not None:
            status, headers, data = injected
            self.send_response(int(status.split()[0]))
            for name, value in headers:
                self.send_header(name, value)
        else:
            try:
                connection = http.client.HTTPConnection(*self.upstream, timeout=30)
                sent = {
                    k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")
                }
                connection.request(self.command, self.path, body=body or None, headers=sent)
                response = connection.getresponse()
                data = response.read()
                connection.close()
            except OSError:
                self._drop()  # the stock server is down: no answer, as if it were not there
                return
            self.send_response(response.status)
            for name, value in response.getheaders():
                if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

    def log_message(self, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client gone mid-request (a viewer's connection dropped by a fault) is expected


@contextmanager
def fault_proxy(port: int, faults: Path) -> Iterator[str]:
    """The proxy's URL, forwarding to the stock server on ``port`` (loopback) unless
    ``faults`` (a faults.json, absent: none) says otherwise."""
    bound = type(
        "Handler", (_Faulting,), {"upstream": ("127.0.0.1", port), "faults": Faults(faults)}
    )
    server = _Server(("127.0.0.1", 0), bound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
