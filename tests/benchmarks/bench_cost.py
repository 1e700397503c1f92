"""What watching costs on a real account: AWS View at its defaults with AWS's request rates
(the token buckets as on AWS, not ten times wider as against a local emulator), each lab played
over and over (a lab in motion: the viewer polls fast all along), then left alone (idle). The
emulator reports the read units AWS would bill. Prints API calls and DynamoDB read units per
hour, and per API the viewer's mean and peak calls per second (over 1 s windows) as shares of
AWS's refill rate for it (awsview/aws/quotas.py; the target is a mean of at most 0.5); asserts
nothing. ``--polled`` leaves the emulator's change feed unused, so the viewer polls as it polls
AWS. An idle phase of 0 s is skipped (and with it the wait for the fast polling to wind down).

    python -m tests.benchmarks.bench_cost [active_seconds] [idle_seconds] [--polled] [lab ...]
        [--out DIR] [--busy N]

``--out DIR`` saves the ``quotas`` section of `make bench`'s table (tests/benchmarks/summary.py):
one row per API the viewer called, its highest mean and peak over the labs and phases played as
shares of AWS's refill rate, met when the mean is at most `SHARE` of it.
"""

from __future__ import annotations

import asyncio
import math
import os
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass

from awsview import labspec
from awsview.aws.quotas import SHARE, quota
from awsview.aws.ratelimit import RateLimiter, budget
from awsview.aws.session import Connection, Target
from awsview.labs.player import LabPlayer
from awsview.model.state import ACTIVE_WINDOW_S
from awsview.polling.scheduler import Scheduler
from tests.benchmarks import summary
from tests.benchmarks.bench_core import start_emulator

LABS = ("ev04", "ev05", "q05")
# Billed per request or unit (us-east-1 list prices when this was measured; see AWS's pricing
# pages): SQS requests, DynamoDB on-demand read request units, DynamoDB Streams read requests.
# The other calls the viewer makes are not billed per request.
SQS_PER_MILLION = 0.40
READ_UNITS_PER_MILLION = 0.125
STREAM_READS_PER_MILLION = 0.20


def _replay(url: str, lab: str, stop: threading.Event) -> int:
    """The lab's steps, cleanup and set-up again, until told to stop; returns the rounds played."""
    rounds = 0
    while not stop.is_set():
        LabPlayer(lab, endpoint_url=url, log=lambda line: None).play()
        LabPlayer(lab, endpoint_url=url, log=lambda line: None).setup()
        rounds += 1
    return rounds


def _sample(conn: Connection) -> tuple[Counter, float]:
    return Counter(conn.limiter.calls), conn.limiter.total_read_units


def _per_hour(
    before: tuple[Counter, float], after: tuple[Counter, float], seconds: float
) -> tuple[Counter, float]:
    calls = after[0] - before[0]
    scale = 3600 / seconds
    return Counter({k: round(v * scale) for k, v in calls.items()}), (after[1] - before[1]) * scale


def _dollars(calls: Counter, units: float) -> float:
    sqs = sum(n for (service, _), n in calls.items() if service == "sqs")
    streams = sum(
        n
        for (service, op), n in calls.items()
        if service == "dynamodbstreams" and op == "GetRecords"
    )
    return (
        sqs * SQS_PER_MILLION + units * READ_UNITS_PER_MILLION + streams * STREAM_READS_PER_MILLION
    ) / 1e6


def _report(lab: str, phase: str, calls: Counter, units: float) -> None:
    top = ", ".join(f"{s}:{o} {n:,}" for (s, o), n in calls.most_common(6))
    print(
        f"{lab:5} {phase:6} {sum(calls.values()):>8,} calls/h  {units:>9,.0f} read units/h  "
        f"≈ ${_dollars(calls, units):.4f}/h   top: {top}",
        flush=True,
    )


