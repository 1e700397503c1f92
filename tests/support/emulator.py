"""The embedded emulator in its own process, as the tests and benchmarks start it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

from tests.support import forkserver

REGION = "us-east-1"
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


def stop_process(process: subprocess.Popen | forkserver.ForkedProcess) -> None:
    """SIGTERM, ten seconds to go, then SIGKILL."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class RunningEmulator:
    """An `awsview emulator` subprocess and boto3 clients for it. ``options``: more command-line
    options (``--host 0.0.0.0 --allow-remote``); ``token``: its AWSVIEW_TOKEN, then also the
    access key id of the clients made here."""

    state_dir: Path
    port: int = 0
    process: subprocess.Popen | forkserver.ForkedProcess | None = None
    endpoint_url: str = ""
    options: tuple[str, ...] = ()
    token: str | None = None
    extra_env: dict[str, str] = field(default_factory=dict)
    preexec: Callable[[], None] | None = None  # run in the child before it starts (limits)
    forked: bool = True  # False: a plain process, as a user starts it (a benchmark's yardstick)

    @property
    def access_key_id(self) -> str:
        return self.token or CREDENTIALS["aws_access_key_id"]

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "awsview",
            "emulator",
            "--port",
            str(self.port),
            "--state-dir",
            str(self.state_dir),
            *self.options,
        ]

    def start(self) -> RunningEmulator:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **self.extra_env}
        env.pop("AWSVIEW_TOKEN", None)
        if self.token is not None:
            env["AWSVIEW_TOKEN"] = self.token
        argv = self.command()
        # Forked from a server that has imported the emulator once (tests/support/forkserver.py),
        # unless asked not to, the child needs a preexec of its own or the server cannot be had.
        forked = forkserver.spawn(argv, env) if self.forked and self.preexec is None else None
        self.process = forked or subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            preexec_fn=self.preexec,
        )
        line = self.process.stdout.readline()
        if "listening on" not in line:
            self.process.kill()
            raise RuntimeError(f"emulator did not start: {line!r} {self.process.stderr.read()}")
        self.endpoint_url = line.rsplit(" ", 1)[-1].strip()
        self.port = int(self.endpoint_url.rsplit(":", 1)[-1])
        return self

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)

    def restart(self) -> RunningEmulator:
        """Stop and start again on the same port and state directory."""
        self.stop()
        deadline = time.monotonic() + 10
        while True:
            try:
                return self.start()
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def client(self, service: str) -> Any:
        return boto3.client(
            service,
            endpoint_url=self.endpoint_url,
            region_name=REGION,
            **{**CREDENTIALS, "aws_access_key_id": self.access_key_id},
        )

    @property
    def env(self) -> dict[str, str]:
        """Environment for the AWS CLI (or any SDK) pointed at this emulator."""
        return {
            **os.environ,
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ACCESS_KEY_ID": self.access_key_id,
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_PAGER": "",
        }
