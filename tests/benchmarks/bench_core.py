"""API calls per minute (idle and during a lab) and change → snapshot latency of the polling
core, against a naive viewer that polls every resource every 2 s, on one embedded emulator.
Prints figures; asserts nothing.

    python -m tests.benchmarks.bench_core [idle_seconds] [samples]

The lab fixture, the naive viewer and the four timed changes live here so that bench_all can
run them too.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3

from awsview import labspec
from awsview.aws.ratelimit import RateLimiter
from awsview.aws.session import Connection, Target
from awsview.labs.player import LabPlayer
from awsview.model.state import LabState
from awsview.polling.scheduler import Scheduler, make_pollers

NAIVE_INTERVAL = 2.0
UNLIMITED = {("logs", "FilterLogEvents"): 1000.0}
LAB = "ev04"
ORDERS = "labex-ev04-orders"  # the business table, and the state machine's name
WORKER_LOG = "/aws/lambda/labex-ev04-worker"
BENCH_QUEUE = "labex-ev04-bench"  # no consumer: its count only grows
SEED_ITEM = "bench-seed"  # the order the log-line invocations summarise
KINDS = ("item write", "log line", "execution status", "queue count")
# On stock moto (no Lambda runs, executions stay RUNNING): a log line is put directly, and an
# execution is timed from its start to its row.
STOCK_KINDS = ("item write", "log line", "execution start", "queue count")
# How change n shows: an item's key, a marker in the worker's log line, an execution's name.
ITEM, LOG_MARK, RUN = (
    re.compile(r"bench-item-(\d+)"),
    re.compile(r'"bench-log-(\d+)"'),
    re.compile(r"bench-run-(\d+)"),
)


class NaiveViewer:
    """Every resource, every 2 s, nothing cached: new pollers each round. ``on_round`` gets
    each round's finished model (what such a viewer would print)."""

    def __init__(
        self,
        conn: Connection,
        profile: labspec.LabSpec,
        on_round: Callable[[LabState], None] | None = None,
    ):
        self.conn, self.profile, self.model = conn, profile, LabState()
        self.on_round = on_round
        self._task: asyncio.Task | None = None

    async def _run(self) -> None:
        while True:
            started = time.monotonic()
            model = LabState()
            pollers = make_pollers(self.profile)
            try:
                for poller in pollers:
                    model.apply(await poller.poll(self.conn, model))
            finally:
                for poller in pollers:  # the journal poller's HTTP session
                    if hasattr(poller, "close"):
                        await poller.close()
            self.model = model
            if self.on_round is not None:
                self.on_round(model)
            await asyncio.sleep(max(0.0, NAIVE_INTERVAL - (time.monotonic() - started)))

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def start_emulator() -> Any:
    """One embedded emulator in this process, on a free port, with a fresh state directory."""
    from awsview.emulator.server import start

    emulator = start("127.0.0.1", 0, Path(tempfile.mkdtemp(prefix="awsview-bench-")))
    emulator.start_in_thread()
    return emulator


@dataclass
class Fixture:
    """ev04 up to its workflow (q05 connected beside it), plus what the timed changes need."""

    url: str
    ddb: Any
    sqs: Any
    lam: Any
    sfn: Any
    machine: str
    queue_url: str


_players: dict[tuple[str, str], LabPlayer] = {}


def _player(lab: str, url: str) -> LabPlayer:
    """One lab VM per lab and endpoint: a later step finds the files an earlier one wrote."""
    if (lab, url) not in _players:
        _players[(lab, url)] = LabPlayer(lab, endpoint_url=url, log=lambda line: None)
    return _players[(lab, url)]


def prepare(url: str) -> Fixture:
    """The labs' set-up, ev04 up to its workflow, q05 connected, an empty bench queue and the
    seed order (its first summary also creates the worker's log group)."""
    for lab in ("ev04", "q05"):
        _player(lab, url).setup()
    _player("ev04", url).play(until="workflow")
    _player("q05", url).play(only="connect")
    kw = {
        "endpoint_url": url,
        "region_name": "us-east-1",
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
    }
    ddb, sqs, lam, sfn = (
        boto3.client(s, **kw) for s in ("dynamodb", "sqs", "lambda", "stepfunctions")
    )
    queue_url = sqs.create_queue(QueueName=BENCH_QUEUE)["QueueUrl"]
    ddb.put_item(
        TableName=ORDERS,
        Item={"id": {"S": SEED_ITEM}, "quantity": {"N": "1"}, "total_cents": {"N": "350"}},
    )
    lam.invoke(
        FunctionName="labex-ev04-worker", Payload=json.dumps({"stage": "summary", "id": SEED_ITEM})
    )
    machine = sfn.list_state_machines()["stateMachines"][0]["stateMachineArn"]
    return Fixture(url, ddb, sqs, lam, sfn, machine, queue_url)


def play_lab(url: str) -> None:
    """The learner's part of the benchmark lab: ev04's executions, then q05's deploy and repeats."""
    _player("ev04", url).play(only="executions")
    _player("q05", url).play(only="deploy")
    _player("q05", url).play(only="repeats")


