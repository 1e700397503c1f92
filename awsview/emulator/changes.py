"""The emulator's change feed: which resource changed, told to readers as it happens.

Every change the emulator makes — an API write, a log line a Lambda printed, an execution's next
history event, the SQS poller's receives and deletes, a message whose visibility timeout ended —
is emitted here as (kind, name). Readers long-poll ``GET /_awsview/changes?since=N&wait=S``
and get at once every resource changed after cursor N, newest change last, or an empty answer
after S seconds.

Rules:
- The feed says *what* changed, never the new state: the reader fetches that through the AWS
  API it already uses, so the feed cannot disagree with what the API answers.
- One entry per resource: a resource that changes again moves to the end with a new cursor, so
  an answer is bounded by the number of resources, not by the number of writes.
- A feed lives as long as its emulator (moto's state does too): each start has a new ``feed`` id,
  and a reader holding a cursor of another feed is told to ``reset`` (read everything again).
- Changes that happen with time alone (a message becoming visible again, a mapping settling
  into Enabled) are emitted by a timer when they are due.
"""

from __future__ import annotations

import heapq
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

# What a change says it is about; the name is the resource's own (table, queue, log group or
# function name; a role name; a state machine or execution ARN; a mapping UUID). "execution" is
# an execution started or ended, "history" a new event in a running one's history.
KINDS = (
    "table",
    "queue",
    "log_group",
    "function",
    "mapping",
    "role",
    "state_machine",
    "execution",
    "history",
    "journal",
)
MAX_WAIT_S = 30.0
MAX_ENTRIES = 50_000  # distinct resources remembered; a reader behind the oldest one is reset


@dataclass(frozen=True)
class Change:
    cursor: int
    kind: str
    name: str
    time: float  # wall time of the change

    def to_json(self) -> dict[str, Any]:
        return {"cursor": self.cursor, "kind": self.kind, "name": self.name, "time": self.time}


class ChangeFeed:
    """Thread-safe: moto's request threads, the SQS poller, Lambda workers' log writes and the
    execution threads all emit; request threads wait."""

    def __init__(self) -> None:
        self.id = uuid.uuid4().hex[:16]
        self._cond = threading.Condition()
        self._cursor = 0
        self._floor = 0  # the newest cursor forgotten to keep within MAX_ENTRIES
        self._entries: OrderedDict[tuple[str, str], Change] = OrderedDict()
        self._timers: list[tuple[float, str, str]] = []  # (due, kind, name), a heap
        self._pending: set[tuple[int, str, str]] = set()  # (due in ms, kind, name), not doubled
        self._closed = False
        self._timer = threading.Thread(
            target=self._run_timers, name="change-feed-timers", daemon=True
        )
        self._timer.start()

    @property
    def cursor(self) -> int:
        return self._cursor

    def emit(self, kind: str, name: str = "") -> None:
        """``name`` "" says "some resource of this kind": the reader reads the whole kind."""
        with self._cond:
            self._cursor += 1
            key = (kind, name or "")
            self._entries.pop(key, None)
            self._entries[key] = Change(self._cursor, kind, key[1], time.time())
            if len(self._entries) > MAX_ENTRIES:
                _, oldest = self._entries.popitem(last=False)
                self._floor = oldest.cursor
            self._cond.notify_all()

    def later(self, delay: float, kind: str, name: str = "") -> None:
        """Emit (kind, name) in ``delay`` seconds: what time alone will change."""
        due = time.time() + max(0.0, delay)
        mark = (int(due * 1000) // 50, kind, name)  # one timer per 50 ms per resource
        with self._cond:
            if mark in self._pending or self._closed:
                return
            self._pending.add(mark)
            heapq.heappush(self._timers, (due, kind, name))
            self._cond.notify_all()

    def since(self, cursor: int, wait: float = 0.0, feed: str | None = None) -> dict[str, Any]:
        """Changes after ``cursor``, waiting up to ``wait`` seconds for one; the answer's
        ``cursor`` is the one to pass next. ``feed``: the id the cursor came from."""
        deadline = time.monotonic() + max(0.0, min(wait, MAX_WAIT_S))
        with self._cond:
            reset = (
                (feed is not None and feed != self.id)
                or cursor > self._cursor
                or (cursor < self._floor and self._floor > 0)
            )
            if reset:
                return self._answer([], reset=True)
            while self._cursor <= cursor and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            found = []
            for change in reversed(self._entries.values()):
                if change.cursor <= cursor:
                    break
                found.append(change)
            return self._answer(found[::-1], reset=False)

    def _answer(self, changes: list[Change], reset: bool) -> dict[str, Any]:
        return {
            "feed": self.id,
            "cursor": self._cursor,
            "reset": reset,
            "changes": [c.to_json() for c in changes],
        }

    def close(self) -> None:
        """Answers every waiting reader now and stops the timers."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _run_timers(self) -> None:
        while True:
            with self._cond:
                while not self._closed and (not self._timers or self._timers[0][0] > time.time()):
                    self._cond.wait(self._timers[0][0] - time.time() if self._timers else None)
                if self._closed:
                    return
                due, kind, name = heapq.heappop(self._timers)
                self._pending.discard((int(due * 1000) // 50, kind, name))
            self.emit(kind, name)
