"""The viewer under load: 10,000 items, 1,000 executions and 100,000 log lines, against a
minimal Textual app measured the same way on the same machine; prints figures, asserts nothing.

    python -m tests.benchmarks.bench_ui

- keypress → repaint: a key moves the cursor in a focused table while a background task applies
  polling-like changes (new log lines, changed items, a running execution) every 250 ms; the time
  from the key to the next screen update (the compositor has rendered the new frame).
- RSS after the run.
- process start → first full paint, in a fresh process that finds the package compiled (as
  installed): with the small ev04 model, and with the big one (its construction, which a real
  viewer spreads over its first polls, reported apart). The first full paint is the first frame
  in which every panel on the screen shows its data (see `first_screen_shown`).
- the yardstick: a minimal Textual app (one DataTable of 200 rows, nothing else) — its first
  paint from process start, and keypress → repaint with the same keys and no changes. Figures
  are given as ratios to it, so a faster or slower machine neither flatters nor sinks them.

Targets: keypress p95 ≤ 2× the minimal app's, RSS < 300 MB, first paint ≤ 1.5× the minimal app's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
    from tests.support.sample import ok

    rounds = 0
    while not stop.is_set():
        rounds += 1
        logs_key = next(k for k in model.snapshots if k.startswith("logs:"))
        feed = model.data(logs_key)
        extra = tuple(
            LogEntry(
                feed.lines[-1].timestamp_ms + i,
                "stream",
                f"poll{rounds}-{i}",
                classify(f'RESULT {{"id": "order-{i:05d}", "round": {rounds}}}'),
            )
            for i in range(50)
        )
        table_key = next(
            k for k in model.snapshots if k.endswith("-orders") and k.startswith("table:")
        )
        table = model.data(table_key)
        items = list(table.items)
        for i in range(rounds % 50, len(items), 500):  # 20 items change each round
            items[i] = {**items[i], "quantity": rounds}
        runs_key = next(k for k in model.snapshots if k.startswith("executions:"))
        runs = model.data(runs_key)
        first = dataclasses.replace(runs[0], status="RUNNING" if rounds % 2 else "SUCCEEDED")
        model.apply(
            [
                ok(logs_key, dataclasses.replace(feed, lines=feed.lines[len(extra) :] + extra)),
                ok(table_key, dataclasses.replace(table, items=tuple(items))),
                ok(runs_key, (first,) + runs[1:]),
            ]
        )
        try:
            await asyncio.wait_for(stop.wait(), UPDATE_EVERY_S)
        except TimeoutError:
            pass
    return rounds


async def keypresses(profile, model, keys: int = KEYS) -> dict[str, float]:
    """Keypress → repaint in the viewer (or, with no model, in the minimal app)."""
    if model is None:
        app = minimal_app()
    else:
        from awsview.ui.viewer.app import AWSViewApp

        app = AWSViewApp(model=model, profile=profile)
    frames: list[float] = []
    original = app._display

    def display(screen, renderable):
        if renderable is not None:
            frames.append(time.perf_counter())
        return original(screen, renderable)

    app._display = display
    round_ends: list[float] = []  # when each change round (the model rendered into panels) ended
    if model is not None:
        refresh = app.refresh_panels

        def counted_refresh() -> None:
            refresh()
            round_ends.append(time.perf_counter())

        app.refresh_panels = counted_refresh  # type: ignore[method-assign]
    latencies = []
    behind: list[bool] = []  # whether a change round ran between the key's frame and the one before
    async with app.run_test(size=(160, 50)) as pilot:
        for _ in range(5):
            await pilot.pause()
        if model is not None:
            orders = next(
                v
                for i, v in app.board.views.items()
                if i.endswith("-orders") and i.startswith("tables:")
            )
            app.board.visit(orders)
        await pilot.pause()
        stop = asyncio.Event()
        poller = asyncio.create_task(_polling(model, stop) if model is not None else stop.wait())
        scrolled: list[bool] = []  # whether the key scrolled the focused table
        previous = time.perf_counter()
        for n in range(keys):
            seen = len(frames)
            focused = app.focused
            offset = getattr(focused, "scroll_y", None)
            started = time.perf_counter()
            await pilot.press("down" if n % 40 < 20 else "up")
            while len(frames) == seen or frames[-1] < started:
                await asyncio.sleep(0.001)
            latencies.append(
                frames[seen] - started if frames[seen] >= started else frames[-1] - started
            )
            scrolled.append(getattr(focused, "scroll_y", None) != offset)
            behind.append(any(previous <= at < frames[seen] for at in round_ends))
            previous = frames[seen]
            await asyncio.sleep(0.01)
        stop.set()
        rounds = await poller if model is not None else 0
    scrolling = [t for t, s, b in zip(latencies, scrolled, behind) if s and not b]
    still = [t for t, s, b in zip(latencies, scrolled, behind) if not s and not b]
    after_round = [t for t, b in zip(latencies, behind) if b]
    return {
        "p50_ms": statistics.median(latencies) * 1000,
        "p95_ms": _pct(latencies, 0.95) * 1000,
        "max_ms": max(latencies) * 1000,
        "keys": len(latencies),
        "update_rounds": rounds,
        # Keys whose frame also showed a change round (the round and its frame came first);
        # of the others, those that scrolled the table draw all of its lines again, the rest
        # two of them.
        "round_keys": len(after_round),
        "round_p95_ms": _pct(after_round, 0.95) * 1000 if after_round else 0.0,
        "scrolling_keys": len(scrolling),
        "scrolling_p95_ms": _pct(scrolling, 0.95) * 1000 if scrolling else 0.0,
        "still_p95_ms": _pct(still, 0.95) * 1000 if still else 0.0,
    }


def minimal_app():
    """The yardstick: a Textual app with one focused DataTable of 200 rows and nothing else."""
    from textual.app import App
    from textual.widgets import DataTable

    class Minimal(App):
        def compose(self):
            yield DataTable(cursor_type="row")

        def on_mount(self) -> None:
            table = self.query_one(DataTable)
            table.add_columns("KEY", "STATUS", "DETAIL")
            for i in range(200):
                table.add_row(
                    f"row-{i:03d}", "SUCCEEDED" if i % 3 else "FAILED", f"detail of row {i} " * 3
                )
            table.focus()

    return Minimal()


def first_screen_shown(app) -> bool:
    """Every panel the first screen shows is mounted and shows its data: all of them, or, while
    the board still keeps panels back (mounted after the first frame), the mounted ones, one of
    which starts below the screen (so every later panel does too: none is missing from it)."""
    board = app.board
    views = [v for v in board.views.values() if v.parent is not None]
    if not views or not all(v.shown is not None and v._ready for v in views):
        return False
    if board.held == 0:
        return True
    bottom = board.region.bottom
    return bottom > 0 and any(v.region.height and v.region.y >= bottom for v in views)


def first_paint_child(which: str, spawned: float) -> None:
    """Runs in a fresh process: the app, headless, until its first full paint."""
    started = time.time()
    cpu_imported = cpu_built = 0.0  # CPU seconds at those points (where a model is built)
    if which == "minimal":
        imported = built = time.time()
        app = minimal_app()

        def ready() -> bool:
            from textual.widgets import DataTable

            return bool(app.query(DataTable)) and app.query_one(DataTable).row_count == 200
    elif which.startswith("replay:"):  # `awsview replay FILE`, at the recording's end
        from awsview.ui.viewer.replay import ReplayApp, open_player

        imported = time.time()
        player = open_player(Path(which.removeprefix("replay:")))
        built = time.time()
        app = ReplayApp(player, start=player.last)

        def ready() -> bool:
            return first_screen_shown(app)
    else:
        from awsview.ui.viewer.app import AWSViewApp
        from tests.support import sample

        imported, cpu_imported = time.time(), time.process_time()
        profile, model = sample.big() if which == "big" else sample.ev04()
        built, cpu_built = time.time(), time.process_time()
        app = AWSViewApp(model=model, profile=profile)

        def ready() -> bool:
            return first_screen_shown(app)

    result: dict[str, float] = {}
    original = app._display

    def display(screen, renderable):
        if renderable is not None and app.is_running and not result and ready():
            result.update(
                process_start=spawned,
                python_up=started,
                imported=imported,
                model_built=built,
                painted=time.time(),
                # CPU of the process from its start to the paint, the model's build left out:
                # a figure the machine's load moves much less than the wall clock's
                cpu_s=time.process_time() - (cpu_built - cpu_imported),
            )
            board = getattr(app, "board", None)
            if board is not None:  # panels mounted at the first paint, of those made
                result.update(mounted=len(board.ordered), panels=len(board.views))
            app.exit()
        return original(screen, renderable)

    app._display = display
    app.run(headless=True, size=(160, 50))
    print(json.dumps(result))


_COMPILED: dict[str, str] = {}


def compiled_env() -> dict[str, str]:
    """The environment of a fresh process that finds AWS View's modules compiled, as an
    installed package has them (pip compiles them when it installs; Textual's are) and as a
    checkout has them after its first run. With PYTHONDONTWRITEBYTECODE set, as in some shells,
    every process compiles the package again from source: ~0.04 s more of a first paint that
    the minimal app, all of whose modules are compiled, does not pay. The bytecode is kept in a
    cache of its own (PYTHONPYCACHEPREFIX), compiled once per benchmark run."""
    if not _COMPILED:
        _COMPILED.update(os.environ)
        _COMPILED.pop("PYTHONDONTWRITEBYTECODE", None)
        _COMPILED.setdefault(
            "PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(), "awsview-bench-pycache")
        )
        subprocess.run(
            [
                sys.executable,
                "-m",
                "compileall",
                "-q",
                "awsview",
                "tests/benchmarks",
                "tests/support",
            ],
            env=_COMPILED,
            cwd=_ROOT,
            capture_output=True,
            timeout=300,
        )
    return _COMPILED


def first_paint(which: str) -> dict[str, float]:
    env = compiled_env()
    spawned = time.time()
    out = subprocess.run(
        [sys.executable, "-m", "tests.benchmarks.bench_ui", "--first-paint", which, str(spawned)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=_ROOT,
        env=env,
    )
    line = [x for x in out.stdout.splitlines() if x.startswith("{")]
    if not line:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(line[-1])


def scale(keys: int = KEYS, minimal: bool = False) -> dict[str, float]:
    """The big model in this process: how long it takes to build, keypress → repaint while it
    changes, and RSS before and after. ``minimal``: the yardstick app instead, nothing changing."""
    from tests.support import sample

    started = time.perf_counter()
    profile, model = sample.big() if not minimal else (None, None)
    figures = {"model_build_s": time.perf_counter() - started, "rss_built_mb": _rss_mb()}
    figures.update(asyncio.run(keypresses(profile, model, keys)))
    figures["rss_mb"] = _rss_mb()
    return figures


def scale_in_child(keys: int = KEYS, minimal: bool = False) -> dict[str, float]:
    """scale() in a fresh process, so its RSS counts the viewer and nothing else."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.benchmarks.bench_ui",
            "--minimal-keys" if minimal else "--scale",
            str(keys),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=_ROOT,
    )
    line = [x for x in out.stdout.splitlines() if x.startswith("{")]
    if not line:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(line[-1])


