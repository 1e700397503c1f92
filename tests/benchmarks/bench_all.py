"""Every figure `make bench` reports, in one run: AWS View against two baselines running at the
same time on one embedded emulator, then the viewer at scale, first paint and a lab's docs.
Prints figures, targets and whether each is met; asserts nothing.

    python -m tests.benchmarks.bench_all [--quick] [--one-process]

Three observers, each with its own connection (its own aiobotocore session, clients and call
counter), all read-only:
- AWS View: the real scheduler at its defaults feeding the real app (headless); a change counts
  as seen when the app paints a frame whose panel holds it. It runs in a process of its own, as
  a learner runs it (viewer_probe.py); --one-process runs it on this process's event loop,
  beside the emulator and the baselines.
- tail: `aws logs tail --follow` on the worker's log group (FilterLogEvents every 5 s from the
  newest timestamp seen, event ids deduplicated); it only ever shows log lines.
- naive: every resource every 2 s with fresh pollers (bench_core's NaiveViewer); a change
  counts as seen at the end of the round that read it.
Idle phase: nothing changes. Lab phase: the lab plays (bench_core.play_lab) while four streams
of changes (item write, log line, execution status, queue count) run side by side, each change
at a random gap after the previous one (never waiting for an observer, which would lock the
changes to its poll cycle). Latency figures count the changes made while AWS View was active
(polling fast); the ones made while it was idle are reported apart.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from awsview.aws.ratelimit import RateLimiter
from awsview.aws.session import Connection, Target
from awsview.pollers.base import LabModel
from awsview.pollers.dynamodb import TablePoller
from awsview.pollers.logs import LogPoller
from awsview.pollers.queues import QueuePoller
from awsview.pollers.stepfunctions import ExecutionPoller
from tests.benchmarks import bench_ui
from tests.benchmarks.bench_core import (KINDS, LAB, UNLIMITED, WORKER_LOG, Changes, NaiveViewer, pct, play_lab,
                                         prepare, start_emulator)
from tests.benchmarks.observers import (AWSVIEW, MODEL, NAIVE, TAIL, TAIL_EVERY_S, FirstSeen, LogTail, Stalls,
                                        stalled)
from tests.benchmarks.viewer_probe import SCREEN, ViewerProbe, ViewerProcess, bench_profile

POLLER_OF = {"item write": TablePoller.kind, "log line": LogPoller.kind,
             "execution status": ExecutionPoller.kind, "queue count": QueuePoller.kind}
GAP_S = (0.5, 2.5)  # between two changes of one kind
GIVE_UP_S = 20.0  # a change not shown by then counts as missed
TARGET_P95_S = 0.5
TARGET_IDLE_RATIO = 1 / 3
TARGET_KEY_MS = 100.0
TARGET_RSS_MB = 300.0
TARGET_PAINT_S = 1.0
PAINTS = 3  # first paint is one number per process: the median of a few
FULL = {"idle_s": 60.0, "samples": 40, "keys": 200}
QUICK = {"idle_s": 20.0, "samples": 10, "keys": 60}


@dataclass
class Sample:
    """One timed change."""

    kind: str
    n: int
    active: bool  # AWS View was polling fast when the change was made
    made: float  # time.time()


def expected(kind: str) -> tuple[str, ...]:
    return (AWSVIEW, MODEL, TAIL, NAIVE) if kind == "log line" else (AWSVIEW, MODEL, NAIVE)


async def _idle(probe: Any, quiet_s: float = 3.0, limit: float = 90.0) -> float:
    """Waits until AWS View has polled slowly for quiet_s; the first rounds' own changes keep it
    active for a while."""
    started = time.monotonic()
    await asyncio.sleep(2.0)
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < quiet_s and time.monotonic() - started < limit:
        await asyncio.sleep(0.25)
        if await probe.active():
            quiet_since = time.monotonic()
    return time.monotonic() - started


async def _counts(probe: Any, conns: dict[str, Connection]) -> dict[str, int]:
    return {AWSVIEW: await probe.calls(), **{name: conn.limiter.total_calls for name, conn in conns.items()}}


def _per_minute(before: dict[str, int], after: dict[str, int], seconds: float) -> dict[str, float]:
    return {name: (after[name] - before[name]) * 60 / seconds for name in before}


async def _stream(probe: Any, changes: Changes, kind: str, samples: int, rng: random.Random,
                  made: list[Sample]) -> None:
    for n in range(samples):
        await asyncio.sleep(rng.uniform(*GAP_S))
        active = await probe.active()
        made.append(Sample(kind, n, active, await asyncio.to_thread(changes.make, kind, n)))


async def _all_shown(probe: Any, first: FirstSeen, samples: list[Sample]) -> None:
    """Waits until every observer has shown every change it can show, or GIVE_UP_S has passed."""
    deadline = max(s.made for s in samples) + GIVE_UP_S
    while time.time() < deadline:
        viewer = FirstSeen()
        viewer.merge(await probe.seen())
        if all((s.kind, s.n) in (viewer.at if o in (AWSVIEW, MODEL) else first.at)[o]
               for s in samples for o in expected(s.kind)):
            return
        await asyncio.sleep(0.5)


async def live(idle_s: float, samples: int, one_process: bool, log: Callable[[str], None]) -> dict[str, Any]:
    """The idle and lab phases with all three observers on one emulator."""
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(16))
    emulator = start_emulator()
    url = emulator.endpoint_url
    figures: dict[str, Any] = {"windows": {}}
    first = FirstSeen()
    try:
        started = time.monotonic()
        changes = Changes(prepare(url))
        log(f"lab set up in {time.monotonic() - started:.1f} s")
        async with Connection(Target(endpoint_url=url)) as tail_conn, \
                Connection(Target(endpoint_url=url), RateLimiter(UNLIMITED, scale=100)) as naive_conn:
            conns = {TAIL: tail_conn, NAIVE: naive_conn}
            rounds: list[float] = []

            def naive_round(model: LabModel) -> None:
                rounds.append(time.time())
                for kind in KINDS:
                    first.saw(NAIVE, kind, Changes.shown(kind, model))

            naive = NaiveViewer(naive_conn, bench_profile(), on_round=naive_round)
            tail = LogTail(tail_conn, WORKER_LOG, lambda e: first.saw(TAIL, "log line",
                                                                      Changes.in_log(e.get("message") or "")))
            stalls = Stalls()
            probe = ViewerProbe(url) if one_process else ViewerProcess(url)
            await probe.start()
            naive.start()
            tail.start()
            stalls.start()
            waited = await _idle(probe)
            log(f"AWS View idle after {waited:.1f} s; counting calls for {idle_s:.0f} s")
            before, t0 = await _counts(probe, conns), time.time()
            await asyncio.sleep(idle_s)
            figures["windows"]["idle"] = (t0, time.time())
            figures["idle"] = _per_minute(before, await _counts(probe, conns), time.time() - t0)

            log(f"lab phase: the lab plays and {samples} changes of each kind are made")
            rng, made = random.Random(5), []
            before, t0 = await _counts(probe, conns), time.time()
            await asyncio.gather(asyncio.to_thread(play_lab, url),
                                 *(_stream(probe, changes, kind, samples, rng, made) for kind in KINDS))
            await _all_shown(probe, first, made)
            t1 = time.time()
            figures["windows"]["lab"] = (t0, t1)
            figures["lab"] = _per_minute(before, await _counts(probe, conns), t1 - t0)
            figures["naive_rounds"] = [b - a for a, b in zip(rounds, rounds[1:]) if t0 <= a < t1]
            await stalls.stop()
            await tail.stop()
            await naive.stop()
            viewer = await probe.stop()
        first.merge(viewer.pop("seen"))
        figures.update(viewer=viewer, samples=made, first=first, stalls=stalls.to_json(), one_process=one_process)
        figures["polls"] = {k: [(s, d) for s, d in v if t0 <= s < t1] for k, v in viewer["polls"].items()}
    finally:
        emulator.stop()
    return figures


# In a fresh process: generate() starts its own in-process emulator, and moto's backends are
# per process, so the one the live phase used would still hold its tables.
DOCS_CHILD = """
import json, sys, time
from pathlib import Path
try:
    from awsview.docs import generate
