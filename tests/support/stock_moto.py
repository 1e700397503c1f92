"""A stock moto server (moto without the emulator's additions: no change feed, no journal, no
Lambda or Step Functions execution) in a process of its own, on a free port: the polled,
foreign backend the tests and benchmarks compare against."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import boto3

from tests.support.emulator import stop_process
from tests.support.processes import free_port


class StockMoto:
    """``python -m moto.server`` on a free port, answering when constructed; stop() ends it."""

    def __init__(self, cwd: Path | None = None, timeout: float = 60.0) -> None:
        # The free port may be taken by another process (a parallel test worker) before moto
        # binds it: moto then exits at once, and another port is tried.
        for attempt in range(3):
            try:
                self._start(cwd, timeout)
                return
            except RuntimeError as exc:
                if attempt == 2 or "exited" not in str(exc):
                    raise

    def _start(self, cwd: Path | None, timeout: float, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(f"{self.url}/moto-api/", timeout=2)
                return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError("stock moto server exited as it started") from None
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("stock moto server did not start") from None
                time.sleep(0.2)

    def stop(self) -> None:
        stop_process(self.process)

    def start_again(self, timeout: float = 60.0) -> None:
        """Started again on its port, after a stop or a kill (empty: stock moto keeps its state
        in memory)."""
        self._start(None, timeout, self.port)


def client(url: str, service: str) -> Any:
    """A boto3 client of ``service`` on the stock moto server at ``url`` (its testing keys)."""
    return boto3.client(
        service,
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
