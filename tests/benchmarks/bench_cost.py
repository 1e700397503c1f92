"""What watching costs on a real account: AWS View at its defaults with AWS's request rates
(the token buckets as on AWS, not ten times wider as against a local emulator), each lab played
over and over (a lab in motion: the viewer polls fast all along), then left alone (idle). The
emulator reports the read units AWS would bill. Prints API calls and DynamoDB read units per
hour, and per API the viewer's mean and peak calls per second (over 1 s windows) as shares of
AWS's refill rate for it (awsview/aws/quotas.py; the target is a mean of at most 0.5); asserts
nothing. ``--polled`` leaves the emulator's change feed unused, so the viewer polls as it polls
AWS.

    python -m tests.benchmarks.bench_cost [active_seconds] [idle_seconds] [--polled] [lab ...]
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections import Counter

from awsview import labspec
from awsview.aws.quotas import SHARE, quota
from awsview.aws.ratelimit import RateLimiter
from awsview.aws.session import Connection, Target
from awsview.labs.player import LabPlayer
from awsview.model.state import ACTIVE_WINDOW_S
from awsview.polling.scheduler import Scheduler
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

    def report(self, phase: str) -> None:
        seconds = time.monotonic() - self.began
        calls = Counter(self.conn.limiter.calls) - self.start
        for (service, op), n in sorted(calls.items()):
            limit = quota(service, op)
            refill = limit.refill if limit is not None else float("nan")
            mean = n / seconds
            met = "yes" if mean <= SHARE * refill else "NO"
            peak = self.peak[(service, op)]
            print(
                f"      {phase:6} {service + ':' + op:42} mean {mean:6.2f}/s "
                f"({mean / refill:4.2f} of {refill:g}/s, {met})  "
                f"peak {peak:6.2f}/s ({peak / refill:4.2f})",
                flush=True,
            )


async def measure(url: str, lab: str, active_s: float, idle_s: float, polled: bool) -> None:
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
            rates.report("active")
            sampler.cancel()
            await asyncio.sleep(ACTIVE_WINDOW_S + 5)  # the fast polling winds down
            rates = _Rates(conn)
            sampler = asyncio.create_task(rates.run())
            start, began = _sample(conn), time.monotonic()
            await asyncio.sleep(idle_s)
            idle = _per_hour(start, _sample(conn), time.monotonic() - began)
            rates.report("idle")
        finally:
            sampler.cancel()
            await scheduler.stop()
    _report(lab, "active", *active)
    _report(lab, "idle", *idle)
    print(
        f"      ({rounds} rounds of the lab in {active_s:.0f} s; "
        f"idle measured over {idle_s:.0f} s)",
        flush=True,
    )


def main(
    active_s: float = 120.0,
    idle_s: float = 90.0,
    polled: bool = False,
    labs: tuple[str, ...] = LABS,
) -> None:
    emulator = start_emulator()
    try:
        for lab in labs:
            print(f"{lab}: {'polled (no change feed)' if polled else 'change feed'}", flush=True)
            asyncio.run(measure(emulator.endpoint_url, lab, active_s, idle_s, polled))
    finally:
        emulator.stop()


if __name__ == "__main__":
    numbers = [float(a) for a in sys.argv[1:] if a.replace(".", "", 1).isdigit()]
    names = tuple(a for a in sys.argv[1:] if a in LABS)
    main(*numbers[:2], polled="--polled" in sys.argv, labs=names or LABS)
