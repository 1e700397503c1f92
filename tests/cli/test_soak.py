"""The fault soak of tests/soak.py for 30 s on the emulator and 30 s on stock moto (`make soak`
runs it for 30 minutes): the emulator killed and restarted, throttling, refused credentials,
slow answers and deletions while the viewers and the headless app poll. No crash, no error shown
as empty or absent, every panel live again within 5 s of a fault clearing (plus the event loop's
stalls); the same on stock moto behind a faulting proxy, every panel fresh within one poll
interval + 1 s.
"""

from __future__ import annotations

import os
import random
import re

import pytest
from soak import CHECK_EVERY_S, soak

# Bugs the soak found and that are not fixed yet, each matching only its own lines. Anything not
# listed here fails the test.
KNOWN: dict[str, re.Pattern[str]] = {
    "a lab re-run under the same execution names showed the earlier run's history; histories of "
    "executions that are gone are now dropped (awsview/polling/pollers/stepfunctions.py) — kept "
    "here until "
    "long soaks confirm the fix": re.compile(r"history shown \(\w+\) is an earlier run's"),
}


@pytest.mark.slow
@pytest.mark.soak
@pytest.mark.timeout(900)  # 30 s here; on a machine 10× slower, start-up and up to 90 s
# Both run beside the other tests: each bound counts the polls and event loop stalls of the same
# run (tests/soak.py), so a busy machine delays the bound with the readers. What a run must meet
# is its faults, not its minutes: the emulator's goes on until it injected five (its deck deals
# restart, throttling, credentials, deletion and slow answers each once before any again), stock
# moto's four (of six kinds). `make soak` is the long one.
@pytest.mark.parametrize(
    ("stock", "min_faults"),
    [pytest.param(False, 5, id="emulator"), pytest.param(True, 4, id="stock-moto")],
)
async def test_fault_soak(stock, min_faults):
    """On the emulator every panel live again within 5 s; on stock moto (polled, no change
    feed: `--stock`) every panel fresh again within one poll interval + 1 s."""
    seed = int(os.environ.get("SOAK_SEED") or random.randrange(1 << 30))
    report = await soak(
        30.0, seed=seed, app_lab="ev04", log=lambda _: None, min_faults=min_faults, stock=stock
    )
    print(report.text())
    # The checker covered the run from start to end, however fast this machine is: within one
    # round of it each way, a round being CHECK_EVERY_S plus the longest round and the longest
    # event loop stall measured in this run (a count of rounds held on one machine only: 99 of
    # the 100 it asked for on a slower one). The first round counts from the checker's own
    # start, a moment after start-up (a busy machine once made it 1.372 s against 1.350 s).
    period = CHECK_EVERY_S + max(report.round_s, default=0.0) + report.lag_max
    assert report.checker_start <= period, report.text()
    assert report.checks and report.first_check <= report.checker_start + period, report.text()
    assert report.last_check >= report.ran_s - 2 * period, report.text()
    assert report.injected >= min_faults or report.ran_s >= 3 * report.seconds - 1, report.text()
    assert report.recoveries, report.text()
    unknown = [
        line
        for line in report.crashes + report.violations
        if not any(pattern.search(line) for pattern in KNOWN.values())
    ]
    assert not unknown, report.text()
    seen = [
        bug
        for bug, pattern in KNOWN.items()
        if any(pattern.search(line) for line in report.crashes + report.violations)
    ]
    if seen:
        pytest.xfail("only known bugs: " + "; ".join(seen))


def test_a_lost_row_is_judged_against_the_probers_first_look_after_the_viewers():
    """The soak's own race, found under load: a sweep took 5–9 s, so a role the lab deleted and
    the viewer saw gone at once was judged only against the sweep before the deletion."""
    from soak import CONTAINER, Prober, Sweep

    def sweep(start: float, roles_at: float, roles: set[str]) -> Sweep:
        names = {
            "queues": frozenset(),
            "functions": frozenset(),
            "roles": frozenset(roles),
            "state_machines": frozenset(),
        }
        return Sweep(start, start + 8.0, names, {}, {}, frozenset(), {"roles": roles_at})

    prober = Prober.__new__(Prober)
    prober.deleted = []
    # Deleted at t=101; the viewer's snapshot without it at b=102; the prober listed roles at 88.1,
    # 100.1 (a slow sweep) and next at 108.2.
    before = sweep(80.0, 88.1, {"labex-ev05-role"})
    prober.sweeps = [before, sweep(100.0, 100.1, {"labex-ev05-role"}), sweep(108.0, 108.2, set())]
    assert prober.unexplained("roles", frozenset({"labex-ev05-role"}), 97.0, 102.0) == frozenset()
    # Still listed at the first look after the viewer's: it existed when the viewer said it did not.
    prober.sweeps = [
        before,
        sweep(100.0, 100.1, {"labex-ev05-role"}),
        sweep(108.0, 108.2, {"labex-ev05-role"}),
        sweep(116.0, 116.2, set()),
    ]
    assert prober.unexplained("roles", frozenset({"labex-ev05-role"}), 97.0, 102.0) == {
        "labex-ev05-role"
    }
    assert prober.unexplained("roles", frozenset({CONTAINER}), 97.0, 102.0) == {CONTAINER}


