"""A test's tier follows from the fixtures it uses (its whole fixture closure, so a module fixture
that plays a lab on the `emulator` fixture tiers every test that asks for it):

- ``soak``: marked ``soak`` (long runs under load, which they measure: they run beside the others);
- ``process``: starts child processes (the CLI, the AWS CLI, tmux, a browser, a wheel build);
- ``emulator``: talks to an emulator (or a stock moto server) in a process of its own;
- ``pure``: none of those: code in this interpreter only, a Textual app under ``run_test`` included.

An explicit ``@pytest.mark.process`` / ``emulator`` is the fallback where no fixture shows it.
Tests that must not share the machine (``serial``) run after the parallel ones.
"""

from __future__ import annotations

import pytest

from tests.support import durations

EMULATOR_FIXTURES = frozenset({"emulator", "spawn_emulator", "played_lab", "stock_moto"})
PROCESS_FIXTURES = frozenset({"starts_processes", "awsview", "tmux"})

PURE_STARTED_A_PROCESS = (
    "a test tiered `pure` started a process: ask for the fixture that starts it "
    "(`emulator`, `spawn_emulator`, `stock_moto`, `awsview` or `starts_processes`) so that its "
    "tier says so (tests/support/tiers.py)"
)


def tier_of(item: pytest.Item) -> str:
    if item.get_closest_marker("soak"):
        return "soak"
    used = set(getattr(item, "fixturenames", ()))
    if used & PROCESS_FIXTURES or item.get_closest_marker("process"):
        return "process"
    if used & EMULATOR_FIXTURES or item.get_closest_marker("emulator"):
        return "emulator"
    return "pure"


def _shares_a_fixture(item: pytest.Item) -> bool:
    """Whether the item uses a module- or class-scoped fixture: its module then stays on one
    worker, so that the fixture (an emulator, a played lab) starts once."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(
        defs and defs[-1].scope in ("module", "class", "package")
        for defs in info.name2fixturedefs.values()
    )


def mark(items: list[pytest.Item]) -> None:
    """Marks each item with its tier, keeps a module whose tests share a fixture on one xdist
    worker (unless a test names its own ``xdist_group``), and puts the longest work first
    (tests/support/durations.py) so that it starts first."""
    for item in items:
        item.add_marker(tier_of(item))
        # A group the test names itself (a module whose heavy tests need not wait for each other)
        # is kept: their module fixture then starts once in each of its groups.
        if _shares_a_fixture(item) and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
    durations.longest_first(items, tier_of, durations.recorded())


PURE_ONLY = frozenset({"pure", "pure and not serial", "pure and serial"})


def guarding(config: pytest.Config) -> bool:
    """Only the pure tier is selected (`make test-fast`): no test may start a process."""
    return " ".join(config.getoption("markexpr", "").split()) in PURE_ONLY
