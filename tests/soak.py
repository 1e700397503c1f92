"""Fault soak: headless viewers poll one embedded emulator while it is killed and restarted,
calls are throttled, credentials turn invalid or expired and resources are deleted mid-poll, and
the three labs play in between so data moves. Every 0.5 s the invariants are checked:

- no crash: no exception escapes a poller, every poll loop and the app stay alive;
- an error never shows as "absent" or "empty": a snapshot turns ABSENT, or loses rows, only when
  the resource really was gone — a boto3 prober the faults do not touch says so, or we deleted it;
  a panel that is stale or in error says so on the screen;
- OK data is never older than what the prober saw well before it was fetched;
- after each fault clears, every panel of every viewer is live again (or absent, or empty yet),
  measured from outside as `awsview dump` prints the panels, within RECOVERY_BOUND_S plus the
  event loop's stalls since and the longest poll since (a busy machine delays every reader
  alike): a poll that ended counts as long as it took, one still running up to
  SLOW_POLL_ALLOWANCE_S (the viewer's own call timeouts); p50 / p95 / max printed.

No bound is a wall-clock guess for one machine: how long a poll takes is measured in the same run
(the longest poll that ended since the fault cleared: right after a restart, a busy emulator
answered a state machine listing in 9.6 s), and so are the event loop's stalls and the prober's
pace (a row is judged lost only against the prober's first look after the viewer's).

    python -m tests.soak --minutes 30 [--seed N] [--app-lab ev04 | --no-app] [--busy N] [--stock]

``--busy N`` runs N CPU-burning processes beside it, to measure recovery on a busy machine.

``--stock`` soaks a polled backend instead: a stock moto server (no change feed), the viewers
behind a proxy that injects the same faults (tests/support/fault_proxy.py) plus refused
connections, the server itself killed or stopped and started again on its port (empty: stock
moto keeps its state in memory). There a panel is back when it is fresh (its last read
answered), and the bound is one poll interval + 1 s: the pacing that applies as the fault clears
(quiet.py: the active ceiling while the lab moves, the idle one when it does not; never less than
the local backoff a failing poller retries at), plus the event loop's stalls and the longest
poll, as on the emulator.

Prints the figures; exits 1 on any violation.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import random
import shutil
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from awsview import labspec
from awsview.aws.session import CONNECT_TIMEOUT_S, READ_TIMEOUT_S, Connection, Target
from awsview.core import render
from awsview.labs.player import LabPlayer
from awsview.model.snapshot import Health
from awsview.model.state import LabState
from awsview.polling.quiet import ACTIVE_CEILING_S, IDLE_CEILING_S
from awsview.polling.scheduler import LOCAL_MAX_BACKOFF_S, Scheduler

try:
    from tests.support.emulator import RunningEmulator  # `python -m tests.soak` from the checkout
    from tests.support.fault_proxy import fault_proxy
    from tests.support.processes import burning
    from tests.support.stock_moto import StockMoto
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.support.emulator import RunningEmulator
    from tests.support.fault_proxy import fault_proxy
    from tests.support.processes import burning
    from tests.support.stock_moto import StockMoto

PREFIX = "labex-"
LABS = ("q05", "ev04", "ev05")
CHECK_EVERY_S = 0.5
RECOVERY_BOUND_S = 5.0  # every panel live again this soon after a fault cleared
POLLED_SLACK_S = 1.0  # polled backend: every panel fresh within one poll interval and this
RECOVERY_STEP_S = 0.1  # how often recovery is looked at after a fault cleared
EXTEND_S = 10.0  # a short run short of its minimum of faults goes on this long at a time
# A poll that takes long (a busy machine: the first listing after a restart took 8.1 s beside a
# second `make test`) holds a recovery that long. A poll that ended counts as long as it took (a
# measured delay, not a guess); one still running counts up to what the viewer lets one call take
# (connect, then answer) before it fails it, so that a poll that never ends is still a violation.
SLOW_POLL_ALLOWANCE_S = CONNECT_TIMEOUT_S + READ_TIMEOUT_S
CALL_SLACK_S = 3.0  # how long before its snapshot a "does not exist" answer may have been given
CONTAINER = "<the resource itself>"
GONE = ("ResourceNotFoundException", "StateMachineDoesNotExist")
LISTS = ("queues", "functions", "roles", "state_machines")
UNTOUCHED = Config(retries={"max_attempts": 1}, connect_timeout=1, read_timeout=10)


# -- the truth: an unfaulted prober (boto3's User-Agent does not say aiobotocore) -------------


@dataclass(frozen=True)
class Sweep:
    start: float
    end: float
    names: dict[str, frozenset[str]]  # queues / functions / roles / state_machines
    executions: dict[str, dict[str, float]]  # machine → execution arn → start (epoch s)
    tables: dict[str, frozenset[tuple[str, ...]]]  # table → item keys
    groups: frozenset[str]
    looked: dict[str, float] = field(default_factory=dict)  # listing → when it was asked

    def looked_at(self, key: str) -> float:
        """When this sweep asked what ``key`` of a viewer's model holds (a sweep on a busy
        machine takes seconds, so its start says little about its later listings)."""
        kind, _, name = key.partition(":")
        if kind == "history":  # read with its machine's executions
            kind = "executions"
            key = f"executions:{name.split(':')[6] if name.count(':') >= 7 else ''}"
        # Its own listing, else the one that said it was not there.
        for asked in (
            key,
            {"executions": "state_machines", "table": "tables", "logs": "logs"}.get(kind),
        ):
            if asked in self.looked:
                return self.looked[asked]
        return self.start


class Prober(threading.Thread):
    """Lists the lab's resources every ``period`` seconds with plain boto3."""

    def __init__(self, endpoint_url: str, period: float = 0.3):
        super().__init__(name="soak-prober", daemon=True)
        self.period = period
        self.sweeps: list[Sweep] = []
        self.deleted: list[tuple[float, str]] = []  # (time, "*" or a model key) we made go away
        self.trace: list[tuple[float, str]] = []  # what happened when, to explain a violation
        self.halt = threading.Event()
        self._keys: dict[str, tuple[str, ...]] = {}
        kw = dict(
            endpoint_url=endpoint_url,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            config=UNTOUCHED,
        )
        self.c = {
            s: boto3.client(s, **kw)
            for s in ("sqs", "lambda", "iam", "stepfunctions", "dynamodb", "logs")
        }

    def run(self) -> None:
        failing = False
        while not self.halt.is_set():
            try:
                self.sweeps.append(self._sweep())
                del self.sweeps[:-4000]
                failing = False
            except Exception as exc:  # the emulator is down: the next sweep will do
                if not failing:
                    self.trace.append((time.time(), f"prober: {type(exc).__name__}"))
                failing = True
            self.halt.wait(self.period)

    def _sweep(self) -> Sweep:
        sqs, lam, iam = self.c["sqs"], self.c["lambda"], self.c["iam"]
        sfn, ddb, logs = self.c["stepfunctions"], self.c["dynamodb"], self.c["logs"]
        start = time.time()
        looked: dict[str, float] = {}

        def now(listing: str) -> None:
            looked[listing] = time.time()

        now("queues")
        queues = sqs.list_queues(QueueNamePrefix=PREFIX).get("QueueUrls", [])
        now("functions")
        functions = [
            f["FunctionName"]
            for page in lam.get_paginator("list_functions").paginate()
            for f in page["Functions"]
        ]
        now("roles")
        roles = [
            r["RoleName"]
            for page in iam.get_paginator("list_roles").paginate()
            for r in page["Roles"]
        ]
        now("state_machines")
        machines = {
            m["name"]: m["stateMachineArn"]
            for m in sfn.list_state_machines()["stateMachines"]
            if m["name"].startswith(PREFIX)
        }
        executions = {}
        for name, arn in machines.items():
            now(f"executions:{name}")
            listed = _unless_gone(
                lambda arn=arn: sfn.list_executions(stateMachineArn=arn, maxResults=1000)
            )
            if listed is not None:  # deleted since the listing: absent, as it is
                executions[name] = {
                    e["executionArn"]: e["startDate"].timestamp() for e in listed["executions"]
                }
        tables = {}
        now("tables")
        for name in (n for n in ddb.list_tables()["TableNames"] if n.startswith(PREFIX)):
            if name not in self._keys:
                described = _unless_gone(lambda name=name: ddb.describe_table(TableName=name))
                if described is None:
                    continue
                schema = sorted(
                    described["Table"]["KeySchema"], key=lambda k: k["KeyType"] != "HASH"
                )
                self._keys[name] = tuple(k["AttributeName"] for k in schema)
            now(f"table:{name}")
            pages = _unless_gone(
                lambda name=name: list(ddb.get_paginator("scan").paginate(TableName=name))
            )
            if pages is not None:
                tables[name] = frozenset(
                    _item_key(item, self._keys[name]) for page in pages for item in page["Items"]
                )
        self._keys = {k: v for k, v in self._keys.items() if k in tables}
        now("logs")
        groups = logs.describe_log_groups(logGroupNamePrefix=f"/aws/lambda/{PREFIX}")["logGroups"]
        return Sweep(
            start,
            time.time(),
            {
                "queues": frozenset(u.rsplit("/", 1)[-1] for u in queues),
                "functions": frozenset(f for f in functions if f.startswith(PREFIX)),
                "roles": frozenset(r for r in roles if r.startswith(PREFIX)),
                "state_machines": frozenset(machines),
            },
            executions,
            tables,
            frozenset(g["logGroupName"] for g in groups),
            looked,
        )

    def yardstick(self, calls: int = 20) -> float:
        """A plain emulator call (ListQueues), median in ms: what this machine gives right now."""
        took = []
        for _ in range(calls):
            started = time.perf_counter()
            self.c["sqs"].list_queues(QueueNamePrefix=PREFIX)
            took.append((time.perf_counter() - started) * 1000)
        return sorted(took)[calls // 2]

    def caught_up(self, at: float) -> bool:
        return bool(self.sweeps) and self.sweeps[-1].start > at

    def unexplained(self, key: str, lost: frozenset, a: float, b: float) -> frozenset | None:
        """Of ``lost`` (identities under ``key``, or CONTAINER), those the prober never saw gone
        from its last look before ``a`` to its first look after ``b`` (the viewer's snapshot):
        present in each of those looks, they existed when the viewer said they did not. The window
        ends with the prober's own pace, not a fixed second: on a busy machine a sweep takes
        seconds, and a deletion the viewer saw at once was judged against the sweep before it.
        None: the prober had not looked before ``a`` (the run's first seconds, its first sweep
        slow on a busy machine), so it cannot say what was there then."""
        for t, what in self.deleted:  # gone from then until the prober sees it again
            if what in ("*", key) and t <= b + 0.5 and a < self._back(key, t):
                return frozenset()
        first = self._last_before(a)
        if first < 0:
            return None
        left = set(lost)
        for sweep in self.sweeps[first:]:
            present = _present(sweep, key)
            if present is None:
                return frozenset()
            if present is not ANY:
                left = {x for x in left if x == CONTAINER or x in present}
            if not left or sweep.looked_at(key) > b:
                break  # all explained, or this was the first look after the viewer's
        return frozenset(left)

    def _last_before(self, a: float) -> int:
        """The index of the last sweep that ended before ``a`` (-1: none did)."""
        return bisect.bisect_left([s.end for s in self.sweeps], a) - 1

    def looks(self, key: str, a: float, b: float) -> str:
        """How ``key``'s snapshot from ``a`` to ``b`` was judged, to explain a violation: the
        sweeps judged (start, look, end; there or absent) and the deletions weighed (when, and
        when the prober saw the resource again)."""
        judged = []
        for s in self.sweeps[max(0, self._last_before(a)) :][:12]:
            there = "absent" if _present(s, key) is None else "there"
            judged.append(f"{_clock(s.start)}/{_clock(s.looked_at(key))}/{_clock(s.end)} {there}")
            if s.looked_at(key) > b:
                break
        weighed = [
            f"{what} at {_clock(t)}, back "
            + (_clock(back) if (back := self._back(key, t)) != float("inf") else "never")
            for t, what in self.deleted
            if what in ("*", key) and a - 30 <= t <= b + 0.5
        ]
        return (
            f"sweeps (start/look/end) {', '.join(judged) or 'none'}; "
            f"deletions {', '.join(weighed) or 'none'}"
        )

    def _back(self, key: str, since: float) -> float:
        """When the prober first saw ``key`` exist again after ``since`` (a sweep that began while
        the emulator was down may end long after it came back: its end is when it saw)."""
        starts = [s.start for s in self.sweeps]
        for sweep in self.sweeps[bisect.bisect_right(starts, since) :]:
            if _present(sweep, key) is not None:
                return sweep.end
        return float("inf")

    def started(self, arn: str, before: float) -> float | None:
        """An execution's start time in the newest sweep finished before ``before``."""
        machine = arn.split(":")[6] if arn.count(":") >= 7 else ""
        for sweep in reversed(self.sweeps):
            if sweep.end < before:
                return sweep.executions.get(machine, {}).get(arn)
        return None


ANY = frozenset({"<any>"})  # the resource exists; which rows it has is not tracked


def _unless_gone(call: Any) -> Any:
    """The call's answer, or None when it says the resource does not exist."""
    from botocore.exceptions import ClientError

    try:
        return call()
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in GONE:
            return None
        raise


def _item_key(item: dict[str, Any], names: tuple[str, ...]) -> tuple[str, ...]:
    """A wire-format item's key as the viewer's Table rows name it."""
    return tuple(str(next(iter(item[k].values()), "")) if k in item else "" for k in names)


def _present(sweep: Sweep, key: str) -> frozenset | None:
    """What ``key`` of a viewer's model held in this sweep; None: it did not exist."""
    kind, _, name = key.partition(":")
    if key in LISTS:
        return sweep.names[key]
    if kind == "executions":
        runs = sweep.executions.get(name)
        return None if runs is None else frozenset(runs)
    if kind == "history":
        machine = name.split(":")[6] if name.count(":") >= 7 else ""
        return ANY if name in sweep.executions.get(machine, {}) else None
    if kind == "table":
        return sweep.tables.get(name)
    if kind == "logs":
        return ANY if name in sweep.groups else None
    return ANY  # the journal, the timeline: always there on the emulator


def identities(key: str, data: Any) -> frozenset | None:
    """The rows of a snapshot's data, by identity; None for kinds not tracked."""
    kind = key.partition(":")[0]
    if data is None:
        return None
    if key in LISTS:
        return frozenset(x.name for x in data)
    if kind == "executions":
        return frozenset(e.arn for e in data)
    if kind == "table":
        return frozenset(tuple(str(i.get(k, "")) for k in data.key_names) for i in data.items)
    if kind == "logs":
        return frozenset(e.event_id for e in data.lines)
    if kind == "history":
        return frozenset(e.id for e in data.history.events)
    return None


# -- the viewers --------------------------------------------------------------------------


class WatchedScheduler(Scheduler):
    """A Scheduler that reports what escapes a poller (the real one swallows it to go on)."""

    registry: list[WatchedScheduler] = []
    since: float = 0.0  # when the soak last reset the figure below (monotonic)
    slowest: float = 0.0  # the longest poll that ended since then, counted from then, in seconds

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.escaped: list[str] = []
        self.completed: dict[str, float] = {}  # poller kind → start of its last finished poll
        self.in_flight: dict[
            str, float
        ] = {}  # poller kind → when its running poll began (monotonic)
        WatchedScheduler.registry.append(self)

    async def poll(self, poller):
        started = time.time()
        self.in_flight[poller.kind] = began = time.monotonic()
        try:
            result = await super().poll(poller)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.escaped.append(f"{poller.kind}: {type(exc).__name__}: {exc}")
            self.completed[poller.kind] = started
            raise
        finally:
            self.in_flight.pop(poller.kind, None)
            took = time.monotonic() - max(began, WatchedScheduler.since)
            WatchedScheduler.slowest = max(WatchedScheduler.slowest, took)
        self.completed[poller.kind] = started
        return result

    @classmethod
    def longest_poll(cls) -> float:
        """The longest poll since the last reset, counted from the reset (what it held a
        recovery): one that ended as long as it took, one still running as far as now but no more
        than SLOW_POLL_ALLOWANCE_S."""
        now = time.monotonic()
        running = [
            now - max(began, cls.since) for s in cls.registry for began in s.in_flight.values()
        ]
        return max(cls.slowest, min(max(running, default=0.0), SLOW_POLL_ALLOWANCE_S))

    def left_behind(self, snapshot: Any, since: float) -> bool:
        """True if a poll of its kind started after both ``since`` and its last attempt, and
        finished without touching it: nothing polls it any more."""
        return self.completed.get(snapshot.kind, 0.0) > max(since, snapshot.attempted_at)


@dataclass
class Seen:
    health: Health
    rows: frozenset | None
    fetched_at: float | None
    attempted_at: float


@dataclass
class Viewer:
    name: str
    profile: labspec.LabSpec
    model: LabState
    scheduler: WatchedScheduler | None = None
    seen: dict[str, Seen] = field(default_factory=dict)


@dataclass
class Pending:
    due: float
    viewer: str
    key: str
    what: str
    lost: frozenset
    a: float
    b: float
    said: str = ""  # the viewer's answer (an ABSENT snapshot's note), to explain a violation


@dataclass
class Report:
    seconds: float
    seed: int
    app: str
    faults: Counter = field(default_factory=Counter)
    checks: int = 0
    snapshot_checks: int = 0
    panel_checks: int = 0
    screen_checks: int = 0
    steps: int = 0
    lab_errors: int = 0
    recoveries: list[float] = field(default_factory=list)
    bounds: list[float] = field(default_factory=list)
    censored: int = 0
    violations: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)
    suspects: int = 0  # rows lost or ABSENT answers, each checked against the prober
    unverified: int = 0  # suspects the prober could not judge (it saw nothing around them)
    trace: list[tuple[float, str]] = field(default_factory=list)
    kept: str = ""  # the emulator's state directory, kept when something failed
    moments: list[float] = field(default_factory=list)  # when each violation happened
    orphans: set[str] = field(default_factory=set)
    calls: int = 0
    lag_max: float = 0.0
    lag_since_fault: float = 0.0  # the longest event loop stall since the last fault cleared
    startup_s: float = 0.0  # emulator, prober, viewers and app started (not counted in seconds)
    ran_s: float = (
        0.0  # the seconds it ran, longer than asked if it needed more to inject its minimum
    )
    first_check: float = 0.0  # seconds after start-up
    checker_start: float = 0.0  # when the checker itself began, seconds after start-up
    last_check: float = 0.0
    round_s: list[float] = field(default_factory=list)  # what each check round itself took
    polls_after: list[float] = field(
        default_factory=list
    )  # per fault: longest poll after it cleared
    yardstick_ms: float = 0.0  # a plain emulator call (ListQueues), median, quiet start
    sweep_s: list[float] = field(default_factory=list)  # the prober's sweeps
    busy: int = 0  # CPU-burning processes run beside the soak
    stock: bool = False  # a polled backend (stock moto behind a faulting proxy)

    @property
    def checking_s(self) -> float:
        return self.last_check - self.first_check

    @property
    def injected(self) -> int:
        return sum(n for kind, n in self.faults.items() if "/" not in kind)

    def violate(self, text: str, at: float | None = None) -> None:
        if text not in self.violations:
            self.violations.append(text)
            self.moments.append(time.time() if at is None else at)

    def text(self) -> str:
        def pct(q: float) -> float:
            ordered = sorted(self.recoveries)
            return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0

        kinds = []
        for kind in sorted(k for k in self.faults if "/" not in k):
            detail = ", ".join(
                f"{k.split('/', 1)[1]} {n}"
                for k, n in sorted(self.faults.items())
                if k.startswith(f"{kind}/")
            )
            kinds.append(f"{kind} {self.faults[kind]}" + (f" ({detail})" if detail else ""))
        back = (
            f"every panel fresh again (n={len(self.recoveries)}"
            if self.stock
            else f"every panel live again (n={len(self.recoveries)}"
        )
        bound = (
            f"one poll interval + {POLLED_SLACK_S:.0f} s"
            if self.stock
            else f"{RECOVERY_BOUND_S:.0f} s"
        ) + (
            " + event loop lag and longest poll (one still running: up to"
            f" {SLOW_POLL_ALLOWANCE_S:.0f} s) since the fault cleared"
        )
        lines = [
            f"AWS View fault soak{' (stock moto, polled)' if self.stock else ''}:"
            f" {self.seconds:.0f} s"
            + (
                f" (ran {self.ran_s:.0f} s to inject its minimum of faults)"
                if self.ran_s > self.seconds + 1
                else ""
            )
            + f", seed {self.seed}, app: {self.app}",
            f"faults injected: {self.injected}: " + (" · ".join(kinds) or "none"),
            f"lab steps played: {self.steps} ({self.lab_errors} broken by faults or deletions)",
            f"checks: {self.checks} rounds · {self.snapshot_checks} snapshots · "
            f"{self.panel_checks} "
            f"rendered panels · {self.screen_checks} app panels; viewer API calls {self.calls}",
            f"event loop lag max {self.lag_max * 1000:.0f} ms · a check round p50 / max "
            f"{_q(self.round_s, 0.5) * 1000:.0f} / {max(self.round_s, default=0) * 1000:.0f} ms · "
            f"checked {self.checking_s:.0f} s of {max(self.ran_s, self.seconds):.0f} (start-up "
            f"{self.startup_s:.1f} s, "
            f"not counted)",
            "yardstick: a plain emulator call "
            f"{self.yardstick_ms:.1f} ms (median, before the labs); "
            f"prober sweep p50 / max {_q(self.sweep_s, 0.5):.2f} / "
            f"{max(self.sweep_s, default=0):.2f} s; "
            f"longest poll after a fault cleared p50 / max {_q(self.polls_after, 0.5):.2f} / "
            f"{max(self.polls_after, default=0):.2f} s",
            f"recovery after a fault cleared, {back}, {self.censored} cut off by the"
            f" end): p50 {pct(0.5):.2f} s, p95 {pct(0.95):.2f} s, max "
            f"{max(self.recoveries, default=0):.2f}"
            f" s; bound {bound}: min / max "
            f"{min(self.bounds, default=0):.1f} / {max(self.bounds, default=0):.1f} s"
            + (f"; {self.busy} CPU-burning processes beside it" if self.busy else ""),
            "snapshots their poller stopped revisiting (a finding, not counted): "
            f"{len(self.orphans)}"
            + (f", e.g. {'; '.join(sorted(self.orphans)[:3])}" if self.orphans else ""),
            f"crashes: {len(self.crashes)}   violations: {len(self.violations)}",
        ]
        lines.append(
            f"rows lost / ABSENT answers checked against the prober: {self.suspects}"
            f" ({self.unverified} it could not judge: at the start, at the end or while it was"
            " down)"
        )
        if self.kept:
            lines.append(f"emulator state and log kept in {self.kept}")
        lines += [f"  CRASH {c}" for c in self.crashes[:20]]
        lines += [f"  VIOLATION {v}" for v in self.violations[:40]]
        near = sorted(
            {entry for at in self.moments[:10] for entry in self.trace if -20 < entry[0] - at < 8}
        )
        if near:
            lines.append("what happened around the violations:")
            lines += [f"  {_clock(t)} {what}" for t, what in near]
        return "\n".join(lines)


