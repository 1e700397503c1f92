"""Follows the embedded emulator's change feed (``GET /_awsview/changes``, read-only) and says
which resources changed, so the scheduler reads exactly those, at once.

Rules:
- Only a local endpoint is asked, and only with GET; an endpoint that answers anything but the
  feed's JSON (stock moto, LocalStack) has no feed, and is asked again only now and then.
- The cursor belongs to one feed: when the emulator restarts (a new feed id) or says ``reset``,
  everything is read again. A viewer that starts later starts from the feed's current cursor
  after one full read.
- A broken feed is said at once (``on_state(False)``), so the scheduler falls back to polling
  and panels stop claiming to be live.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from awsview.access import TOKEN_HEADER

WAIT_S = 20.0  # one long poll; the emulator answers at once when something changes
RETRY_S = (0.25, 0.5)  # reconnecting to a feed that broke (a local GET): from … up to …
NO_FEED_RECHECK_S = 60.0  # an endpoint without a feed is asked again this rarely


@dataclass(frozen=True)
class FeedChange:
    kind: str
    name: str  # "" means some resource of this kind: read them all


class NoFeed(Exception):
    """The endpoint answers, but has no change feed."""


class ChangeFeedFollower:
    """``on_changes(changes, reset)``: reset means read everything (a new feed, or a gap);
    ``on_state(up)``: the feed started or stopped being followed."""

    def __init__(
        self,
        endpoint_url: str,
        on_changes: Callable[[list[FeedChange], bool], None],
        on_state: Callable[[bool], None],
        wait: float = WAIT_S,
        access_key_id: Callable[[], Awaitable[str | None]] | None = None,
    ):
        """``access_key_id``: the one the viewer signs with; an emulator off loopback takes it
        as its token."""
        self.url = endpoint_url.rstrip("/") + "/_awsview/changes"
        self.on_changes = on_changes
        self.on_state = on_state
        self.wait = wait
        self.feed: str | None = None
        self.cursor = 0
        self.up = False
        self.answers = 0  # how many times the feed answered (for benchmarks and tests)
        self._session: Any = None
        self._access_key_id = access_key_id

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def ask(self, wait: float) -> dict[str, Any]:
        import aiohttp

        from awsview.aws.answers import bounded_session

        if self._session is None:
            key = await self._access_key_id() if self._access_key_id else None
            self._session = bounded_session(headers={TOKEN_HEADER: key} if key else None)
        params = {"since": str(self.cursor), "wait": f"{wait:g}"}
        if self.feed:
            params["feed"] = self.feed
        timeout = aiohttp.ClientTimeout(total=wait + 10, connect=3)
        async with self._session.get(self.url, params=params, timeout=timeout) as response:
            if response.status != 200 or response.content_type != "application/json":
                raise NoFeed(f"HTTP {response.status}")
            page = await response.json()
        if (
            not isinstance(page, dict)
            or not isinstance(page.get("feed"), str)
            or not isinstance(page.get("cursor"), int)
        ):
            raise NoFeed("not a change feed")
        self.answers += 1
        return page

    def take(self, page: dict[str, Any]) -> tuple[list[FeedChange], bool]:
        """The changes of one answer, and whether everything must be read again."""
        reset = page["feed"] != self.feed or bool(page.get("reset"))
        self.feed, self.cursor = page["feed"], page["cursor"]
        changes = [
            FeedChange(str(c.get("kind", "")), str(c.get("name", "")))
            for c in page.get("changes") or []
            if isinstance(c, dict)
        ]
        return changes, reset

    async def run(self) -> None:
        """Until cancelled: long-poll, report, and reconnect after a failure."""
        retry, had_feed = RETRY_S[0], False
        try:
            while True:
                try:
                    page = await self.ask(self.wait if self.up else 0.0)
                except asyncio.CancelledError:
                    raise
                except NoFeed:
                    self._set_up(False)
                    if had_feed:
                        # It had one: an emulator starting again answers its other routes a
                        # moment before the feed's; ask again at the reconnect pace.
                        await asyncio.sleep(retry)
                        retry = min(RETRY_S[1], retry * 2)
                    else:
                        await asyncio.sleep(NO_FEED_RECHECK_S)
                    continue
                except Exception:  # refused, reset, timed out: the emulator is gone or restarting
                    self._set_up(False)
                    await asyncio.sleep(retry)
                    retry = min(RETRY_S[1], retry * 2)
                    continue
                retry, had_feed = RETRY_S[0], True
                changes, reset = self.take(page)
                was_up = self.up
                self._set_up(True)
                if reset or not was_up or changes:
                    # Coming (back) up, everything is read once: changes made while the feed
                    # was not followed are in no answer.
                    self.on_changes(changes, reset or not was_up)
        finally:
            await self.close()

    def _set_up(self, up: bool) -> None:
        if up != self.up:
            self.up = up
            self.on_state(up)
