"""How many learners one instructor process follows at a 1 s refresh (class view fan-out), and
what each learner costs it. Prints figures; asserts nothing.

    python -m tests.benchmarks.bench_class [max_learners] [--busy N] [--out DIR]

The endpoints: EMULATORS embedded emulators (`awsview emulator`, each a process of its own, with
its change feed), each with q05 set up and played to its repeats; learners are spread over them,
so several learners share an endpoint (each with its own connection, scheduler and feed cursor,
as if their labs were identical). While the rounds are timed, a driver keeps every lab moving:
each emulator gets a message on the lab's queue every DRIVE_EVERY_S (a busy class: every learner
doing something that often), which its worker consumes (a Lambda invocation, log lines, a
DynamoDB write, queue counts), so learners' cards change.

A round asks every learner once, at most 32 at a time (ClassMonitor.round); N learners are
followed at a 1 s refresh when every timed round takes ≤ 1 s. N doubles from 8 until a round is
too slow. The instructor's own cost per learner comes from /proc (CPU and RSS of this process;
the emulators run in their own processes).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import boto3

from awsview.classroom.monitor import ClassMonitor, Learner
from awsview.labs.player import LabPlayer
from tests.benchmarks import summary
from tests.benchmarks.viewer_probe import proc_cpu_seconds

EMULATORS = 10
DRIVE_EVERY_S = 10.0
ROUNDS = 10  # covers a change on every emulator
TARGET_LEARNERS = 100
TARGET_MB = 4.0  # the instructor process's RSS per learner


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _drive(urls: list[str], stop: threading.Event) -> None:
    """A learner at work on each emulator: a job on q05's queue every DRIVE_EVERY_S."""
    kw = {
        "region_name": "us-east-1",
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
    }
    queues = []
    for url in urls:
        sqs = boto3.client("sqs", endpoint_url=url, **kw)
        queues.append((sqs, sqs.get_queue_url(QueueName="labex-q05-jobs")["QueueUrl"]))
    n = 0
    while not stop.wait(DRIVE_EVERY_S / len(queues)):
        sqs, queue = queues[n % len(queues)]
        n += 1
        try:
            sqs.send_message(
                QueueUrl=queue, MessageBody=json.dumps({"id": f"class-{n}", "quantity": 1})
            )
        except Exception:
            pass  # an emulator busy beyond the client's timeout: the next one goes on


async def measure(urls: list[str], n: int) -> dict[str, float]:
    learners = tuple(Learner(f"l{i}", urls[i % len(urls)], "q05") for i in range(n))
    monitor = ClassMonitor(learners, concurrency=32)
    rounds = []
    try:
        await monitor.round()  # the first round opens clients and reads everything
        cpu, started_all = proc_cpu_seconds(os.getpid()), time.monotonic()
        for _ in range(ROUNDS):
            started = time.monotonic()
            await monitor.round()
            rounds.append(time.monotonic() - started)
            await asyncio.sleep(
                max(0.0, 1.0 - rounds[-1])
            )  # one round a second, as the class view runs
        cpu = (proc_cpu_seconds(os.getpid()) - cpu) / (time.monotonic() - started_all)
        errors = [f"{s.learner.name}: {s.error}" for s in monitor.statuses() if s.error]
        rss = _rss_mb()
    finally:
        await monitor.close()
    return {
        "p50": statistics.median(rounds),
        "max": max(rounds),
        "cpu": cpu,
        "rss_mb": rss,  # the whole process, at the end of the rounds
        "errors": len(errors),
        "first_error": errors[0] if errors else "",
    }


