"""What each test costs the machine in CPU: ``--store-cpu FILE`` (``make cpu``).

A test's cost is the machine's busy time while it runs (setup and teardown included), read from
/proc/stat: the emulators, the `awsview` and `aws` processes, the lab steps and the browser a test
starts count with it, which its own process's CPU time would leave out. That only holds when the
tests run one at a time on an otherwise idle machine: on one process (``-n 0``). A module's fixture
counts with the test that started it (its first) and the one that stopped it (its last).

What it tells: which modules to make cheaper when the suite must take less CPU (beside a second
run, two suites share the cores: neither can be faster than the CPU both need).
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from pathlib import Path

import pytest

SHOWN = 25  # modules in the summary


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy since it booted (all cores)."""
    with open("/proc/stat", encoding="ascii") as stat:
        fields = [int(n) for n in stat.readline().split()[1:9]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields) - idle) / os.sysconf("SC_CLK_TCK")


class Recorder:
    """Records each test's busy CPU, its own process's CPU and its wall time; writes them to
    ``path`` as ``{nodeid: [busy, own, wall]}`` and prints the costliest modules."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tests: dict[str, tuple[float, float, float]] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        busy, own, wall = busy_seconds(), time.process_time(), time.monotonic()
        yield
        self.tests[item.nodeid] = (
            busy_seconds() - busy,
            time.process_time() - own,
            time.monotonic() - wall,
        )

    def pytest_sessionfinish(self) -> None:
        rounded = {k: [round(v, 2) for v in costs] for k, costs in sorted(self.tests.items())}
        self.path.write_text(json.dumps(rounded, indent=1) + "\n", encoding="utf-8")

    def pytest_terminal_summary(self, terminalreporter) -> None:
        modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
        for nodeid, (busy, own, wall) in self.tests.items():
            module = modules[nodeid.split("::")[0]]
            module[0] += busy
            module[1] += own
            module[2] += wall
            module[3] += 1
        total = sum(costs[0] for costs in self.tests.values())
        write = terminalreporter.write_line
        terminalreporter.section(f"CPU: {total:.0f} s busy in {len(self.tests)} tests")
        write(f"{'busy s':>8} {'share':>6} {'own s':>7} {'wall s':>7} {'tests':>6}  module")
        for name, (busy, own, wall, count) in sorted(modules.items(), key=lambda m: -m[1][0])[
            :SHOWN
        ]:
            share = busy / total if total else 0.0
            write(f"{busy:8.1f} {share:6.1%} {own:7.1f} {wall:7.1f} {count:6d}  {name}")
        write(f"each test: {self.path}")


def configure(config: pytest.Config, path: str) -> None:
    """Registers the recorder; a usage error where its figures would mean nothing."""
    if not os.path.exists("/proc/stat"):
        raise pytest.UsageError("--store-cpu reads /proc/stat: Linux only")
    if getattr(config.option, "numprocesses", None) or hasattr(config, "workerinput"):
        raise pytest.UsageError(
            "--store-cpu counts the whole machine's CPU per test: run it on one process (-n 0)"
        )
    config.pluginmanager.register(Recorder(Path(path)), "store-cpu")