def test_a_snapshot_older_than_the_probers_first_look_is_not_judged():
    """The soak's own race, found under load: the lab's setup created a table in the run's first
    second, the viewer's first read had found it missing, and the prober's first sweep, late on
    a busy machine, saw it there: nothing said it existed when the viewer read."""
    from soak import CONTAINER, Prober, Sweep

    prober = Prober.__new__(Prober)
    prober.deleted = []
    tables = {"labex-q05-orders": frozenset()}
    prober.sweeps = [Sweep(35.7, 36.8, {}, {}, tables, frozenset(), {"tables": 36.7})]
    key = "table:labex-q05-orders"
    assert prober.unexplained(key, frozenset({CONTAINER}), 33.5, 36.5) is None
    # With a look before the viewer's answer that saw it, the same answer is a violation.
    prober.sweeps.insert(0, Sweep(32.0, 32.4, {}, {}, tables, frozenset(), {"tables": 32.2}))
    assert prober.unexplained(key, frozenset({CONTAINER}), 33.5, 36.5) == {CONTAINER}


def test_a_slow_poll_holds_the_recovery_bound_as_long_as_it_measurably_took(monkeypatch):
    """Beside a second `make test` a poll after a restart took 8.1 s, and the bound, which capped
    every poll at 5 s, called the recovery it held late. A poll that ended counts as long as it
    took after the fault cleared; one still running counts up to what the viewer lets a call take
    before it fails it, so a poll that never ends is still a violation."""
    import types

    import soak
    from soak import SLOW_POLL_ALLOWANCE_S, WatchedScheduler

    now = 1000.0
    monkeypatch.setattr(soak, "time", types.SimpleNamespace(monotonic=lambda: now))  # its clock
    watched = WatchedScheduler.__new__(WatchedScheduler)
    watched.in_flight = {}
    monkeypatch.setattr(WatchedScheduler, "registry", [watched])
    monkeypatch.setattr(WatchedScheduler, "since", 990.0)
    # Ended: 8.1 s after the fault cleared, counted in full.
    monkeypatch.setattr(WatchedScheduler, "slowest", 8.1)
    assert WatchedScheduler.longest_poll() == 8.1
    # Running for 30 s, begun 20 s before the fault cleared: 10 s of it held the recovery.
    monkeypatch.setattr(WatchedScheduler, "slowest", 0.0)
    watched.in_flight = {"roles": 970.0}
    assert WatchedScheduler.longest_poll() == 10.0
    # Running for 40 s since the fault cleared: past the viewer's own timeouts, capped there.
    monkeypatch.setattr(WatchedScheduler, "since", 960.0)
    assert WatchedScheduler.longest_poll() == SLOW_POLL_ALLOWANCE_S == 18.0


def test_a_short_run_short_of_its_faults_goes_on_only_until_it_has_them(monkeypatch):
    """A stock-moto soak of 30 s, one fault short as it neared its end, went on a whole minute
    (95 s of a test asked for 30). It goes on EXTEND_S at a time, room for one more fault; it ends
    at the first look that finds its minimum injected, and at three times its length regardless."""
    import types

    import soak
    from soak import EXTEND_S, Soak

    clock = types.SimpleNamespace(now=1000.0)
    monkeypatch.setattr(soak, "time", types.SimpleNamespace(monotonic=lambda: clock.now))
    run = Soak(30.0, seed=1, app_lab=None, min_faults=4)
    run.deadline = 1030.0  # began at 1000
    run.report.faults["throttle"] = 3
    clock.now = 1021.0  # before the last 8 s: inject on
    assert not run._done_injecting() and run.deadline == 1030.0
    clock.now = 1023.0  # the last 8 s, one fault short: on for one more
    assert not run._done_injecting()
    assert (run.deadline, run.extended) == (1030.0 + EXTEND_S, EXTEND_S)
    clock.now = 1024.0  # room for that fault now
    assert not run._done_injecting()
    run.report.faults["slow"] = 1
    clock.now = 1033.0  # it came: done, with no further extension
    assert run._done_injecting() and run.deadline == 1030.0 + EXTEND_S
    # Never more than three times its length, however few faults it managed.
    run.report.faults["slow"] = 0
    while not run._done_injecting():
        clock.now = run.deadline - 1
    assert run.deadline == 1090.0 and clock.now <= 1090.0
