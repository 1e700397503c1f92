"""Back as soon as the endpoint is back: after an emulator killed with SIGKILL and started again
on its port and state directory, every panel of a viewer that stayed open is live within
RECOVERY_S of the endpoint answering — the checkpoints border included; and a poller backing off
reads again when a call elsewhere gets an answer, whatever its failure was.

The bound is the one the viewer promises (docs/reliability.md); the event loop's own stalls (a
busy machine) are added to it, since they delay every reader alike and are measured here.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from awsview import labspec
from awsview.aws.session import Connection, Target
from awsview.core import render
from awsview.model.state import LabState
from awsview.polling.base import Poller
from awsview.polling.live import LivePolling
from awsview.polling.scheduler import WOKEN_EVERY_S, Scheduler
from tests.support import processes
from tests.support.emulator import RunningEmulator

RECOVERY_S = 5.0
LAB = "ev05"
LAB_FOLDER = Path(__file__).resolve().parents[2] / "labs" / LAB
# Two kills keep the suite fast; RECOVERY_KILLS=20 runs the scenario twenty times in a row.
KILLS = int(os.environ.get("RECOVERY_KILLS") or 2)
SLOWER = 50.0  # a scheduler's speed: every interval and backoff 50 times as long


def _lab(action: str, running: RunningEmulator, *more: str) -> None:
    """``awsview lab ACTION`` of the lab folder, in a child process as a learner runs it."""
    done = processes.awsview(
        "lab",
        action,
        str(LAB_FOLDER),
        *more,
        "--endpoint-url",
        running.endpoint_url,
        timeout=600,
        env=running.env,
    )
    assert done.returncode == 0, f"lab {action}: {done.stdout[-2000:]}\n{done.stderr[-2000:]}"


def not_live(model: LabState, profile: labspec.LabSpec) -> list[str]:
    """Every panel that is neither live, absent nor empty yet, with its border text."""
    return [
        f"{p.name}: {p.freshness}"
        for p in render.panels(model, profile)
        if not (p.health in ("absent", "none") or (p.health == "ok" and p.freshness == "live"))
    ]


class _Lag:
    """The longest stall of the event loop since ``reset``."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _watch(self) -> None:
        while True:
            began = time.monotonic()
            await asyncio.sleep(0.05)
            self.worst = max(self.worst, time.monotonic() - began - 0.05)

    def __enter__(self) -> _Lag:
        self._task = asyncio.get_running_loop().create_task(self._watch())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()

    def reset(self) -> None:
        self.worst = 0.0


async def _until(condition, what: str, within: float) -> float:
    """Waits for ``condition``; returns how long it took."""
    began = time.monotonic()
    while not condition():
        assert time.monotonic() - began < within, f"{what}: not within {within:.1f} s"
        await asyncio.sleep(0.05)
    return time.monotonic() - began