class _Rates:
    """Each API's calls per second over 1 s windows, sampled beside the viewer."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.peak: Counter = Counter()
        self.began = time.monotonic()
        self.start = Counter(conn.limiter.calls)

    async def run(self) -> None:
        last, at = Counter(self.conn.limiter.calls), time.monotonic()
        while True:
            await asyncio.sleep(1.0)
            now, when = Counter(self.conn.limiter.calls), time.monotonic()
            for key, n in (now - last).items():
                self.peak[key] = max(self.peak[key], n / (when - at))
            last, at = now, when

    def report(self, phase: str, lab: str, seen: dict[tuple[str, str], Seen]) -> None:
        """Prints each API's mean and peak; keeps the highest of each in ``seen``."""
        seconds = time.monotonic() - self.began
        calls = Counter(self.conn.limiter.calls) - self.start
        for (service, op), n in sorted(calls.items()):
            limit = quota(service, op)
            refill = limit.refill if limit is not None else float("nan")
            mean = n / seconds
            met = "yes" if mean <= SHARE * refill else "NO"
            peak = self.peak[(service, op)]
            seen[(service, op)] = seen.get((service, op), Seen()).keep(mean, peak, f"{lab} {phase}")
            print(
                f"      {phase:6} {service + ':' + op:42} mean {mean:6.2f}/s "
                f"({mean / refill:4.2f} of {refill:g}/s, {met})  "
                f"peak {peak:6.2f}/s ({peak / refill:4.2f})",
                flush=True,
            )


@dataclass(frozen=True)
class Seen:
    """One API's highest mean and peak calls/s over the labs and phases played, and where."""

    mean: float = 0.0
    peak: float = 0.0
    mean_at: str = ""
    peak_at: str = ""

    def keep(self, mean: float, peak: float, at: str) -> Seen:
        return Seen(
            max(self.mean, mean),
            max(self.peak, peak),
            at if mean > self.mean or not self.mean_at else self.mean_at,
            at if peak > self.peak or not self.peak_at else self.peak_at,
        )


def quota_rows(seen: dict[tuple[str, str], Seen]) -> list[tuple[str, ...]]:
    """The ``quotas`` section: per API, its highest mean and peak as shares of AWS's refill,
    the highest share first; met when that mean is at most `SHARE` of the refill. Operations
    that share one quota (Lambda's control plane) are held to it together: the sum of their
    highest means, which is at least what they made together."""
    pools: Counter[tuple[str, str]] = Counter()
    for (service, op), s in seen.items():
        limit = quota(service, op)
        if limit is not None and limit.pool:
            pools[(service, limit.pool)] += s.mean
    rows = []
    for (service, op), s in sorted(seen.items(), key=lambda kv: -_share(kv[0], kv[1].mean)):
        figure = f"{service}:{op} calls/s ÷ AWS refill (polled, defaults)"
        limit = quota(service, op)
        if limit is None:  # an operation the quota table does not know
            rows.append((figure, f"mean {s.mean:.2f}/s", "—", "a quota", "NO", "no quota known"))
            continue
        refill = limit.refill
        held = pools[(service, limit.pool)] if limit.pool else s.mean
        shared = f", shared by its {limit.pool} pool (together {held:.2f}/s)" if limit.pool else ""
        guess = "" if limit.documented else " (a guess: AWS publishes none)"
        met = held <= SHARE * refill
        rate, capacity = budget(service, op, math.inf)
        why = (
            f"{s.mean_at}: the limiter's burst of {capacity:g} calls on top of its {rate:g}/s"
            if not met
            else ""
        )
        rows.append(
            (
                figure,
                f"mean {s.mean / refill:.2f} ({s.mean:.2f}/s, {s.mean_at}) · "
                f"peak {s.peak / refill:.2f} ({s.peak:.2f}/s, {s.peak_at}){shared}",
                f"AWS refill {refill:g}/s, bucket {limit.bucket:g}{guess}",
                f"mean ≤ {SHARE:g} × refill",
                "met" if met else "NO",
                why,
            )
        )
    return rows


def _share(api: tuple[str, str], mean: float) -> float:
    limit = quota(*api)
    return mean / limit.refill if limit is not None else math.inf


