"""AWS View as bench_all times it: the real scheduler at its defaults feeding the real app
(headless), recording when each timed change first reaches the model and the screen.

By default it runs in a process of its own, the way a learner runs the viewer beside the
emulator (``python -m tests.benchmarks.viewer_probe ENDPOINT`` answers one command a line on
stdin: active, calls, seen, cpu, stop); ViewerProbe is the same thing inside the caller's event
loop. Its CPU is read from /proc by the parent; the probe itself says how much of its main
thread's CPU went to screen updates and to rendering panels (the rest is polls, the change feed
and the event loop). ``AWSVIEW_PROFILE=FILE`` cProfiles the viewer process into FILE.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

from awsview import labspec
from awsview.aws.session import Connection, Target
from awsview.polling.scheduler import Scheduler
from tests.benchmarks.bench_core import KINDS, LAB, ORDERS, STOCK_KINDS, WORKER_LOG, Changes
from tests.benchmarks.observers import (
    AWSVIEW,
    MODEL,
    FirstSeen,
    Stalls,
    hook_frames,
    shown_on_screen,
    time_polls,
)

# The panels the four changes land in come first and the screen is tall enough to show them whole;
# the others follow.
SCREEN = (160, 64)
FIRST_PANELS = ("queues", "executions", "tables", "logs")
MODEL_KEY = {
    "item write": f"table:{ORDERS}",
    "log line": f"logs:{WORKER_LOG}",
    "execution status": f"executions:{ORDERS}",
    "execution start": f"executions:{ORDERS}",
    "queue count": "queues",
}
WATCHED = tuple(dict.fromkeys(KINDS + STOCK_KINDS))  # the emulator's kinds and stock moto's
REPLY = "@@"  # marks the probe's answers among anything else written to stdout
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuShares:
    """Main-thread CPU (thread_time) spent in a few synchronous places, by name."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._depth = 0

    def wrap(self, owner: Any, name: str, label: str) -> None:
        original: Callable = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            if self._depth:  # nested (a layout that refreshes the compositor): counted once
                return original(*args, **kwargs)
            self._depth += 1
            started = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                self._depth -= 1
                self.seconds[label] = self.seconds.get(label, 0.0) + time.thread_time() - started

        setattr(owner, name, timed)


def bench_profile() -> labspec.LabSpec:
    profile = labspec.load(LAB)
    return dataclasses.replace(
        profile, panels=FIRST_PANELS + tuple(p for p in profile.panels if p not in FIRST_PANELS)
    )


