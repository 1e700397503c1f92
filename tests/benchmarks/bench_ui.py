"""The viewer under load: 10,000 items, 1,000 executions and 100,000 log lines; prints figures,
asserts nothing.

    python -m tests.benchmarks.bench_ui

- keypress → repaint: a key moves the cursor in a focused table while a background task applies
  polling-like changes (new log lines, changed items, a running execution) every 250 ms; the time
  from the key to the next screen update (the compositor has rendered the new frame).
- RSS after the run.
- process start → first full paint, in a fresh process: with the small ev04 model, and with the
  big one (its construction, which a real viewer spreads over its first polls, reported apart).

Targets (issue 4): p95 < 100 ms, RSS < 300 MB, first paint ≤ 1.0 s.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import time

KEYS = 200
UPDATE_EVERY_S = 0.25
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def _polling(model, stop: asyncio.Event) -> int:
    """Changes shaped like what the pollers deliver while a lab runs."""
    from awsview.model.loglines import classify
    from awsview.model.resources import LogEntry
    from awsview.ui.sample import ok

    rounds = 0
    while not stop.is_set():
        rounds += 1
        logs_key = next(k for k in model.snapshots if k.startswith("logs:"))
        feed = model.data(logs_key)
        extra = tuple(LogEntry(feed.lines[-1].timestamp_ms + i, "stream", f"poll{rounds}-{i}",
                               classify(f'RESULT {{"id": "order-{i:05d}", "round": {rounds}}}')) for i in range(50))
        table_key = next(k for k in model.snapshots if k.endswith("-orders") and k.startswith("table:"))
        table = model.data(table_key)
        items = list(table.items)
        for i in range(rounds % 50, len(items), 500):  # 20 items change each round
            items[i] = {**items[i], "quantity": rounds}
        runs_key = next(k for k in model.snapshots if k.startswith("executions:"))
        runs = model.data(runs_key)
        first = dataclasses.replace(runs[0], status="RUNNING" if rounds % 2 else "SUCCEEDED")
        model.apply([ok(logs_key, dataclasses.replace(feed, lines=feed.lines[len(extra):] + extra)),
                     ok(table_key, dataclasses.replace(table, items=tuple(items))),
                     ok(runs_key, (first,) + runs[1:])])
        try:
            await asyncio.wait_for(stop.wait(), UPDATE_EVERY_S)
        except asyncio.TimeoutError:
            pass
    return rounds


async def keypresses(profile, model, keys: int = KEYS) -> dict[str, float]:
    from awsview.ui.app import AWSViewApp

    app = AWSViewApp(model=model, profile=profile)
    frames: list[float] = []
    original = app._display

    def display(screen, renderable):
        if renderable is not None:
            frames.append(time.perf_counter())
        return original(screen, renderable)

    app._display = display
    latencies = []
    async with app.run_test(size=(160, 50)) as pilot:
        for _ in range(5):
            await pilot.pause()
        orders = next(v for i, v in app.board.views.items() if i.endswith("-orders") and i.startswith("tables:"))
        app.board.visit(orders)
        await pilot.pause()
        stop = asyncio.Event()
        poller = asyncio.create_task(_polling(model, stop))
        for n in range(keys):
            seen = len(frames)
            started = time.perf_counter()
            await pilot.press("down" if n % 40 < 20 else "up")
            while len(frames) == seen or frames[-1] < started:
                await asyncio.sleep(0.001)
            latencies.append(frames[seen] - started if frames[seen] >= started else frames[-1] - started)
            await asyncio.sleep(0.01)
        stop.set()
        rounds = await poller
    return {"p50_ms": statistics.median(latencies) * 1000, "p95_ms": _pct(latencies, 0.95) * 1000,
            "max_ms": max(latencies) * 1000, "keys": len(latencies), "update_rounds": rounds}


def first_paint_child(which: str, spawned: float) -> None:
    """Runs in a fresh process: the app, headless, until its first full paint."""
    started = time.time()
    from awsview.ui import sample
    from awsview.ui.app import AWSViewApp

    imported = time.time()
    profile, model = sample.big() if which == "big" else sample.ev04()
    built = time.time()
    app = AWSViewApp(model=model, profile=profile)
    result: dict[str, float] = {}
    original = app._display

    def display(screen, renderable):
        views = list(app.board.views.values()) if app.is_running else []
        if renderable is not None and views and not result and all(v.shown is not None and v._ready for v in views):
            result.update(process_start=spawned, python_up=started, imported=imported, model_built=built,
                          painted=time.time(), panels=len(views))
            app.exit()
        return original(screen, renderable)

    app._display = display
    app.run(headless=True, size=(160, 50))
    print(json.dumps(result))


def first_paint(which: str) -> dict[str, float]:
    spawned = time.time()
    out = subprocess.run([sys.executable, "-m", "tests.benchmarks.bench_ui", "--first-paint", which, str(spawned)],
                         capture_output=True, text=True, timeout=120, cwd=_ROOT)
    line = [x for x in out.stdout.splitlines() if x.startswith("{")]
    if not line:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(line[-1])


def scale(keys: int = KEYS) -> dict[str, float]:
    """The big model in this process: how long it takes to build, keypress → repaint while it
    changes, and RSS before and after."""
    from awsview.ui import sample

    started = time.perf_counter()
    profile, model = sample.big()
    figures = {"model_build_s": time.perf_counter() - started, "rss_built_mb": _rss_mb()}
    figures.update(asyncio.run(keypresses(profile, model, keys)))
    figures["rss_mb"] = _rss_mb()
    return figures


def scale_in_child(keys: int = KEYS) -> dict[str, float]:
    """scale() in a fresh process, so its RSS counts the viewer and nothing else."""
    out = subprocess.run([sys.executable, "-m", "tests.benchmarks.bench_ui", "--scale", str(keys)],
                         capture_output=True, text=True, timeout=600, cwd=_ROOT)
    line = [x for x in out.stdout.splitlines() if x.startswith("{")]
    if not line:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(line[-1])


def main() -> None:
    print("AWS View viewer benchmark (10,000 items, 1,000 executions, 100,000 log lines)")
    for which in ("small", "big"):
        times = first_paint(which)
        total = times["painted"] - times["process_start"]
        without_model = total - (times["model_built"] - times["imported"])
        print(f"  first full paint, {which} model: {total:.2f} s from process start "
              f"(python {times['python_up'] - times['process_start']:.2f} s, imports "
              f"{times['imported'] - times['python_up']:.2f} s, model {times['model_built'] - times['imported']:.2f} s, "
              f"app {times['painted'] - times['model_built']:.2f} s; {without_model:.2f} s without building the model; "
              f"{times['panels']} panels)")
    figures = scale()
    print(f"  big model built in {figures['model_build_s']:.2f} s; RSS {figures['rss_built_mb']:.0f} MB")
    print(f"  keypress → repaint while polling ({figures['keys']} keys, {figures['update_rounds']} update rounds): "
          f"p50 {figures['p50_ms']:.1f} ms, p95 {figures['p95_ms']:.1f} ms, max {figures['max_ms']:.1f} ms")
    print(f"  RSS after the run: {figures['rss_mb']:.0f} MB")
    print("  targets: p95 < 100 ms, RSS < 300 MB, first paint ≤ 1.0 s")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--first-paint":
        first_paint_child(sys.argv[2], float(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--scale":
        print(json.dumps(scale(int(sys.argv[2]) if len(sys.argv) > 2 else KEYS)))
    else:
        main()