except ImportError:
    print(json.dumps({"error": "not available"}))
    raise SystemExit
started = time.perf_counter()
try:
    made = generate("q05", Path(sys.argv[1]))
except Exception as exc:
    print(json.dumps({"error": f"failed: {type(exc).__name__}: {exc}"}))
    raise SystemExit
print(json.dumps({"seconds": time.perf_counter() - started, "files": len(made)}))
"""


def docs_seconds(log: Callable[[str], None]) -> float | str:
    """generate("q05", tmpdir) timed inside a fresh process; a string says why there is no figure."""
    output = tempfile.mkdtemp(prefix="awsview-bench-docs-")
    out = subprocess.run([sys.executable, "-c", DOCS_CHILD, output], capture_output=True, text=True,
                         timeout=600, cwd=bench_ui._ROOT)
    line = [x for x in out.stdout.splitlines() if x.startswith("{")]
    if not line:
        return f"failed: {(out.stderr.strip().splitlines() or ['no output'])[-1]}"[:100]
    result = json.loads(line[-1])
    if "error" in result:
        return result["error"][:100]
    log(f"docs q05: {result['files']} files in {result['seconds']:.2f} s")
    return result["seconds"]


def machine() -> str:
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            model = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), model)
    except OSError:
        pass
    return (f"{model}, {os.cpu_count()} cores, Python {platform.python_version()} "
            f"({platform.python_implementation()}), {platform.system()} {platform.release()}")


def _s(value: float) -> str:
    return f"{value:.2f}"


def _p(values: list[float]) -> str:
    return f"{_s(statistics.median(values))} / {_s(pct(values, .95))}" if values else "—"


def _ratio(mine: float, base: float) -> str:
    return f"{mine / base:.2f}" if base else "—"


def _latency(figures: dict[str, Any], sample: Sample, observer: str) -> float | None:
    seen = figures["first"].at[observer].get((sample.kind, sample.n))
    return None if seen is None else seen - sample.made


def _latencies(figures: dict[str, Any], kind: str, observer: str, active: bool = True) -> list[float]:
    return [v for s in figures["samples"] if s.kind == kind and s.active == active
            and (v := _latency(figures, s, observer)) is not None]


def table(figures: dict[str, Any]) -> list[tuple[str, ...]]:
    """The rows: figure | AWS View | baseline(s) | ratio | target | met."""
    rows: list[tuple[str, ...]] = []
    for kind in KINDS:
        mine, naive = _latencies(figures, kind, AWSVIEW), _latencies(figures, kind, NAIVE)
        tail = _latencies(figures, kind, TAIL)
        if kind == "log line":
            bases = [f"tail {_p(tail)}" if tail else "tail: none seen"]
            ratios = [f"tail {_ratio(pct(mine, .95), pct(tail, .95))}" if mine and tail else "tail —"]
        else:
            bases, ratios = ["tail — (not shown)"], ["tail —"]
        bases.append(f"naive {_p(naive)}" if naive else "naive: none seen")
        ratios.append(f"naive {_ratio(pct(mine, .95), pct(naive, .95))}" if mine and naive else "naive —")
        met = ("yes" if pct(mine, .95) <= TARGET_P95_S else "NO") if mine else "NO"
        rows.append((f"{kind} → screen, p50 / p95 s (active)", _p(mine) if mine else "none seen",
                     " · ".join(bases), " · ".join(ratios) + " (p95)", f"p95 ≤ {TARGET_P95_S} s", met))
    for phase, label in (("idle", "idle"), ("lab", "during the lab")):
        calls = figures[phase]
        idle = phase == "idle"
        met = ("yes" if calls[AWSVIEW] <= TARGET_IDLE_RATIO * calls[NAIVE] else "NO") if idle else "—"
        rows.append((f"API calls per minute, {label}", f"{calls[AWSVIEW]:.0f}",
                     f"tail {calls[TAIL]:.0f} · naive {calls[NAIVE]:.0f}",
                     f"tail {_ratio(calls[AWSVIEW], calls[TAIL])} · naive {_ratio(calls[AWSVIEW], calls[NAIVE])}",
                     "≤ 1/3 of naive" if idle else "—", met))
    scale = figures["scale"]
    rows.append(("keypress → repaint, p50 / p95 ms (10,000 items, 1,000 executions, 100,000 log lines)",
                 f"{scale['p50_ms']:.0f} / {scale['p95_ms']:.0f}", "—", "—", f"p95 < {TARGET_KEY_MS:.0f} ms",
                 "yes" if scale["p95_ms"] < TARGET_KEY_MS else "NO"))
    rows.append(("RSS with that model, after the keys", f"{scale['rss_mb']:.0f} MB", "—", "—",
                 f"< {TARGET_RSS_MB:.0f} MB", "yes" if scale["rss_mb"] < TARGET_RSS_MB else "NO"))
    for which, label in (("small", "lab-size model"), ("big", "big model, not counting its build")):
        paints = figures[f"paint_{which}"]
        total = statistics.median(p["painted"] - p["process_start"] for p in paints)
        shown = statistics.median(p["painted"] - p["process_start"] - (p["model_built"] - p["imported"])
                                  for p in paints) if which == "big" else total
        note = f" ({total:.2f} with it)" if which == "big" else ""
        rows.append((f"process start → first full paint, {label} (median of {len(paints)})", f"{shown:.2f} s{note}",
                     "—", "—", f"≤ {TARGET_PAINT_S:.1f} s", "yes" if shown <= TARGET_PAINT_S else "NO"))
    docs = figures["docs"]
    rows.append(('docs: generate("q05") run time', f"{docs:.1f} s" if isinstance(docs, float) else f"docs: {docs}",
                 "—", "—", "—", "—"))
    return rows


def print_table(rows: list[tuple[str, ...]]) -> None:
    header = ("figure", "AWS View", "baseline(s)", "ratio", "target", "met")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for cells in (header, tuple("-" * w for w in widths), *rows):
        print("| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |")


def details(figures: dict[str, Any]) -> None:
    """What explains the table: AWS View's latency before the repaint, its polls, the naive
    viewer's rounds, and how much the shared event loop and collector held everything up."""
    t0, t1 = figures["windows"]["lab"]
    print()
    print(f"lab phase {t1 - t0:.0f} s; p50 / p95 s")
    for kind in KINDS:
        mine = [s for s in figures["samples"] if s.kind == kind]
        polls = figures["polls"].get(POLLER_OF[kind], [])
        periods = [b[0] - a[0] for a, b in zip(polls, polls[1:])]
        idle = _latencies(figures, kind, AWSVIEW, active=False)
        missed = {o: sum(_latency(figures, s, o) is None for s in mine) for o in expected(kind) if o != MODEL}
        missed_text = ", ".join(f"{o} {m}" for o, m in missed.items() if m)
        print(f"  {kind:17} AWS View change → model {_p(_latencies(figures, kind, MODEL))}; "
              f"{POLLER_OF[kind]} poll takes {_p([d for _, d in polls])}, starts every {_p(periods)}"
              + (f"; made while idle: {len(idle)}, → screen max {max(idle):.2f}" if idle else "")
              + (f"; not shown within {GIVE_UP_S:.0f} s: {missed_text}" if missed_text else ""))
    viewer = figures["viewer"]
    slow = [(s, v) for s in figures["samples"] if s.active
            and (v := _latency(figures, s, AWSVIEW) or GIVE_UP_S) > TARGET_P95_S]
    hit = [s for s, v in slow if stalled(viewer["stalls"], s.made, s.made + v)]
    print(f"  active changes AWS View showed in more than {TARGET_P95_S} s: {len(slow)} of "
          f"{sum(s.active for s in figures['samples'])}; during {len(hit)} of them its event loop stalled "
          f"≥ 0.1 s (a full collection or a late wake-up)")
    if viewer["failures"]:
        print(f"  AWS View polls that failed (and backed off): {viewer['failures']}")
    rounds = figures["naive_rounds"]
    print(f"  naive viewer: a round (every resource, one after another; it grows with the lab's executions) "
          f"ends every {_p(rounds)}, max {_s(max(rounds, default=0))}")
    loops = [("AWS View's", viewer["stalls"])] + ([] if figures["one_process"] else
                                                   [("the bench's (emulator, baselines)", figures["stalls"])])
    for name, stalls in loops:
        for phase, (a, b) in figures["windows"].items():
            late = [v for t, v in stalls["late"] if a <= t < b]
            full = [d for t, d in stalls["collections"] if a <= t < b]
            print(f"  {phase}, {name} event loop: lateness of a 50 ms sleep p50 / p95 {_p(late)}, max "
                  f"{_s(max(late, default=0))} s; {len(full)} full collections, {sum(d >= 0.1 for d in full)} of "
                  f"them ≥ 0.1 s, longest {_s(max(full, default=0))} s")
    if viewer["offscreen"]:
        print(f"  note: panels partly off screen at the end: {', '.join(viewer['offscreen'])}")
    busiest = sorted(viewer["calls"].items(), key=lambda kv: -kv[1])[:5]
    print("  AWS View's busiest APIs over the run: " + ", ".join(f"{api} {c}" for api, c in busiest))
    scale = figures["scale"]
    print(f"  keypress: {scale['keys']} keys, max {scale['max_ms']:.0f} ms; big model built in "
          f"{scale['model_build_s']:.2f} s")
    for which in ("small", "big"):
        runs = ", ".join(f"{p['painted'] - p['process_start']:.2f}" for p in figures[f"paint_{which}"])
        print(f"  first full paint, {which} model, each run (s, from process start): {runs}")


