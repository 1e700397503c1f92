"""Shared fixtures: a real embedded emulator in its own process, one per test module. SIGTERM
interrupts a run as Ctrl+C does, so that the fixtures tear down."""

from __future__ import annotations

import os
import signal
import tempfile
import threading
import time
from collections.abc import Iterator

import pytest

# The viewer keeps decisions in the user state directory: never the real one during tests.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="awsview-test-state-")
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="awsview-test-config-")
# No test may reach a real AWS account: the shell's AWS configuration is not the tests'. A test
# that needs a profile writes its own config file; everything else talks to the emulator.
_aws_home = tempfile.mkdtemp(prefix="awsview-test-aws-")
for _name in [n for n in os.environ if n.startswith("AWS_") and n != "AWS_CA_BUNDLE"]:
    del os.environ[_name]
os.environ.update(
    AWS_CONFIG_FILE=os.path.join(_aws_home, "config"),
    AWS_SHARED_CREDENTIALS_FILE=os.path.join(_aws_home, "credentials"),
    AWS_EC2_METADATA_DISABLED="true",
)

# After the environment above (noqa: E402); the tests import these names from here too (F401).
from tests.support.emulator import CREDENTIALS, REGION, RunningEmulator  # noqa: E402, F401


def _interrupt(signum: int, frame: object) -> None:
    # A second SIGTERM ends the run at once, as SIGTERM did before: the teardown may be what hangs.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def pytest_configure(config: pytest.Config) -> None:
    """SIGTERM (a CI job's timeout, `kill`) stops the run as Ctrl+C does: pytest then tears the
    fixtures down, so no emulator, Lambda worker or `subprocess.run` child outlives the run.
    By default SIGTERM ends the process where it stands and fixture teardown never runs."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningEmulator]:
    running = RunningEmulator(state_dir=tmp_path_factory.mktemp("emulator")).start()
    yield running
    running.stop()


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC for the test: rendered clock times do not depend on the machine."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()