async def measure(
    url: str,
    lab: str,
    active_s: float,
    idle_s: float,
    polled: bool,
    seen: dict[tuple[str, str], Seen],
) -> None:
    LabPlayer(lab, endpoint_url=url, log=lambda line: None).setup()
    async with Connection(Target(endpoint_url=url), RateLimiter(scale=1.0)) as conn:
        scheduler = Scheduler(conn, labspec.load(lab), feed=not polled)
        scheduler.start()
        rates = _Rates(conn)
        sampler = asyncio.create_task(rates.run())
        try:
            stop = threading.Event()
            start = _sample(conn)
            began = time.monotonic()
            replay = asyncio.create_task(asyncio.to_thread(_replay, url, lab, stop))
            await asyncio.sleep(active_s)
            stop.set()
            rounds = await replay
            active = _per_hour(start, _sample(conn), time.monotonic() - began)
            rates.report("active", lab, seen)
            sampler.cancel()
            idle = None
            if idle_s > 0:
                await asyncio.sleep(ACTIVE_WINDOW_S + 5)  # the fast polling winds down
                rates = _Rates(conn)
                sampler = asyncio.create_task(rates.run())
                start, began = _sample(conn), time.monotonic()
                await asyncio.sleep(idle_s)
                idle = _per_hour(start, _sample(conn), time.monotonic() - began)
                rates.report("idle", lab, seen)
        finally:
            sampler.cancel()
            await scheduler.stop()
    _report(lab, "active", *active)
    if idle is not None:
        _report(lab, "idle", *idle)
    print(
        f"      ({rounds} rounds of the lab in {active_s:.0f} s; "
        + (f"idle measured over {idle_s:.0f} s)" if idle is not None else "no idle phase)"),
        flush=True,
    )


def main(
    active_s: float = 120.0,
    idle_s: float = 90.0,
    polled: bool = False,
    labs: tuple[str, ...] = LABS,
    opts: summary.Options | None = None,
) -> None:
    opts = opts or summary.Options()
    started = time.monotonic()
    seen: dict[tuple[str, str], Seen] = {}
    emulator = start_emulator()
    try:
        for lab in labs:
            print(f"{lab}: {'polled (no change feed)' if polled else 'change feed'}", flush=True)
            asyncio.run(measure(emulator.endpoint_url, lab, active_s, idle_s, polled, seen))
    finally:
        emulator.stop()
    rows = quota_rows(seen)
    print(
        f"\nper API, the highest over {' '.join(labs)} ({'polled' if polled else 'change feed'}):",
        flush=True,
    )
    summary.print_table([r[:5] for r in rows], summary.HEADER[:5])
    print(
        f"bench_cost took {time.monotonic() - started:.0f} s; "
        f"load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    # The table's rows are the viewer as it watches AWS: polled. The change feed's calls are
    # the emulator's own, and AWS has no such feed.
    if polled:
        summary.save(opts, "quotas", rows)
    elif opts.out is not None:
        print("bench_cost: the quotas section is saved for --polled runs only", flush=True)


def _arguments(argv: list[str]) -> tuple[list[float], tuple[str, ...], bool]:
    """``[active_seconds] [idle_seconds] [--polled] [lab ...]``; anything else is refused."""
    numbers, labs, polled = [], [], False
    for arg in argv:
        if arg == "--polled":
            polled = True
        elif arg in LABS:
            labs.append(arg)
        else:
            try:
                numbers.append(float(arg))
            except ValueError:
                sys.exit(
                    f"bench_cost: {arg!r} is neither a number of seconds, --polled nor "
                    f"one of the labs {', '.join(LABS)}"
                )
    if len(numbers) > 2 or any(not math.isfinite(n) or n < 0 for n in numbers):
        sys.exit("bench_cost: at most two durations (active, idle), each 0 or more seconds")
    return numbers, tuple(labs) or LABS, polled


if __name__ == "__main__":
    options, rest = summary.options(sys.argv[1:])
    numbers, names, polled_mode = _arguments(rest)
    with summary.busy(options.busy):
        main(*numbers, polled=polled_mode, labs=names, opts=options)