def main(quick: bool = False, one_process: bool = False) -> None:
    settings = QUICK if quick else FULL
    started = time.monotonic()

    def log(text: str) -> None:
        print(f"[{time.monotonic() - started:6.1f} s] {text}", flush=True)

    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f} at the start")
    where = "on this process's event loop" if one_process else "in a process of its own"
    print(f"one embedded emulator in this process with `aws logs tail --follow` (every {TAIL_EVERY_S:.0f} s) and a "
          f"naive viewer (every 2 s) on its event loop; AWS View (scheduler defaults, lab {LAB}, app headless "
          f"{SCREEN[0]}×{SCREEN[1]}) {where}{' — quick run' if quick else ''}", flush=True)
    figures = asyncio.run(live(settings["idle_s"], settings["samples"], one_process, log))
    log("viewer at scale (a fresh process)")
    figures["scale"] = bench_ui.scale_in_child(settings["keys"])
    log(f"first full paint ({PAINTS} fresh processes for each model)")
    for which in ("small", "big"):
        figures[f"paint_{which}"] = [bench_ui.first_paint(which) for _ in range(PAINTS)]
    figures["docs"] = docs_seconds(log)
    details(figures)
    print()
    print_table(table(figures))
    print(f"\nbench_all took {time.monotonic() - started:.0f} s; load average {os.getloadavg()[0]:.1f} at the end "
          f"(whatever else runs on the machine shares its {os.cpu_count()} cores)")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv[1:], one_process="--one-process" in sys.argv[1:])