class Soak:
    def __init__(
        self,
        seconds: float,
        seed: int,
        app_lab: str | None,
        log=print,
        min_faults: int = 0,
        stock: bool = False,
    ):
        self.seconds = seconds
        self.stock = stock
        self.moto: StockMoto | None = None
        self.min_faults = min_faults  # a short run goes on until it injected this many (up to 3×)
        self.rng = random.Random(seed)
        self.app_lab = app_lab
        self.log = log
        self.report = Report(seconds, seed, app_lab or "off", stock=stock)
        self.viewers: list[Viewer] = []
        self.pending: list[Pending] = []
        self.emulator: RunningEmulator | None = None
        self.prober: Prober | None = None
        self.up = threading.Event()
        self.stopping = threading.Event()
        self.app: Any = None
        self.deadline = 0.0

    # -- the run ------------------------------------------------------------------------

    async def run(self) -> Report:
        began = time.monotonic()
        self.deadline = began + self.seconds + 600  # set again once everything runs
        state = Path(tempfile.mkdtemp(prefix="awsview-soak-"))
        self.faults = state / "faults.json"
        outer = AsyncExitStack()
        if self.stock:
            self.moto = StockMoto()
            outer.callback(self.moto.stop)
            self.backend_url = self.moto.url
            self.viewer_url = outer.enter_context(fault_proxy(self.moto.port, self.faults))
        else:
            self.emulator = RunningEmulator(state_dir=state).start()
            outer.callback(self.emulator.stop)
            self.backend_url = self.viewer_url = self.emulator.endpoint_url
        self.up.set()
        self.prober = Prober(self.backend_url)
        self.report.yardstick_ms = self.prober.yardstick()
        self.prober.start()
        loop = asyncio.get_running_loop()
        previous_handler = loop.get_exception_handler()
        loop.set_exception_handler(
            lambda _, ctx: self._crash(f"event loop: {ctx.get('message')} {ctx.get('exception')!r}")
        )
        WatchedScheduler.registry.clear()
        lab = threading.Thread(target=self._play_labs, name="soak-labs", daemon=True)
        lab.start()
        try:
            async with AsyncExitStack() as stack:
                target = Target(endpoint_url=self.viewer_url)
                for name in (*LABS, "generic"):  # one viewer per lab, and one of all labex-*
                    profile = (
                        labspec.generic_spec(PREFIX) if name == "generic" else labspec.load(name)
                    )
                    conn = await stack.enter_async_context(Connection(target))
                    scheduler = WatchedScheduler(conn, profile)
                    self.viewers.append(Viewer(name, profile, scheduler.model, scheduler))
                    scheduler.start()
                    stack.push_async_callback(scheduler.stop)
                    stack.callback(self._count_calls, conn)
                if self.app_lab:
                    await self._start_app(stack, target)
                # The soak's seconds count from here: a slow start-up must not eat its checks.
                self.deadline = time.monotonic() + self.seconds
                self.report.startup_s = time.monotonic() - began
                checker = asyncio.create_task(self._check_forever())
                try:
                    await self._inject()
                finally:
                    checker.cancel()
                    await asyncio.gather(checker, return_exceptions=True)
                settle = time.monotonic() + 3.0
                while self.pending and time.monotonic() < settle:
                    await asyncio.sleep(0.25)  # let the prober catch up with the last suspects
                    self._resolve()
                self._resolve(final=True)
                self._alive()
        finally:
            loop.set_exception_handler(previous_handler)
            self.stopping.set()
            self.prober.halt.set()
            self.report.trace = list(self.prober.trace)
            self.report.sweep_s = [sweep.end - sweep.start for sweep in self.prober.sweeps]
            self._clear_faults()
            await outer.aclose()
            lab.join(timeout=1)  # a step in flight fails fast now; the thread is a daemon anyway
            if self.report.crashes or self.report.violations:
                self.report.kept = str(state)  # the emulator's log and journal, to look into
            else:
                shutil.rmtree(state, ignore_errors=True)
        return self.report

    async def _start_app(self, stack: AsyncExitStack, target: Target) -> None:
        try:
            import awsview.polling.live as live
            from awsview.ui.viewer.app import AWSViewApp
        except Exception as exc:  # the UI is optional here; say so instead of failing
            self.report.app = f"unavailable ({type(exc).__name__}: {exc})"
            return
        original = live.Scheduler
        live.Scheduler = WatchedScheduler
        stack.callback(setattr, live, "Scheduler", original)
        self.app = AWSViewApp(target=target, lab=self.app_lab)
        await stack.enter_async_context(self._guarded(self.app.run_test(size=(200, 60))))
        self.report.app = f"AWSViewApp({self.app_lab}) headless"

    @asynccontextmanager
    async def _guarded(self, running: Any) -> AsyncIterator[Any]:
        """The app's own exception comes out when its test harness closes: a crash, reported."""
        try:
            async with running as pilot:
                yield pilot
        except Exception as exc:
            self._crash(f"app: {_where(exc)}")

    def _app_viewer(self) -> Viewer | None:
        app = self.app
        if app is None or app.model is None or app.profile is None:
            return None
        for viewer in self.viewers:
            if viewer.model is app.model:
                return viewer
        scheduler = next((s for s in WatchedScheduler.registry if s.model is app.model), None)
        viewer = Viewer("app", app.profile, app.model, scheduler)
        self.viewers.append(viewer)
        return viewer

    # -- faults ---------------------------------------------------------------------------

    async def _inject(self) -> None:
        await asyncio.sleep(min(4.0, self.seconds / 6))  # let the viewers see the labs first
        deck: list[str] = []
        while not self._done_injecting():
            if not deck:  # every kind once per deck, in a random order, so short runs see them all
                deck = ["restart", "throttle", "credentials", "delete", "slow"]
                if self.stock:
                    deck.append("refuse")
                self.rng.shuffle(deck)
            kind = deck.pop()
            if kind == "delete":
                await asyncio.to_thread(self._delete_something)
            else:
                await self._episode(kind)
            await asyncio.sleep(self.rng.uniform(0.5, 2.5))
        while time.monotonic() < self.deadline:
            await asyncio.sleep(0.25)
        self.report.ran_s = time.monotonic() - (self.deadline - self.seconds - self.extended)

    extended = 0.0  # seconds the run went on past its own to inject its minimum of faults

    def _done_injecting(self) -> bool:
        """Time is up, 8 s before the end so the last fault can clear — unless the run has not
        injected its minimum yet: on a machine slow enough that one restart takes half a minute,
        a short run goes on (EXTEND_S at a time, enough for one more fault, up to three times its
        length) rather than passing having tested next to nothing; it ends once it has."""
        now = time.monotonic()
        if now < self.deadline - 8:
            return False
        zero = self.deadline - self.seconds - self.extended
        if self.report.injected >= self.min_faults or now - zero >= 3 * self.seconds:
            return True
        more = min(EXTEND_S, zero + 3 * self.seconds - self.deadline)
        self.deadline += more
        self.extended += more
        return more <= 0

    async def _episode(self, kind: str) -> None:
        hold = self.rng.uniform(1.0, 5.0)
        if kind == "restart":
            how = self.rng.choice(("kill", "terminate"))
            self.report.faults["restart"] += 1
            self.report.faults[f"restart/{how}"] += 1
            self.up.clear()
            self._trace(f"emulator {how}ed")
            await asyncio.to_thread(self._stop_emulator, how)
            self.prober.deleted.append((time.time(), "*"))  # its resources live in memory
            await asyncio.sleep(hold)
            await asyncio.to_thread(self._start_emulator)
            self._trace("emulator listening again")
            self.up.set()
        else:
            config: dict[str, Any]
            if kind == "throttle":
                config = {"throttle": round(self.rng.uniform(0.3, 1.0), 2)}
            elif kind == "refuse":
                config = {"refuse": True}
            elif kind == "credentials":
                which = self.rng.choice(("expired", "invalid"))
                config = {"credentials": which}
                self.report.faults[f"credentials/{which}"] += 1
            else:
                config = {"delay_ms": self.rng.choice((200, 500, 1200))}
            self.report.faults[kind] += 1
            self._write_faults(config)
            self._trace(f"fault {config}")
            await asyncio.sleep(hold / 2)
            if self.rng.random() < 0.3:  # a resource goes while the viewer cannot see
                await asyncio.to_thread(self._delete_something)
            await asyncio.sleep(hold / 2)
            self._clear_faults()
            self._trace("fault cleared")
        cleared = time.monotonic()
        cleared_at = time.time()
        backoff = 0.0
        interval = self._poll_interval()
        self.report.lag_since_fault = 0.0
        WatchedScheduler.since = cleared  # polls ending from now on, those in flight included
        WatchedScheduler.slowest = 0.0
        while True:
            backoff = max(backoff, self._backoff_in_effect())
            waiting = self._not_recovered(cleared_at)
            took = time.monotonic() - cleared
            poll = WatchedScheduler.longest_poll()
            # A stalled event loop or a slow poll (a busy machine) delays recovery: slack, not a
            # fault.
            bound = (
                (interval + POLLED_SLACK_S if self.stock else RECOVERY_BOUND_S)
                + self.report.lag_since_fault
                + poll
                + RECOVERY_STEP_S
            )
            if not waiting:
                self.report.recoveries.append(took)
                self.report.bounds.append(bound)
                self.report.polls_after.append(poll)
                return
            if time.monotonic() > self.deadline:
                self.report.censored += 1
                return
            if took > bound:
                self.report.violate(
                    f"{kind}: not recovered {took:.1f} s after the fault cleared (bound"
                    f" {bound:.1f} s, backoff"
                    f" in effect {backoff:.1f} s, longest poll {poll:.1f} s, event loop lag"
                    f" {self.report.lag_since_fault:.1f} s): " + ", ".join(sorted(waiting)[:6])
                )
                self.report.recoveries.append(took)
                self.report.bounds.append(bound)
                self.report.polls_after.append(poll)
                return
            await asyncio.sleep(RECOVERY_STEP_S)

    def _count_calls(self, conn: Connection) -> None:
        self.report.calls += sum(conn.limiter.calls.values())

    def _trace(self, what: str) -> None:
        self.prober.trace.append((time.time(), what))

    def _poll_interval(self) -> float:
        """Polled: how long a panel may wait for its next read as a fault clears — the pacing
        that applies then (quiet.py: the active ceiling while a viewer's lab moves, the idle one
        when none does), and never less than the local backoff a failing poller retries at."""
        moving = any(v.model.recently_changed() for v in self.viewers)
        pacing = ACTIVE_CEILING_S if moving else IDLE_CEILING_S
        return max(pacing, LOCAL_MAX_BACKOFF_S, self._backoff_in_effect())

    def _backoff_in_effect(self) -> float:
        schedulers = [v.scheduler for v in self.viewers if v.scheduler is not None]
        return max(
            (max(s._backoff.values(), default=0.0) * s.speed for s in schedulers), default=0.0
        )

    def _not_recovered(self, cleared_at: float) -> set[str]:
        """The panels not live again (nor absent, nor empty yet), from outside: as `awsview
        dump` prints them. Snapshots no poller revisits are noted on the way (a finding)."""
        waiting = set()
        for viewer in self.viewers:
            for key, s in list(viewer.model.snapshots.items()):
                if s.health in (Health.OK, Health.ABSENT):
                    continue
                if viewer.scheduler is not None and viewer.scheduler.left_behind(s, cleared_at):
                    self.report.orphans.add(f"{viewer.name} {key} ({s.health.value})")
            for p in render.panels(viewer.model, viewer.profile):
                if p.health in ("absent", "none") or (
                    p.health == "ok" and (self.stock or p.freshness == "live")
                ):
                    continue
                waiting.add(
                    f"{viewer.name} {p.name}{':' if p.subject else ''}{p.subject}: {p.freshness}"
                )
        return waiting

    def _write_faults(self, config: dict[str, Any]) -> None:
        spare = self.faults.with_suffix(".tmp")
        spare.write_text(json.dumps(config))
        spare.replace(self.faults)

    def _clear_faults(self) -> None:
        self.faults.unlink(missing_ok=True)

    def _stop_emulator(self, how: str) -> None:
        if self.moto is not None:
            if how == "kill":
                self.moto.process.kill()
                self.moto.process.wait()
            else:
                self.moto.stop()
            return
        process = self.emulator.process
        if how == "kill":
            process.kill()
            process.wait()
        else:
            self.emulator.stop()
        for pipe in (process.stdout, process.stderr):
            pipe.close()

    def _start_emulator(self) -> None:
        deadline = time.monotonic() + 15
        while True:
            try:
                if self.moto is not None:
                    self.moto.start_again()
                else:
                    self.emulator.start()
                return
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def _delete_something(self) -> None:
        sqs, ddb, logs, sfn = (
            self.prober.c[n] for n in ("sqs", "dynamodb", "logs", "stepfunctions")
        )
        choices = []
        try:
            for url in sqs.list_queues(QueueNamePrefix=PREFIX).get("QueueUrls", []):
                choices.append(("queue", "queues", lambda u=url: sqs.delete_queue(QueueUrl=u)))
            for name in (n for n in ddb.list_tables()["TableNames"] if n.startswith(PREFIX)):
                choices.append(
                    ("table", f"table:{name}", lambda n=name: ddb.delete_table(TableName=n))
                )
            for group in logs.describe_log_groups(logGroupNamePrefix=f"/aws/lambda/{PREFIX}")[
                "logGroups"
            ]:
                name = group["logGroupName"]
                choices.append(
                    (
                        "log group",
                        f"logs:{name}",
                        lambda n=name: logs.delete_log_group(logGroupName=n),
                    )
                )
            for m in sfn.list_state_machines()["stateMachines"]:
                if m["name"].startswith(PREFIX):
                    choices.append(
                        (
                            "state machine",
                            f"executions:{m['name']}",
                            lambda a=m["stateMachineArn"]: sfn.delete_state_machine(
                                stateMachineArn=a
                            ),
                        )
                    )
            if not choices:
                return
            what, key, delete = self.rng.choice(choices)
            self.prober.deleted.append((time.time(), key))
            self._trace(f"deleting {key}")
            delete()
            self.report.faults["delete"] += 1
            self.report.faults[f"delete/{what}"] += 1
        except Exception:
            pass  # the emulator went down meanwhile; nothing was deleted

    # -- the labs, so data moves ----------------------------------------------------------

    def _play_labs(self) -> None:
        index = 0
        while not self.stopping.is_set():
            self.up.wait()
            lab = LABS[index % len(LABS)]
            index += 1
            player = LabPlayer(lab, endpoint_url=self.backend_url, log=lambda s: None)
            try:
                self._trace(f"lab {lab} setup")
                player.setup()
                for step in player.lab.steps:
                    if self.stopping.is_set():
                        return
                    self._trace(f"lab {lab} {step.key}")
                    player.play(only=step.key)
                    self._trace(f"lab {lab} {step.key} done")
                    self.report.steps += 1
                    self.stopping.wait(self.rng.uniform(0.5, 4.0))  # the viewers see each state
            except Exception as exc:
                self.report.lab_errors += 1
                self._trace(f"lab {lab} broken: {str(exc)[:100]}")
                self.up.wait()
                try:
                    player.clean()
                except Exception:
                    pass

    # -- invariants -----------------------------------------------------------------------

    async def _check_forever(self) -> None:
        started = time.monotonic()
        zero = self.deadline - self.seconds
        self.report.checker_start = started - zero  # its task starts a moment after start-up
        while True:
            before = time.monotonic()
            try:
                await asyncio.sleep(CHECK_EVERY_S)
            except asyncio.CancelledError:
                # The run's end: a stall in this last sleep (the event loop held on a busy
                # machine) counts too, or the checker's coverage is judged without it.
                late = time.monotonic() - before - CHECK_EVERY_S
                self.report.lag_max = max(self.report.lag_max, late)
                raise
            lag = time.monotonic() - before - CHECK_EVERY_S
            self.report.lag_max = max(self.report.lag_max, lag)
            self.report.lag_since_fault = max(self.report.lag_since_fault, lag)
            round_began = time.monotonic()
            try:
                self._check()
            except Exception as exc:  # the checker must not die quietly: that would pass anything
                self._crash(f"soak checker: {_where(exc)} {traceback.format_exc(limit=-2)}")
            self.report.round_s.append(time.monotonic() - round_began)
            if self.report.checks == 1:
                self.report.first_check = round_began - zero
            self.report.last_check = round_began - zero
            if (
                self.seconds >= 300 and self.report.checks % 120 == 0
            ):  # a line a minute on long runs
                r = self.report
                self.log(
                    f"{(time.monotonic() - started) / 60:.0f} min: {r.injected} faults, {r.checks} "
                    f"checks, {len(r.crashes)} crashes, {len(r.violations)} violations"
                )

    def _check(self) -> None:
        self.report.checks += 1
        self._alive()
        self._app_viewer()
        now = time.time()
        for viewer in self.viewers:
            self._check_model(viewer, now)
            try:
                shown = render.panels(viewer.model, viewer.profile, now)
            except Exception as exc:
                self._crash(f"{viewer.name} render: {_where(exc)}")
                continue
            self.report.panel_checks += len(shown)
        if self.app is not None:
            self._check_screen()
        self._resolve()

    def _alive(self) -> None:
        for viewer in self.viewers:
            scheduler = viewer.scheduler
            if scheduler is None:
                continue
            for task in scheduler._tasks:
                if task.done() and not task.cancelled():
                    self._crash(
                        f"{viewer.name} poll loop {task.get_name()} ended: {task.exception()!r}"
                    )
            while scheduler.escaped:
                self._crash(f"{viewer.name} exception escaped a poller: {scheduler.escaped.pop(0)}")
        if self.app is not None:
            from textual.worker import WorkerState

            for worker in self.app.workers:
                if worker.state is WorkerState.ERROR:
                    self._crash(f"app worker {worker.name} failed: {worker.error!r}")
            if getattr(self.app, "_exception", None) is not None:
                self._crash(f"app: {_where(self.app._exception)}")

    def _crash(self, text: str) -> None:
        if text not in self.report.crashes:
            self.report.crashes.append(text)

    def _check_model(self, viewer: Viewer, now: float) -> None:
        snapshots = viewer.model.snapshots
        for key, s in snapshots.items():
            # A complete history is never asked again, by design; anything else should be.
            finished = key.startswith("history:") and s.data is not None and s.data.complete
            if (
                viewer.scheduler is not None
                and not finished
                and viewer.scheduler.left_behind(s, s.attempted_at + 10.0)
            ):
                self.report.orphans.add(f"{viewer.name} {key} ({s.health.value})")
        for key in set(viewer.seen) - set(snapshots):
            before = viewer.seen.pop(key)
            if (
                before.rows is not None and before.health is not Health.ABSENT
            ):  # dropped from the model
                self._suspect(
                    viewer,
                    key,
                    "was dropped",
                    frozenset({CONTAINER}),
                    (before.fetched_at or before.attempted_at) - CALL_SLACK_S,
                    now,
                )
        for key, s in list(snapshots.items()):
            self.report.snapshot_checks += 1
            before = viewer.seen.get(key)
            tracked = identities(key, s.data) if s.health in (Health.OK, Health.STALE) else None
            new = before is None or s.fetched_at != before.fetched_at
            # Derived panels, and the journal a stock server has not (the prober cannot judge).
            unjudged = ("timeline", "checkpoints") + (("journal",) if self.stock else ())
            if s.health is Health.ABSENT and new and key not in unjudged:
                self._suspect(
                    viewer,
                    key,
                    "turned ABSENT",
                    frozenset({CONTAINER}),
                    s.fetched_at - CALL_SLACK_S,
                    s.fetched_at,
                    said=s.note or "",
                )
            if s.health is Health.OK and new and before is not None and before.rows is not None:
                lost = before.rows - (tracked or frozenset())
                if lost:
                    what = (
                        f"lost {len(lost)} of {len(before.rows)} rows"
                        if tracked
                        else "turned empty"
                    )
                    self._suspect(
                        viewer,
                        key,
                        what,
                        lost,
                        (before.fetched_at or now) - CALL_SLACK_S,
                        s.fetched_at,
                    )
            if s.health is Health.OK and key.startswith("executions:"):
                for e in s.data:
                    truth = self.prober.started(e.arn, (s.fetched_at or now) - 3.0)
                    if (
                        truth is not None
                        and e.started is not None
                        and e.started.timestamp() < truth - 1
                    ):
                        self.report.violate(
                            f"{viewer.name} {key}: {e.name} shown OK from an earlier run"
                            f" (started {e.started:%H:%M:%S}, the one that exists started"
                            f" {_clock(truth)})"
                        )
            # Stock moto's histories are canned (their events dated 2020): nothing to judge.
            if (
                not self.stock
                and key.startswith("history:")
                and s.data is not None
                and s.data.history.events
            ):
                first = s.data.history.events[0].timestamp
                truth = self.prober.started(key.split(":", 1)[1], now - 3.0)
                if truth is not None and first is not None and first.timestamp() < truth - 1:
                    self.report.violate(
                        f"{viewer.name} {key.rsplit(':', 1)[-1]}: history shown "
                        f"({s.health.value}) is an earlier run's"
                    )
            viewer.seen[key] = Seen(s.health, tracked, s.fetched_at, s.attempted_at)

    def _suspect(
        self,
        viewer: Viewer,
        key: str,
        what: str,
        lost: frozenset,
        a: float,
        b: float,
        said: str = "",
    ) -> None:
        self.pending.append(
            Pending(time.monotonic() + 20.0, viewer.name, key, what, lost, a, b, said[:200])
        )

    def _resolve(self, final: bool = False) -> None:
        keep = []
        for p in self.pending:
            if not self.prober.caught_up(p.b):
                if final or time.monotonic() > p.due:
                    self.report.unverified += 1
                else:
                    keep.append(p)
                continue
            left = self.prober.unexplained(p.key, p.lost, p.a, p.b)
            if left is None:
                self.report.unverified += 1
                continue
            self.report.suspects += 1
            if left:
                example = ", ".join(sorted(map(str, left))[:3])
                self.report.violate(
                    f"{p.viewer} {p.key} {p.what} at {_clock(p.b)} while it existed ({example})"
                    + (f"; it said {p.said!r}" if p.said else "")
                    + "; judged on: "
                    + self.prober.looks(p.key, p.a, p.b),
                    p.b,
                )
        self.pending = keep

    def _check_screen(self) -> None:
        from awsview.ui.viewer.panel import PanelBody

        board = self.app.board if self.app.is_running else None
        for view in board.views.values() if board is not None else ():
            shown = view.shown
            if shown is None:
                continue
            self.report.screen_checks += 1
            bodies = view.query(PanelBody)
            if not bodies:
                continue  # not composed yet
            health = shown.panel.health
            subtitle = _plain(view.border_subtitle)
            body = bodies.first()
            said = _plain(body.content) if body.display else ""
            if health in ("stale", "error"):
                if health not in subtitle or (body.display and health not in said):
                    self.report.violate(
                        f"app panel {shown.panel.title!r} is {health} but shows "
                        f"{subtitle!r} / {said!r}"
                    )


