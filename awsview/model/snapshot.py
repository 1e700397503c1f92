"""Snapshots: what a poller knows of one resource kind, and how fresh or broken that knowledge is.

A network, throttling or auth error never becomes "absent" or an empty list: only a successful
call that says a resource does not exist makes a snapshot ABSENT. After an error the last good
data is kept and the snapshot turns STALE, with the reason and since when.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Health(str, Enum):  # noqa: UP042  a StrEnum's str() is the value: f-strings would change
    OK = "ok"
    STALE = "stale"  # an error now, last good data kept
    ERROR = "error"  # never succeeded yet
    ABSENT = "absent"  # a successful call says it does not exist


@dataclass(frozen=True)
class Snapshot(Generic[T]):
    """One resource kind (or one named resource) as last seen."""

    kind: str
    key: str
    health: Health
    data: T | None
    fetched_at: float | None = None  # wall time of the last successful fetch
    attempted_at: float = 0.0
    error: str | None = None
    error_since: float | None = None
    note: str | None = None  # e.g. "absent" reason, or why data is partial
    live: bool = (
        False  # read while a change feed was followed: current until the feed says otherwise
    )

    @property
    def usable(self) -> bool:
        """True when data can be shown (fresh or stale)."""
        return self.health in (Health.OK, Health.STALE) and self.data is not None

    def freshness(self, now: float | None = None) -> str:
        """A short human phrase: "0.4 s ago", "stale 12 s — connection refused", "absent"."""
        now = time.time() if now is None else now
        if self.health is Health.OK:
            return "live" if self.live else f"{age_text(now - (self.fetched_at or now))} ago"
        if self.health is Health.ABSENT:
            return f"absent — {self.note}" if self.note else "absent"
        if self.health is Health.STALE:
            since = now - (self.fetched_at or self.error_since or now)
            return f"stale {age_text(since)} — {self.error}"
        return f"error — {self.error}"

    def to_json(self, now: float | None = None) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "key": self.key,
            "health": self.health.value,
            "fetched_at": self.fetched_at,
            "error": self.error,
            "error_since": self.error_since,
            "note": self.note,
            "freshness": self.freshness(now),
        }


def age_text(seconds: float) -> str:
    """``4.2 s``, ``42 s``, ``3 min``."""
    seconds = max(0.0, seconds)
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


def succeeded(
    previous: Snapshot[T] | None,
    kind: str,
    key: str,
    data: T,
    note: str | None = None,
    at: float | None = None,
) -> Snapshot[T]:
    at = time.time() if at is None else at
    return Snapshot(kind, key, Health.OK, data, fetched_at=at, attempted_at=at, note=note)


def absent(
    previous: Snapshot[Any] | None,
    kind: str,
    key: str,
    note: str | None = None,
    at: float | None = None,
) -> Snapshot[Any]:
    at = time.time() if at is None else at
    return Snapshot(kind, key, Health.ABSENT, None, fetched_at=at, attempted_at=at, note=note)


def failed(
    previous: Snapshot[T] | None, kind: str, key: str, error: str, at: float | None = None
) -> Snapshot[T]:
    """The snapshot after a failed poll: STALE keeps what was known, ERROR if nothing was."""
    at = time.time() if at is None else at
    if previous is None or previous.health is Health.ERROR:
        since = previous.error_since if previous is not None else at
        return Snapshot(
            kind, key, Health.ERROR, None, attempted_at=at, error=error, error_since=since
        )
    since = previous.error_since if previous.health is Health.STALE else at
    note = "was absent" if previous.health is Health.ABSENT else previous.note
    return replace(
        previous,
        health=Health.STALE,
        attempted_at=at,
        error=error,
        error_since=since,
        note=note,
        live=False,
    )