def yardstick(keys: int = KEYS, paints: int = 3) -> dict[str, float]:
    """The minimal app on this machine now: median first paint of ``paints`` fresh processes,
    and keypress → repaint p50 / p95 in a fresh process."""
    painted = [first_paint("minimal") for _ in range(paints)]
    figures = {
        "paint_s": statistics.median(p["painted"] - p["process_start"] for p in painted),
        "paints": [p["painted"] - p["process_start"] for p in painted],
        "paint_cpu_s": statistics.median(p["cpu_s"] for p in painted),
    }
    keyed = scale_in_child(keys, minimal=True)
    figures.update(key_p50_ms=keyed["p50_ms"], key_p95_ms=keyed["p95_ms"], rss_mb=keyed["rss_mb"])
    return figures


def main() -> None:
    print("AWS View viewer benchmark (10,000 items, 1,000 executions, 100,000 log lines)")
    minimal = yardstick()
    print(
        "  yardstick, a minimal Textual app (one 200-row DataTable): first paint "
        f"{minimal['paint_s']:.2f} s (CPU {minimal['paint_cpu_s']:.3f} s), "
        f"keypress → repaint p50 {minimal['key_p50_ms']:.1f} ms, p95 {minimal['key_p95_ms']:.1f} ms"
    )
    for which in ("small", "big"):
        times = first_paint(which)
        total = times["painted"] - times["process_start"]
        without_model = total - (times["model_built"] - times["imported"])
        print(
            f"  first full paint, {which} model: {total:.2f} s from process start "
            f"(python {times['python_up'] - times['process_start']:.2f} s, imports "
            f"{times['imported'] - times['python_up']:.2f} s, model "
            f"{times['model_built'] - times['imported']:.2f} s, "
            f"app {times['painted'] - times['model_built']:.2f} s; {without_model:.2f} s without "
            "building the model; "
            f"{without_model / minimal['paint_s']:.2f}× the minimal app's; CPU "
            f"{times['cpu_s']:.3f} s, {times['cpu_s'] / minimal['paint_cpu_s']:.2f}× its)"
        )
    figures = scale()
    print(
        f"  big model built in {figures['model_build_s']:.2f} s; RSS "
        f"{figures['rss_built_mb']:.0f} MB"
    )
    print(
        f"  keypress → repaint while polling ({figures['keys']} keys, {figures['update_rounds']} "
        "update rounds): "
        f"p50 {figures['p50_ms']:.1f} ms, p95 {figures['p95_ms']:.1f} ms "
        f"({figures['p95_ms'] / minimal['key_p95_ms']:.2f}× the minimal app's), max "
        f"{figures['max_ms']:.1f} ms"
    )
    print(f"  RSS after the run: {figures['rss_mb']:.0f} MB")
    print(
        "  targets: keypress p95 ≤ 2× the minimal app's, "
        "RSS < 300 MB, first paint ≤ 1.5× the minimal app's"
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--first-paint":
        first_paint_child(sys.argv[2], float(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] in ("--scale", "--minimal-keys"):
        print(
            json.dumps(
                scale(
                    int(sys.argv[2]) if len(sys.argv) > 2 else KEYS,
                    minimal=sys.argv[1] == "--minimal-keys",
                )
            )
        )
    else:
        main()