class Changes:
    """The four changes the latency figures time, numbered n, and how to recognise each in a
    model or (log lines only) in a raw log message. Queue counts assume the n-th message sent
    is the n-th one ever (the bench queue has no consumer)."""

    def __init__(self, fixture: Fixture):
        self.fx = fixture

    def make(self, kind: str, n: int) -> float:
        """Make change n (blocking, boto3); returns when it happened, as time.time()."""
        fx, made = self.fx, time.time()
        if kind == "item write":
            fx.ddb.put_item(TableName=ORDERS, Item={"id": {"S": f"bench-item-{n}"}})
        elif kind == "log line":
            fx.lam.invoke(
                FunctionName="labex-ev04-worker",
                Payload=json.dumps(
                    {"stage": "summary", "id": SEED_ITEM, "bench": f"bench-log-{n}"}
                ),
            )
        elif kind == "execution status":
            arn = fx.sfn.start_execution(
                stateMachineArn=fx.machine,
                name=f"bench-run-{n}",
                input=json.dumps({"id": f"bench-x{n}", "quantity": 0}),
            )["executionArn"]
            while (described := fx.sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
                time.sleep(0.01)
            made = described["stopDate"].timestamp()  # the status changed when it stopped
        elif kind == "queue count":
            fx.sqs.send_message(QueueUrl=fx.queue_url, MessageBody=f"bench-{n}")
        else:
            raise ValueError(kind)
        return made

    @staticmethod
    def shown(kind: str, model: LabState) -> set[int]:
        """The numbers of the changes of this kind that the model holds."""
        if kind == "item write":
            table = model.data(f"table:{ORDERS}")
            return {
                int(m[1])
                for i in (table.items if table else ())
                if (m := ITEM.fullmatch(str(i.get("id"))))
            }
        if kind == "log line":
            feed = model.data(f"logs:{WORKER_LOG}")
            return {
                int(n) for e in (feed.lines if feed else ()) for n in LOG_MARK.findall(e.line.text)
            }
        if kind == "execution status":
            return {
                int(m[1])
                for e in model.data(f"executions:{ORDERS}") or ()
                if not e.running and (m := RUN.fullmatch(e.name))
            }
        if kind == "execution start":
            return {
                int(m[1])
                for e in model.data(f"executions:{ORDERS}") or ()
                if (m := RUN.fullmatch(e.name))
            }
        if kind == "queue count":  # a count of c shows the first c messages
            return set(
                range(
                    max(
                        (q.visible for q in model.data("queues") or () if q.name == BENCH_QUEUE),
                        default=0,
                    )
                )
            )
        raise ValueError(kind)

    @staticmethod
    def in_model(kind: str, model: LabState, n: int) -> bool:
        return n in Changes.shown(kind, model)

    @staticmethod
    def in_log(message: str) -> set[int]:
        """The numbers of the log-line changes in one raw log message."""
        return {int(n) for n in LOG_MARK.findall(message)}


async def _calls_per_minute(conn: Connection, seconds: float) -> float:
    before = conn.limiter.total_calls
    await asyncio.sleep(seconds)
    return (conn.limiter.total_calls - before) * 60 / seconds


async def _latency(
    model_of: Callable[[], LabState], changes: Changes, kind: str, numbers: range, gap: float
) -> list[float]:
    results = []
    for i, n in enumerate(numbers):
        await asyncio.sleep(gap * (0.3 + 0.7 * ((i * 7919) % 10) / 10))  # vary the phase
        made = await asyncio.to_thread(changes.make, kind, n)
        while not changes.in_model(kind, model_of(), n) and time.time() - made < 30:
            await asyncio.sleep(0.01)
        results.append(time.time() - made)
    return results


async def main(idle_seconds: float = 30.0, samples: int = 10) -> None:
    emulator = start_emulator()
    url = emulator.endpoint_url
    fixture = prepare(url)
    changes = Changes(fixture)
    profile = labspec.load(LAB)
    rows: list[tuple[str, float, float]] = []
    try:
        async with (
            Connection(Target(endpoint_url=url)) as ours,
            Connection(Target(endpoint_url=url), RateLimiter(UNLIMITED, scale=100)) as theirs,
        ):
            viewer = Scheduler(ours, profile)
            naive = NaiveViewer(theirs, profile)
            viewer.start()
            naive.start()
            await asyncio.sleep(30)  # let the set-up's changes age out of the active window
            idle = await asyncio.gather(
                _calls_per_minute(ours, idle_seconds), _calls_per_minute(theirs, idle_seconds)
            )
            rows.append(("API calls/min, idle", *idle))

            lab = threading.Thread(target=play_lab, args=(url,))
            t0 = time.monotonic()
            before = (ours.limiter.total_calls, theirs.limiter.total_calls)
            lab.start()
            await asyncio.to_thread(lab.join)
            span = time.monotonic() - t0
            rows.append(
                (
                    "API calls/min, during a lab",
                    (ours.limiter.total_calls - before[0]) * 60 / span,
                    (theirs.limiter.total_calls - before[1]) * 60 / span,
                )
            )

            for kind in KINDS:
                ours_s = await _latency(lambda: viewer.model, changes, kind, range(samples), 0.7)
                theirs_s = await _latency(
                    lambda: naive.model, changes, kind, range(samples, 2 * samples), 0.7
                )
                rows.append(
                    (
                        f"{kind} → snapshot p50 s",
                        statistics.median(ours_s),
                        statistics.median(theirs_s),
                    )
                )
                rows.append((f"{kind} → snapshot p95 s", pct(ours_s, 0.95), pct(theirs_s, 0.95)))
            await viewer.stop()
            await naive.stop()
    finally:
        emulator.stop()
    print(f"{'figure':34} {'AWS View':>10} {'naive 2 s':>10} {'ratio':>7}")
    for name, mine, base in rows:
        print(f"{name:34} {mine:10.2f} {base:10.2f} {mine / base if base else float('nan'):7.2f}")


if __name__ == "__main__":
    asyncio.run(main(*(float(a) for a in sys.argv[1:2]), *(int(a) for a in sys.argv[2:3])))
