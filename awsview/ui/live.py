"""The polling side of a live viewer: one connection, one scheduler for the current lab.

A failed preflight (endpoint down, bad credentials) does not stop anything: the scheduler runs
anyway, so every panel shows its own error instead of looking empty, and the preflight is retried
until it succeeds (then the lab is detected, if none was chosen).
"""

from __future__ import annotations

import asyncio
from typing import Callable

from awsview import profiles
from awsview.aws.session import Connection, Target
from awsview.dump import DumpError, detect_profile, preflight
from awsview.pollers.base import LabModel
from awsview.pollers.scheduler import Scheduler

RETRY_PREFLIGHT_S = 5.0


class LivePolling:
    """Runs until cancelled. ``on_profile`` gets each new (profile, model); ``on_status`` a level
    ("ok", "error") and one line about the connection."""

    def __init__(self, target: Target, lab: str | None, prefix: str,
                 on_profile: Callable[[profiles.LabProfile, LabModel], None],
                 on_status: Callable[[str, str], None], speed: float = 1.0, feed: bool = True):
        self.target = target
        self.lab = lab
        self.prefix = prefix
        self.on_profile = on_profile
        self.on_status = on_status
        self.speed = speed
        self.feed = feed  # follow the emulator's change feed when it has one
        self.account: str | None = None
        self._switch: asyncio.Queue[str] = asyncio.Queue()

    def switch(self, lab: str) -> None:
        """Show another lab from the next moment on (same connection)."""
        self._switch.put_nowait(lab)

    async def run(self) -> None:
        async with Connection(self.target) as conn:
            await self._preflight(conn)
            profile = await self._profile(conn)
            while True:
                model = LabModel()
                self.on_profile(profile, model)
                scheduler = Scheduler(conn, profile, model, speed=self.speed, feed=self.feed)
                scheduler.start()
                try:
                    profile = await self._next_profile(conn, profile)
                finally:
                    await scheduler.stop()

    async def _preflight(self, conn: Connection) -> bool:
        try:
            self.account = await preflight(conn)
        except DumpError as exc:
            self.on_status("error", f"{exc} — retrying every {RETRY_PREFLIGHT_S:.0f} s")
            return False
        self.on_status("ok", f"{self.target.describe()} · account {self.account}")
        return True

    async def _profile(self, conn: Connection) -> profiles.LabProfile:
        if self.lab:
            return profiles.load(self.lab)
        if self.account is None:
            return profiles.generic_profile(self.prefix)  # panels show the errors until it works
        return await detect_profile(conn, self.prefix)

    async def _next_profile(self, conn: Connection, current: profiles.LabProfile) -> profiles.LabProfile:
        """Waits for a lab switch, or for a failed preflight to succeed and detect another lab."""
        while True:
            try:
                lab = await asyncio.wait_for(self._switch.get(), timeout=RETRY_PREFLIGHT_S)
            except asyncio.TimeoutError:
                if self.account is not None or not await self._preflight(conn):
                    continue
                detected = await self._profile(conn)
                if detected.name != current.name:
                    return detected
                continue
            self.lab = lab
            return profiles.load(lab)