class ViewerProbe:
    """The viewer on the caller's event loop, with its own connection; records when each change
    first reaches the model and when a painted frame first holds it."""

    def __init__(self, url: str):
        self.url = url
        self.first = FirstSeen()
        self.stalls = Stalls()
        self.shares = CpuShares()
        self._stack = AsyncExitStack()

    async def start(self) -> None:
        from textual.screen import Screen

        from awsview.ui.viewer.app import AWSViewApp

        conn = await self._stack.enter_async_context(Connection(Target(endpoint_url=self.url)))
        profile = bench_profile()
        self.conn, self.viewer = conn, Scheduler(conn, profile)
        self.polls, self.failures = time_polls(self.viewer)
        self.app = AWSViewApp(model=self.viewer.model, profile=profile)
        for name in ("_on_timer_update", "_refresh_layout", "_compositor_refresh"):
            self.shares.wrap(Screen, name, "screen updates")
        self.shares.wrap(self.app, "refresh_panels", "rendering panels")
        self.viewer.model.listeners.append(self._model_changed)
        hook_frames(self.app, self._frame)
        await self._stack.enter_async_context(self.app.run_test(size=SCREEN))
        self.viewer.start()
        self.stalls.start()

    def _model_changed(self, changed: list[Any]) -> None:
        keys = {s.key for s in changed}
        for kind in WATCHED:
            if MODEL_KEY[kind] in keys:
                self.first.saw(MODEL, kind, Changes.shown(kind, self.viewer.model))

    def _frame(self) -> None:
        for kind in WATCHED:  # only while something has reached the model but not the screen
            if self.first.count[(MODEL, kind)] > self.first.count[(AWSVIEW, kind)]:
                self.first.saw(AWSVIEW, kind, shown_on_screen(kind, self.app.board.views))

    async def active(self) -> bool:
        return self.viewer.active()

    async def calls(self) -> int:
        return self.conn.limiter.total_calls

    async def seen(self) -> dict[str, dict[str, float]]:
        return self.first.to_json()

    async def cpu(self) -> dict[str, Any]:
        """Main-thread CPU so far, and the parts of it spent in screen updates and panels;
        whether the change feed is followed."""
        return {
            "thread": time.thread_time(),
            "shares": dict(self.shares.seconds),
            "pushed": self.viewer.pushed,
        }

    async def process_cpu(self) -> float | None:
        return None  # in the caller's process: its CPU is everyone's

    async def stop(self) -> dict[str, Any]:
        views = self.app.board.views
        offscreen = [
            f"{i} {tuple(views[i].region)}"
            for i in ("queues", "executions", f"tables:{ORDERS}", f"logs:{WORKER_LOG}")
            if i in views and not self.app.screen.region.contains_region(views[i].region)
        ]
        await self.stalls.stop()
        await self.viewer.stop()
        await self._stack.aclose()
        return {
            "seen": self.first.to_json(),
            "polls": dict(self.polls),
            "failures": dict(self.failures),
            "stalls": self.stalls.to_json(),
            "offscreen": offscreen,
            "calls": {f"{s}.{o}": c for (s, o), c in self.conn.limiter.calls.items()},
        }


class ViewerProcess:
    """ViewerProbe in a child process; the same methods, each a round trip over its stdin/stdout."""

    def __init__(self, url: str):
        self.url = url
        self._errors = tempfile.TemporaryFile()
        self._proc: asyncio.subprocess.Process | None = None
        self._turn = asyncio.Lock()  # one question at a time: the streams ask concurrently

    async def start(self) -> None:
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.benchmarks.viewer_probe",
            self.url,
            cwd=ROOT,
            limit=2**26,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._errors,
        )
        await self._answer()

    async def _answer(self) -> Any:
        while True:
            line = await self._proc.stdout.readline()
            if not line:
                self._errors.seek(0)
                raise RuntimeError(
                    "the viewer process ended: " + self._errors.read().decode()[-2000:]
                )
            if line.startswith(REPLY.encode()):
                return json.loads(line[len(REPLY) :])

    async def _ask(self, command: str) -> Any:
        async with self._turn:
            self._proc.stdin.write(f"{command}\n".encode())
            await self._proc.stdin.drain()
            return await self._answer()

    async def active(self) -> bool:
        return await self._ask("active")

    async def calls(self) -> int:
        return await self._ask("calls")

    async def seen(self) -> dict[str, dict[str, float]]:
        return await self._ask("seen")

    async def cpu(self) -> dict[str, Any]:
        return await self._ask("cpu")

    async def process_cpu(self) -> float | None:
        return proc_cpu_seconds(self._proc.pid)

    async def stop(self) -> dict[str, Any]:
        result = await self._ask("stop")
        await self._proc.wait()
        return result


async def _serve(url: str) -> None:
    profile_to = os.environ.get("AWSVIEW_PROFILE")  # cProfile the viewer into this file
    profiler = None
    if profile_to:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    probe = ViewerProbe(url)
    await probe.start()

    def reply(value: Any) -> None:
        # Straight to the descriptor: while the app runs, Textual redirects sys.stdout.
        data = (REPLY + json.dumps(value) + "\n").encode()
        while data:
            data = data[os.write(1, data) :]

    reply("ready")
    while True:
        command = (await asyncio.to_thread(sys.__stdin__.readline)).strip()
        if command in ("stop", ""):
            result = await probe.stop()
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(profile_to)
            reply(result)
            return
        reply(await getattr(probe, command)())


if __name__ == "__main__":
    asyncio.run(_serve(sys.argv[1]))
