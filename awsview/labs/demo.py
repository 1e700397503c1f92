"""The demo driver: plays labs step by step inside the running viewer, with a step banner.

Before each step the banner says what comes next and counts down; `space` pauses the countdown,
`n` plays the step at once. The lab folder's commands run in a thread; the viewer keeps
polling the same endpoint meanwhile, so every step shows up in the panels as it happens.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from awsview.labs.definition import Lab, LabError

SETTLE_S = 1.5  # after a step, let the pollers catch up before the next countdown


@dataclass
class DemoDriver:
    labs: list[Lab]
    endpoint_url: str
    step_seconds: float = 8.0
    region: str = "us-east-1"
    paused: bool = False
    finished: bool = False
    failed: str | None = None
    played: list[str] = field(default_factory=list)  # "lab:step" in order, for tests

    def __post_init__(self) -> None:
        self.app: Any = None
        self._go = asyncio.Event()
        self._skip = False
        self._last_line = ""
        self._current = ("", "ok")

    def attach(self, app: Any) -> None:
        self.app = app

    def toggle_pause(self) -> None:
        self.paused = not self.paused
        self._go.set()  # wake the countdown so the banner says so at once

    def next_step(self) -> None:
        self.paused = False
        self._skip = True
        self._go.set()

    async def run(self) -> None:
        from awsview.labs.player import LabPlayer

        try:
            for lab in self.labs:
                self.app.switch_lab(lab.name)
                player = LabPlayer(
                    lab, endpoint_url=self.endpoint_url, region=self.region, log=self._log
                )
                self._banner(f"{lab.name} · {lab.title} · setting up what the lab VM provides…")
                await _in_daemon_thread(player.setup)
                for number, step in enumerate(lab.steps, start=1):
                    where = f"{lab.name} step {number}/{len(lab.steps)}"
                    await self._countdown(f"{where} next: {step.title}")
                    self._banner(f"{where} · {step.title} · playing…")
                    await _in_daemon_thread(player.play, only=step.key)
                    self.played.append(f"{lab.name}:{step.key}")
                    self._banner(f"{where} · {step.title} · done — watch the panels")
                    await asyncio.sleep(SETTLE_S)
        except LabError as exc:
            self.failed = str(exc)
            self._banner(f"demo stopped: {exc}", "error")
            return
        finally:
            self.finished = True
            if self.app is not None:
                self.app.refresh_bindings()
        names = ", ".join(lab.name for lab in self.labs)
        self._banner(
            f"Demo finished: every step of {names} played. The viewer stays live; q quits.", "done"
        )

    async def _countdown(self, text: str) -> None:
        self._skip = False
        left = self.step_seconds
        while left > 0 and not self._skip:
            if self.paused:
                self._banner(f"{text} · paused: space resumes, n plays it now", "paused")
            else:
                self._banner(f"{text} · in {left:.0f} s (space pauses, n plays it now)")
            self._go.clear()
            try:
                await asyncio.wait_for(
                    self._go.wait(), timeout=None if self.paused else min(1.0, left)
                )
            except TimeoutError:
                left -= min(1.0, left)

    def _banner(self, text: str, level: str = "ok") -> None:
        self._current = (text, level)
        if self.app is not None:
            line = f"\n{self._last_line}" if self._last_line and level == "ok" else ""
            self.app.set_banner(f"▶ {text}{line}", level)

    def _log(self, line: str) -> None:
        # Called from the player's thread.
        self._last_line = " ".join(line.split())
        if self.app is not None:
            try:
                self.app.call_from_thread(self._banner, *self._current)
            except RuntimeError:
                pass  # the app is closing


async def _in_daemon_thread(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Like asyncio.to_thread, but quitting the viewer mid-step does not wait for the step
    (asyncio.run waits for its executor's threads; q05's steps wait for a queue to drain)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def run() -> None:
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:  # handed to the awaiting coroutine
            if not loop.is_closed():
                loop.call_soon_threadsafe(lambda e=exc: done.done() or done.set_exception(e))
        else:
            if not loop.is_closed():
                loop.call_soon_threadsafe(lambda: done.done() or done.set_result(result))

    threading.Thread(
        target=run, name=f"demo-{getattr(fn, '__name__', 'step')}", daemon=True
    ).start()
    return await done