def _restart(running: RunningEmulator) -> None:
    """Started again on the same port and state directory (the port may take a moment)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            running.start()
            return
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.timeout(600 + 120 * KILLS)  # a busy machine took 40 s a kill
async def test_every_panel_is_live_soon_after_a_killed_emulator_answers_again(
    spawn_emulator, tmp_path
):
    running = spawn_emulator(tmp_path / "state")
    await asyncio.to_thread(_lab, "play", running, "--until", "executions")
    shown: dict[str, object] = {}
    viewer = LivePolling(
        Target(endpoint_url=running.endpoint_url),
        LAB,
        "",
        on_profile=lambda profile, model: shown.update(profile=profile, model=model),
        on_status=lambda level, text: None,
    )
    polling = asyncio.create_task(viewer.run())

    def waiting() -> list[str]:
        if "model" not in shown:
            return ["no model yet"]
        return not_live(shown["model"], shown["profile"])  # type: ignore[arg-type]

    took: list[tuple[float, float, str]] = []  # per kill: recovery, its bound, what was late
    try:
        with _Lag() as lag:
            await _until(lambda: not waiting(), "every panel live before the kill", 120)
            for _ in range(KILLS):
                assert running.process is not None
                running.process.kill()
                running.process.wait()
                for pipe in (running.process.stdout, running.process.stderr):
                    pipe.close()
                await _until(lambda: bool(waiting()), "the viewer noticed", 60)
                await asyncio.to_thread(_restart, running)
                answered = time.monotonic()
                lag.reset()
                setup = asyncio.create_task(asyncio.to_thread(_lab, "setup", running))
                late = ""
                while waiting():
                    if not late and time.monotonic() - answered > RECOVERY_S + lag.worst:
                        late = "; ".join(waiting())
                    assert time.monotonic() - answered < 120, "; ".join(waiting())
                    await asyncio.sleep(0.05)
                took.append((time.monotonic() - answered, RECOVERY_S + lag.worst, late))
                print(f"kill {len(took)}: live again {took[-1][0]:.2f} s after", flush=True)
                await setup
                # The lab set up again moves the panels; they settle live again as promptly.
                lag.reset()
                await _until(lambda: not waiting(), "every panel live after the setup", 60)
    finally:
        polling.cancel()
        await asyncio.gather(polling, return_exceptions=True)
    said = ", ".join(f"{t:.2f} s" for t, _, _ in took)
    print(f"live again after the endpoint answered: {said}")
    slow = [
        f"{t:.1f} s (bound {bound:.1f} s, event loop stalls included): {late}"
        for t, bound, late in took
        if t > bound
    ]
    assert not slow, f"{len(slow)} of {len(took)} kills: " + " | ".join(slow)


class _Flaky(Poller):
    """Reads one queue listing, or is refused as a throttled API is while ``state`` says so."""

    kind = "flaky"
    fast_interval = 0.01
    slow_interval = 1000.0  # a throttled backoff starts here: only a wake brings it back early

    def __init__(self, state: dict[str, bool]):
        super().__init__(labspec.generic_spec())
        self.state = state
        self.started: list[float] = []
        self.recovered_at: float | None = None

    async def poll(self, conn, model):
        from botocore.exceptions import ClientError

        self.started.append(time.monotonic())

        async def read():
            if self.state["throttled"]:
                error = {"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}
                raise ClientError(error, "ListQueues")
            return await conn.call("sqs", "list_queues")

        snapshot = await self.fetch(model, self.kind, read)
        if snapshot.health.value == "ok" and self.recovered_at is None and self.started[1:]:
            self.recovered_at = time.monotonic()
        return [snapshot]


class _Steady(Poller):
    """A poller whose calls keep getting answers."""

    kind = "steady"
    fast_interval = 0.01
    slow_interval = 0.01

    async def poll(self, conn, model):
        return [await self.fetch(model, self.kind, lambda: conn.call("sts", "get_caller_identity"))]


async def test_an_answer_elsewhere_wakes_a_throttled_poller_once_per_wake(emulator):
    """Its backoff is long (at speed 50, 100 s even on a local endpoint): it reads again when
    another call is answered, and, while it stays throttled, no more often than every
    WOKEN_EVERY_S after its first early read — a wake is one read, not a retry per answer of the
    others."""
    state = {"throttled": True}
    flaky = _Flaky(state)
    steady = _Steady(labspec.generic_spec())
    async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
        scheduler = Scheduler(
            conn, flaky.profile, pollers=[flaky, steady], feed=False, speed=SLOWER
        )
        scheduler.start()
        try:
            await _until(lambda: len(flaky.started) >= 3, "woken while throttled", 60)
            gaps = [b - a for a, b in zip(flaky.started, flaky.started[1:], strict=False)]
            assert min(gaps[1:]) >= WOKEN_EVERY_S - 0.1, gaps
            state["throttled"] = False
            await _until(lambda: flaky.recovered_at is not None, "back after its throttling", 60)
        finally:
            await scheduler.stop()
