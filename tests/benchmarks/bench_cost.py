"""What watching costs on a real account: AWS View at its defaults with AWS's request rates
(the token buckets as on AWS, not ten times wider as against a local emulator), each lab played
over and over (a lab in motion: the viewer polls fast all along), then left alone (idle). The
emulator reports the read units AWS would bill. Prints API calls and DynamoDB read units per
hour; asserts nothing.

    python -m tests.benchmarks.bench_cost [active_seconds] [idle_seconds]
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections import Counter

from awsview import profiles
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


async def measure(url: str, lab: str, active_s: float, idle_s: float) -> None:
    LabPlayer(lab, endpoint_url=url, log=lambda line: None).setup()
    async with Connection(Target(endpoint_url=url), RateLimiter(scale=1.0)) as conn:
        scheduler = Scheduler(conn, profiles.load(lab))
        scheduler.start()
        try:
            stop = threading.Event()
            start = _sample(conn)
            began = time.monotonic()
            replay = asyncio.create_task(asyncio.to_thread(_replay, url, lab, stop))
            await asyncio.sleep(active_s)
            stop.set()
            rounds = await replay
            active = _per_hour(start, _sample(conn), time.monotonic() - began)
            await asyncio.sleep(ACTIVE_WINDOW_S + 5)  # the fast polling winds down
            start, began = _sample(conn), time.monotonic()
            await asyncio.sleep(idle_s)
            idle = _per_hour(start, _sample(conn), time.monotonic() - began)
        finally:
            await scheduler.stop()
    _report(lab, "active", *active)
    _report(lab, "idle", *idle)
    print(
        f"      ({rounds} rounds of the lab in {active_s:.0f} s; "
        f"idle measured over {idle_s:.0f} s)",
        flush=True,
    )


def main(active_s: float = 120.0, idle_s: float = 90.0) -> None:
    emulator = start_emulator()
    try:
        for lab in LABS:
            asyncio.run(measure(emulator.endpoint_url, lab, active_s, idle_s))
    finally:
        emulator.stop()


if __name__ == "__main__":
    main(*(float(a) for a in sys.argv[1:3]))