def _q(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def _clock(at: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(at)) + f".{int(at % 1 * 10)}"


def _where(exc: BaseException) -> str:
    """The exception and the deepest line of AWS View it came through."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/awsview/" in f.filename]
    if not frames:
        return f"{type(exc).__name__}: {exc}"
    last = frames[-1]
    return f"{type(exc).__name__}: {exc} at {Path(last.filename).name}:{last.lineno} ({last.line})"


def _plain(value: Any) -> str:
    return getattr(value, "plain", None) or str(value or "")


async def soak(
    seconds: float,
    seed: int | None = None,
    app_lab: str | None = "ev04",
    log=print,
    min_faults: int = 0,
    stock: bool = False,
) -> Report:
    seed = random.randrange(1 << 30) if seed is None else seed
    return await Soak(seconds, seed, app_lab, log, min_faults, stock).run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.soak", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--app-lab", default="ev04", help="lab the headless app shows")
    parser.add_argument("--no-app", action="store_true", help="core viewers only")
    parser.add_argument(
        "--busy", type=int, default=0, metavar="N", help="N CPU-burning processes beside it"
    )
    parser.add_argument(
        "--stock",
        action="store_true",
        help="a stock moto server (polled, no change feed) behind a faulting proxy",
    )
    args = parser.parse_args(argv)
    with burning(args.busy):
        report = asyncio.run(
            soak(
                args.minutes * 60,
                args.seed,
                None if args.no_app else args.app_lab,
                stock=args.stock,
            )
        )
    report.busy = args.busy
    print(report.text())
    return 1 if report.violations or report.crashes else 0


if __name__ == "__main__":
    sys.exit(main())
