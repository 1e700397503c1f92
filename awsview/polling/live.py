"""The polling side of a live viewer: one connection, one scheduler for the current lab.

A failed preflight (endpoint down, bad credentials) does not stop anything: the scheduler runs
anyway, so every panel shows its own error instead of looking empty, and the preflight is retried
until it succeeds (then the lab is detected, if none was chosen).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AsyncExitStack

from awsview import labspec
from awsview.aws.session import ConfigError, Connection, Target
from awsview.model.state import LabState
from awsview.polling.bootstrap import NeedsPrefix, PreflightError, detect_lab_spec, preflight
from awsview.polling.scheduler import Scheduler

RETRY_PREFLIGHT_S = 5.0


class LivePolling:
    """Runs until cancelled. ``on_profile`` gets each new (profile, model); ``on_status`` a level
    ("ok", "error") and one line about the connection."""

    def __init__(
        self,
        target: Target,
        lab: str | None,
        prefix: str,
        on_profile: Callable[[labspec.LabSpec, LabState], None],
        on_status: Callable[[str, str], None],
        speed: float = 1.0,
        on_choose: Callable[[list[tuple[str, int]]], None] | None = None,
        feed: bool = True,
        paced: bool = True,
        driven: bool = False,
    ):
        self.target = target
        self.lab = lab
        self.prefix = prefix
        self.on_profile = on_profile
        self.on_status = on_status
        self.speed = speed
        self.feed = feed  # follow the emulator's change feed when it has one
        self.paced = paced  # a quiet resource may wait between reads (Scheduler)
        # The caller reads, through ``scheduler`` (its catch_up, or its start once it has
        # none): nothing polls on its own clock.
        self.driven = driven
        self.scheduler: Scheduler | None = None  # the current lab's, once it has one
        self.account: str | None = None
        self.region: str | None = None  # as the connection resolved it
        self.conn: Connection | None = (
            None  # while running: its limiter counts calls and read units
        )
        self._switch: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self.on_choose = on_choose  # given the prefixes found when one must be chosen
        self._asked = False

    def switch(self, lab: str) -> None:
        """Show another lab from the next moment on (same connection); "" for no lab: the
        resources named by the prefix only."""
        self._switch.put_nowait(("lab", lab))

    def use_prefix(self, prefix: str) -> None:
        """Show the resources named ``prefix``* (no lab found, the user picked a prefix)."""
        self._switch.put_nowait(("prefix", prefix))

    async def run(self) -> None:
        async with AsyncExitStack() as stack:
            try:
                conn = self.conn = await stack.enter_async_context(Connection(self.target))
            except ConfigError as exc:  # `awsview watch` checks first; a test may not
                self.on_status("error", str(exc))
                return
            self.region = conn.region
            await self._preflight(conn)
            profile = await self._profile(conn)
            while True:
                if profile is None:  # nothing to poll until a prefix is chosen
                    profile = await self._next_profile(conn, None)
                    continue
                model = LabState()
                self.on_profile(profile, model)
                scheduler = self.scheduler = Scheduler(
                    conn, profile, model, speed=self.speed, feed=self.feed, paced=self.paced
                )
                if not self.driven:
                    scheduler.start()
                try:
                    profile = await self._next_profile(conn, profile)
                finally:
                    await scheduler.stop()

    async def _preflight(self, conn: Connection) -> bool:
        try:
            self.account = await preflight(conn)
        except PreflightError as exc:
            self.on_status("error", f"{exc} — retrying every {RETRY_PREFLIGHT_S:.0f} s")
            return False
        self.on_status("ok", f"{conn.describe()} · account {self.account}")
        return True

    async def _profile(self, conn: Connection) -> labspec.LabSpec | None:
        """The lab to show; None while a prefix must be chosen first (an account, no lab found)."""
        if self.lab:
            return labspec.load(self.lab)
        if self.account is None:
            if self.prefix or conn.is_local:
                return labspec.generic_spec(self.prefix)  # panels show the errors until it works
            return None  # on an account: never the whole region, even once the credentials work
        try:
            return await detect_lab_spec(conn, self.prefix)
        except NeedsPrefix as exc:
            self.on_status("error", str(exc))
            if self.on_choose is not None and not self._asked:
                self._asked = True
                self.on_choose(exc.found)
            return None

    async def _next_profile(
        self, conn: Connection, current: labspec.LabSpec | None
    ) -> labspec.LabSpec | None:
        """Waits for a lab switch or a chosen prefix, or for a failed preflight to succeed (or a
        lab to appear while none is shown) and detects the lab again."""
        while True:
            try:
                kind, value = await asyncio.wait_for(self._switch.get(), timeout=RETRY_PREFLIGHT_S)
            except TimeoutError:
                if self.account is None:
                    if not await self._preflight(conn):
                        continue
                elif current is not None:
                    continue
                detected = await self._profile(conn)
                if detected is not None and (current is None or detected.name != current.name):
                    return detected
                continue
            if kind == "prefix":
                self.prefix = value
                return labspec.generic_spec(value)
            self.lab = value or None
            return labspec.load(value) if value else labspec.generic_spec(self.prefix)
