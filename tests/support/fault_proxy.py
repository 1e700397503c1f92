"""A proxy in front of a stock moto server that injects the soak's faults, as the embedded
emulator does itself: the same ``faults.json`` (throttling, refused credentials, slow answers,
for the viewer's aiobotocore calls only), plus ``{"refuse": true}``, a connection dropped before
any answer — an endpoint that does not answer. A request the upstream cannot take (the stock
server killed) is dropped the same way."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path

from awsview.emulator.server import Faults, _injected
from tests.support.proxy import Intercepting, serving


class _Faulting(Intercepting):
    faults: Faults
    protocol_version = "HTTP/1.1"

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _handle(self) -> None:
        body = self.body()
        agent = self.headers.get("User-Agent", "")
        if self.faults.current().get("refuse") and "aiobotocore" in agent:
            self._drop()
            return
        injected = _injected(self.faults, self.headers.get("Authorization", ""), agent)
        if injected is not None:
            status, headers, data = injected
            self.answer(int(status.split()[0]), list(headers), data)
            return
        try:
            forwarded = self.forward(body)
        except OSError:
            self._drop()  # the stock server is down: no answer, as if it were not there
            return
        self.answer(*forwarded)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle


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
    with serving(_Server(("127.0.0.1", 0), bound)) as url:
        yield url
