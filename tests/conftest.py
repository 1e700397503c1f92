"""Shared fixtures: a real embedded emulator in its own process, one per test module. SIGTERM
interrupts a run as Ctrl+C does, so that the fixtures tear down.

Each test gets its tier from the fixtures it uses (tests/support/tiers.py, docs/testing.md): a
test that starts an emulator or a process says so by asking for a fixture that does it."""

from __future__ import annotations

import atexit
import gc
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

# Each test process's own home for what the tests' processes keep, removed when it exits (by the
# process that made it: a child forked from this one runs the same exit functions).
_home = tempfile.mkdtemp(prefix="awsview-test-")
_home_owner = os.getpid()


@atexit.register
def _remove_home() -> None:
    if os.getpid() == _home_owner:
        shutil.rmtree(_home, ignore_errors=True)


# The viewer keeps decisions in the user state directory: never the real one during tests.
os.environ["XDG_STATE_HOME"] = os.path.join(_home, "state")
os.environ["XDG_CONFIG_HOME"] = os.path.join(_home, "config")
# No test may reach a real AWS account: the shell's AWS configuration is not the tests'. A test
# that needs a profile writes its own config file; everything else talks to the emulator.
_aws_home = os.path.join(_home, "aws")
for _dir in ("state", "config", "aws"):
    os.mkdir(os.path.join(_home, _dir))
for _name in [n for n in os.environ if n.startswith("AWS_") and n != "AWS_CA_BUNDLE"]:
    del os.environ[_name]
os.environ.update(
    AWS_CONFIG_FILE=os.path.join(_aws_home, "config"),
    AWS_SHARED_CREDENTIALS_FILE=os.path.join(_aws_home, "credentials"),
    AWS_EC2_METADATA_DISABLED="true",
)

# After the environment above (noqa: E402); the tests import these names from here too (F401).
from tests.support import cpu, durations, forkserver, tiers  # noqa: E402
from tests.support import examples as _examples  # noqa: E402 (the hypothesis profiles)
from tests.support import processes as _processes  # noqa: E402
from tests.support.emulator import CREDENTIALS, REGION, RunningEmulator  # noqa: E402, F401
from tests.support.stock_moto import StockMoto  # noqa: E402

FULL_COLLECTIONS_EVERY = 100  # young collections of the middle generation (Python's default: 10)


def _interrupt(signum: int, frame: object) -> None:
    # A second SIGTERM ends the run at once, as SIGTERM did before: the teardown may be what hangs.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-durations",
        metavar="FILE",
        help="write each test's duration to FILE (tests/durations.json orders the parallel run)",
    )
    parser.addoption(
        "--store-cpu",
        metavar="FILE",
        help="write each test's CPU (the whole machine's, with -n 0) to FILE, and sum it by module",
    )


def pytest_configure(config: pytest.Config) -> None:
    """SIGTERM (a CI job's timeout, `kill`) stops the run as Ctrl+C does: pytest then tears the
    fixtures down, so no emulator, Lambda worker or `subprocess.run` child outlives the run.
    By default SIGTERM ends the process where it stands and fixture teardown never runs."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)
    if config.getoption("store_cpu"):
        cpu.configure(config, config.getoption("store_cpu"))
    store = config.getoption("store_durations")
    if store and not hasattr(config, "workerinput"):  # the controller gets every report
        config.pluginmanager.register(durations.Recorder(Path(store)), "store-durations")
    # A test process holds pytest, the collected suite and everything the tests import (Textual,
    # moto's models, hypothesis): half a million objects, which each of Python's full
    # collections walks. At the default pace they cost a fifth of a worker's CPU; one in ten
    # as many still picks up the apps' cycles.
    threshold = gc.get_threshold()
    gc.set_threshold(threshold[0], threshold[1], FULL_COLLECTIONS_EVERY)


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller, before it starts workers
        _examples.build_unicode_tables()
        _lend_fork_servers(session.config)


def _lend_fork_servers(config: pytest.Config) -> None:
    """The controller of a parallel run beyond the pure tier starts the fork servers once, and
    its workers borrow them (their environment names them): the tests' server of emulators and
    command lines (tests.support.forkserver.Lent), the fast `aws` and programs' servers of the
    labs (awsview.labs.fastcli.lent). Each worker started its own three, each importing moto,
    awscli or AWS View's checking code again (two CPU-seconds or so a server). Stopped when the
    controller exits, after its workers; what a server lost (killed) cannot take starts as a
    plain process."""
    if not getattr(config.option, "numprocesses", None) or tiers.guarding(config):
        return  # one process (its own servers, on first use), or the pure tier (none at all)
    os.environ.update(_processes.fast_cli(dict(os.environ)))
    os.environ.update(forkserver.lend())


def pytest_unconfigure(config: pytest.Config) -> None:
    """pytest's own cleanup, right after this, collects five times over, to report what a
    finalizer raised as the session ends. One collection here does that; what it leaves alive is
    frozen, so the other four do not each walk the whole session's heap again (the end of every
    worker waited on them)."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(tryfirst=True)  # before xdist reads the xdist_group marks it adds
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tiers.mark(items)


