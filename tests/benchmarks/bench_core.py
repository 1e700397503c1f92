"""API calls per minute (idle and during a lab) and change → snapshot latency of the polling
core, against a naive viewer that polls every resource every 2 s, on one embedded emulator.
Prints figures; asserts nothing.

    python -m tests.benchmarks.bench_core [idle_seconds] [samples]
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

import boto3

from awsview import profiles
from awsview.aws.ratelimit import RateLimiter
from awsview.aws.session import Connection, Target
from awsview.labs.player import LabPlayer
from awsview.pollers.base import LabModel
from awsview.pollers.scheduler import Scheduler, make_pollers

NAIVE_INTERVAL = 2.0
UNLIMITED = {("logs", "FilterLogEvents"): 1000.0}


class NaiveViewer:
    """Every resource, every 2 s, nothing cached: new pollers each round."""

    def __init__(self, conn: Connection, profile: profiles.LabProfile):
        self.conn, self.profile, self.model = conn, profile, LabModel()
        self._task: asyncio.Task | None = None

    async def _run(self) -> None:
        while True:
            started = time.monotonic()
            model = LabModel()
            for poller in make_pollers(self.profile):
                model.apply(await poller.poll(self.conn, model))
            self.model = model
            await asyncio.sleep(max(0.0, NAIVE_INTERVAL - (time.monotonic() - started)))

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def _calls_per_minute(conn: Connection, seconds: float) -> float:
    before = conn.limiter.total_calls
    await asyncio.sleep(seconds)
    return (conn.limiter.total_calls - before) * 60 / seconds


async def _latency(model_of: Callable[[], LabModel], change: Callable[[int], None],
                   seen: Callable[[LabModel, int], bool], samples: int, gap: float) -> list[float]:
    results = []
    for n in range(samples):
        await asyncio.sleep(gap * (0.3 + 0.7 * ((n * 7919) % 10) / 10))  # vary the phase
        started = time.monotonic()
        await asyncio.to_thread(change, n)
        while not seen(model_of(), n):
            await asyncio.sleep(0.01)
            if time.monotonic() - started > 30:
                break
        results.append(time.monotonic() - started)
    return results


async def main(idle_seconds: float = 30.0, samples: int = 10) -> None:
    from awsview.emulator.server import start

    emulator = start("127.0.0.1", 0, Path(tempfile.mkdtemp(prefix="awsview-bench-")))
    emulator.start_in_thread()
    url = emulator.endpoint_url
    for lab in ("ev04", "q05"):
        LabPlayer(lab, endpoint_url=url, log=lambda line: None).setup()
    LabPlayer("ev04", endpoint_url=url, log=lambda line: None).play(until="workflow")
    LabPlayer("q05", endpoint_url=url, log=lambda line: None).play(only="connect")
    kw = {"endpoint_url": url, "region_name": "us-east-1", "aws_access_key_id": "testing",
          "aws_secret_access_key": "testing"}
    ddb, sqs, lam, sfn = (boto3.client(s, **kw) for s in ("dynamodb", "sqs", "lambda", "stepfunctions"))
    sqs.create_queue(QueueName="labex-ev04-bench")  # no consumer: its count only grows
    machine = sfn.list_state_machines()["stateMachines"][0]["stateMachineArn"]
    profile = profiles.load("ev04")
    rows: list[tuple[str, float, float]] = []
    try:
        async with Connection(Target(endpoint_url=url)) as ours, \
                Connection(Target(endpoint_url=url), RateLimiter(UNLIMITED, scale=100)) as theirs:
            viewer = Scheduler(ours, profile)
            naive = NaiveViewer(theirs, profile)
            viewer.start()
            naive.start()
            await asyncio.sleep(30)  # let the set-up's changes age out of the active window
            idle = await asyncio.gather(_calls_per_minute(ours, idle_seconds),
                                        _calls_per_minute(theirs, idle_seconds))
            rows.append(("API calls/min, idle", *idle))

            def play() -> None:
                LabPlayer("ev04", endpoint_url=url, log=lambda line: None).play(only="executions")
                LabPlayer("q05", endpoint_url=url, log=lambda line: None).play(only="deploy")
                LabPlayer("q05", endpoint_url=url, log=lambda line: None).play(only="repeats")

            lab = threading.Thread(target=play)
            t0 = time.monotonic()
            before = (ours.limiter.total_calls, theirs.limiter.total_calls)
            lab.start()
            await asyncio.to_thread(lab.join)
            span = time.monotonic() - t0
            rows.append(("API calls/min, during a lab",
                         (ours.limiter.total_calls - before[0]) * 60 / span,
                         (theirs.limiter.total_calls - before[1]) * 60 / span))

            def item_write(n: int) -> None:
                ddb.put_item(TableName="labex-ev04-orders", Item={"id": {"S": f"bench-{n}"}})

            def item_seen(model: LabModel, n: int) -> bool:
                table = model.data("table:labex-ev04-orders")
                return table is not None and any(i.get("id") == f"bench-{n}" for i in table.items)

            def log_line(n: int) -> None:
                lam.invoke(FunctionName="labex-ev04-worker",
                           Payload=json.dumps({"stage": "summary", "id": "retry-order", "n": n}))

            def log_seen(model: LabModel, n: int) -> bool:
                feed = model.data("logs:/aws/lambda/labex-ev04-worker")
                return feed is not None and sum(e.line.kind == "START" for e in feed.lines) >= base_starts + n + 1

            def execution(n: int) -> None:
                sfn.start_execution(stateMachineArn=machine, name=f"bench-{n}",
                                    input=json.dumps({"id": f"bench-x{n}", "quantity": 0}))

            def execution_seen(model: LabModel, n: int) -> bool:
                runs = model.data("executions:labex-ev04-orders") or ()
                return any(e.name == f"bench-{n}" and e.status == "FAILED" for e in runs)

            def queue_count(n: int) -> None:
                sqs.send_message(QueueUrl=sqs.get_queue_url(QueueName="labex-ev04-bench")["QueueUrl"], MessageBody="x")

            def queue_seen(model: LabModel, n: int) -> bool:
                return any(q.name == "labex-ev04-bench" and q.visible >= n + 1 for q in model.data("queues") or ())

            feed = viewer.model.data("logs:/aws/lambda/labex-ev04-worker")
            base_starts = sum(e.line.kind == "START" for e in feed.lines) if feed else 0
            for name, change, seen in (("item write", item_write, item_seen), ("log line", log_line, log_seen),
                                       ("execution status", execution, execution_seen),
                                       ("queue count", queue_count, queue_seen)):
                ours_ms = await _latency(lambda: viewer.model, change, seen, samples, 0.7)
                if name == "log line":
                    feed = naive.model.data("logs:/aws/lambda/labex-ev04-worker")
                    base_starts = sum(e.line.kind == "START" for e in feed.lines) if feed else 0
                if name == "item write":
                    change_naive = lambda n: item_write(n + 1000)  # noqa: E731
                    seen_naive = lambda m, n: item_seen(m, n + 1000)  # noqa: E731
                elif name == "execution status":
                    change_naive = lambda n: execution(n + 1000)  # noqa: E731
                    seen_naive = lambda m, n: execution_seen(m, n + 1000)  # noqa: E731
                elif name == "queue count":
                    change_naive = lambda n: queue_count(n + samples)  # noqa: E731
                    seen_naive = lambda m, n: queue_seen(m, n + samples)  # noqa: E731
                else:
                    change_naive, seen_naive = change, seen
                theirs_ms = await _latency(lambda: naive.model, change_naive, seen_naive, samples, 0.7)
                rows.append((f"{name} → snapshot p50 s", statistics.median(ours_ms), statistics.median(theirs_ms)))
                rows.append((f"{name} → snapshot p95 s", _pct(ours_ms, .95), _pct(theirs_ms, .95)))
            await viewer.stop()
            await naive.stop()
    finally:
        emulator.stop()
    print(f"{'figure':34} {'AWS View':>10} {'naive 2 s':>10} {'ratio':>7}")
    for name, mine, base in rows:
        print(f"{name:34} {mine:10.2f} {base:10.2f} {mine / base if base else float('nan'):7.2f}")


if __name__ == "__main__":
    asyncio.run(main(*(float(a) for a in sys.argv[1:2]), *(int(a) for a in sys.argv[2:3])))
