"""How many learner endpoints one process follows at a 1 s refresh (class view fan-out).
Prints figures; asserts nothing.

    python -m tests.benchmarks.bench_class [max_learners]

Learners here share two embedded emulators (2 cores), so the emulators, not the monitor, are
likely the limit; the figure is a lower bound for real endpoints on other machines.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from awsview.classroom import ClassMonitor, Learner
from awsview.labs.player import LabPlayer


async def main(most: int = 64) -> None:
    from awsview.emulator.server import start

    emulators = [start("127.0.0.1", 0, Path(tempfile.mkdtemp(prefix="awsview-class-"))) for _ in range(2)]
    for emulator in emulators:
        emulator.start_in_thread()
        player = LabPlayer("q05", endpoint_url=emulator.endpoint_url, log=lambda line: None)
        player.setup()
        player.play(until="repeats")
    print(f"{'learners':>9} {'round p50 s':>12} {'round max s':>12} {'per learner ms':>15}")
    best = 0
    try:
        n = 4
        while n <= most:
            learners = tuple(Learner(f"l{i}", emulators[i % 2].endpoint_url, "q05") for i in range(n))
            monitor = ClassMonitor(learners, concurrency=32)
            rounds = []
            try:
                await monitor.round()  # first round opens clients and reads everything
                for _ in range(3):
                    started = time.monotonic()
                    await monitor.round()
                    rounds.append(time.monotonic() - started)
            finally:
                await monitor.close()
            p50 = statistics.median(rounds)
            print(f"{n:9d} {p50:12.2f} {max(rounds):12.2f} {p50 / n * 1000:15.1f}")
            if max(rounds) <= 1.0:
                best = n
            else:
                break
            n *= 2
    finally:
        for emulator in emulators:
            emulator.stop()
    print(f"endpoints followed at a 1 s refresh by one process: {best} (every round ≤ 1 s)")


if __name__ == "__main__":
    asyncio.run(main(*(int(a) for a in sys.argv[1:2])))