@pytest.fixture(autouse=True)
def _pure_tests_start_no_process(request: pytest.FixtureRequest) -> Iterator[None]:
    """When only the pure tier runs, a test tiered pure that starts a process fails at once,
    naming the fixture it should ask for: the tier would otherwise be a lie."""
    if not tiers.guarding(request.config) or request.node.get_closest_marker("pure") is None:
        yield
        return
    original = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(tiers.PURE_STARTED_A_PROCESS)

    subprocess.Popen._execute_child = refuse  # type: ignore[attr-defined]
    try:
        yield
    finally:
        subprocess.Popen._execute_child = original  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def spawn_emulator() -> Iterator[Callable[..., RunningEmulator]]:
    """Starts an emulator of its own with options (state directory, port) for a test or a
    fixture of any scope; the caller stops it, and whatever is still running stops at the end."""
    started: list[RunningEmulator] = []

    def spawn(state_dir: Path, port: int = 0) -> RunningEmulator:
        running = RunningEmulator(state_dir=Path(state_dir), port=port).start()
        started.append(running)
        return running

    yield spawn
    for running in started:
        running.stop()


@pytest.fixture(scope="session")
def played_lab(
    spawn_emulator: Callable[..., RunningEmulator], tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str, str], RunningEmulator]:
    """``played_lab(lab, until)``: an emulator of its own with the lab set up and played up to
    that step, started and played once per worker and shared by every test that asks for the
    same: those tests only read it (no write, no further step, no restart)."""
    played: dict[tuple[str, str], RunningEmulator] = {}

    def play(lab: str, until: str) -> RunningEmulator:
        if (lab, until) not in played:
            from awsview.labs.player import LabPlayer
            from tests.support.helpers import wait_for

            running = spawn_emulator(tmp_path_factory.mktemp(f"played-{lab}-{until}"))
            with LabPlayer(lab, endpoint_url=running.endpoint_url, log=lambda line: None) as player:
                player.setup()
                player.play(until=until)
            if (lab, until) == ("q05", "deploy"):
                # The step sends its message and returns; the worker writes the order a moment
                # later: every reader sees it written.
                orders = running.client("dynamodb")
                wait_for(
                    lambda: (
                        "Item"
                        in orders.get_item(
                            TableName="labex-q05-orders",
                            Key={"id": {"S": "dedup-order"}},
                            ConsistentRead=True,
                        )
                    ),
                    timeout=20,
                )
            played[(lab, until)] = running
        return played[(lab, until)]

    return play


@pytest.fixture(scope="session")
def stock_moto() -> Iterator[Callable[..., StockMoto]]:
    """Starts a stock moto server (tests.support.stock_moto) for a test or fixture of any scope;
    the caller stops it, and whatever is still running stops at the end."""
    started: list[StockMoto] = []

    def spawn(cwd: Path | None = None, timeout: float = 60.0) -> StockMoto:
        server = StockMoto(cwd=cwd, timeout=timeout)
        started.append(server)
        return server

    yield spawn
    for server in started:
        server.stop()


@pytest.fixture
def stock_moto_url(stock_moto: Callable[..., StockMoto], tmp_path: Path) -> Iterator[str]:
    """A stock moto server of the test's own (in its tmp_path, stopped after it): its URL."""
    server = stock_moto(cwd=tmp_path, timeout=30)
    yield server.url
    server.stop()


@pytest.fixture(scope="session")
def starts_processes() -> ModuleType:
    """For a test (or fixture) that starts child processes of its own (the AWS CLI, tmux, a
    browser, a wheel build): its tier is `process`. The helpers module, for convenience."""
    return _processes


@pytest.fixture(scope="session")
def awsview() -> Callable[..., subprocess.CompletedProcess]:
    """`python -m awsview ARGS` in a child process (tests.support.processes.awsview)."""
    return _processes.awsview


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningEmulator]:
    running = RunningEmulator(state_dir=tmp_path_factory.mktemp("emulator")).start()
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def _no_terminal_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """What `dump` fits to the terminal (COLUMNS) must not depend on the terminal the tests run
    in, nor on a library that exported its size mid-run (readline does, given a terminal)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC for the test: rendered clock times do not depend on the machine."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()