def main(most: int = 128, opts: summary.Options | None = None) -> None:
    opts = opts or summary.Options()
    from tests.support.emulator import RunningEmulator

    emulators = [
        RunningEmulator(state_dir=Path(tempfile.mkdtemp(prefix="awsview-class-"))).start()
        for _ in range(EMULATORS)
    ]
    stop = threading.Event()
    try:
        for emulator in emulators:
            player = LabPlayer("q05", endpoint_url=emulator.endpoint_url, log=lambda line: None)
            player.setup()
            player.play(until="repeats")
        urls = [e.endpoint_url for e in emulators]
        driver = threading.Thread(target=_drive, args=(urls, stop), daemon=True)
        driver.start()
        print(
            f"{EMULATORS} emulator processes with q05 played "
            f"and a job every {DRIVE_EVERY_S:.0f} s on each; "
            f"learners spread over them; load average {os.getloadavg()[0]:.1f}"
        )
        print(
            f"{'learners':>9} {'round p50 s':>12} {'round max s':>12} {'CPU % core':>11} "
            f"{'CPU ms/learner/s':>17} {'RSS MB/learner':>15} {'errors':>7}"
        )
        best, at_best, failed = 0, None, None
        # What the instructor holds for its learners: its RSS at the end of N learners' rounds
        # less its RSS before the first (a smaller class's memory is reused, not added).
        baseline = _rss_mb()
        largest: tuple[int, dict] | None = None  # memory is reported at the target's size too
        n = 25
        while n <= most:
            figures = asyncio.run(measure(urls, n))
            figures["rss_mb"] -= baseline
            largest = (n, figures)
            print(
                f"{n:9d} {figures['p50']:12.2f} {figures['max']:12.2f} "
                f"{100 * figures['cpu']:11.1f} "
                f"{1000 * figures['cpu'] / n:17.2f} {figures['rss_mb'] / n:15.2f} "
                f"{figures['errors']:7d}"
            )
            if figures["max"] > 1.0 or figures["errors"]:
                if figures["errors"]:
                    print(f"          e.g. {figures['first_error'][:150]}")
                failed = failed or (n, figures)
                if n >= TARGET_LEARNERS:
                    break
            elif failed is None:
                best, at_best = n, figures
            n = TARGET_LEARNERS if n < TARGET_LEARNERS < 2 * n else 2 * n
    finally:
        stop.set()
        for emulator in emulators:
            emulator.stop()
    per_learner, at_n = (
        (largest[1]["rss_mb"] / largest[0], largest[0]) if largest else (float("nan"), 0)
    )
    met = "met" if best >= TARGET_LEARNERS else "NO"
    cost = (
        (
            f"; the instructor process costs {1000 * at_best['cpu'] / best:.1f} ms of CPU per "
            "learner per second "
            f"and {per_learner:.1f} MB per learner at {at_n} learners"
        )
        if at_best
        else ""
    )
    limit = ""
    if failed is not None:
        n, figures = failed
        limit = f"limited at {n} learners by " + (
            f"{figures['errors']} cards with errors"
            if figures["errors"]
            else f"a round of {figures['max']:.2f} s (p50 {figures['p50']:.2f} s)"
        )
        limit += (
            f"; the instructor's own CPU {100 * figures['cpu']:.0f} % of a core, the rest of "
            f"a round waits on the {EMULATORS} emulators sharing the machine's "
            f"{os.cpu_count()} cores"
        )
    print(
        "learners followed at a 1 s refresh by one "
        f"process: {best} (every round ≤ 1 s, no errors); "
        f"target ≥ {TARGET_LEARNERS}: {met}{cost}{'; ' + limit if limit else ''}; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    rounds = f"round p50 / max {at_best['p50']:.2f} / {at_best['max']:.2f} s" if at_best else ""
    mb_met = per_learner <= TARGET_MB
    summary.save(
        opts,
        "class",
        [
            (
                "class view: learners followed at a 1 s refresh, every round ≤ 1 s",
                f"{best} ({rounds})",
                f"{EMULATORS} emulators, a job every {DRIVE_EVERY_S:.0f} s on each",
                f"≥ {TARGET_LEARNERS}",
                met,
                limit if met == "NO" else "",
            ),
            (
                "class view: instructor RSS per learner",
                f"{per_learner:.1f} MB at {at_n} learners",
                "—",
                f"≤ {TARGET_MB:.0f} MB",
                "met" if mb_met else "NO",
                "" if mb_met else "per-learner clients and models (see the profile in the docs)",
            ),
        ],
    )


if __name__ == "__main__":
    options, rest = summary.options(sys.argv[1:])
    with summary.busy(options.busy):
        main(*(int(a) for a in rest[:1]), opts=options)
