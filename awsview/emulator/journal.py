"""The write-decision journal: every DynamoDB write the emulator decides, durably in SQLite.

A decision is recorded inside the same lock that makes the write, so the item before and the
item after are exactly what the write saw and left — never re-read later. Invocations of Lambda
functions are recorded beside them so a decision can name the execution, state and attempt or
the SQS message that caused it.

A journal that cannot be written (a full disk, a read-only mount) raises JournalUnwritable and
says so once through ``disk``; while it cannot, ``writable`` tries a small write at most every
RETRY_S, so a write is refused before it is applied, and accepted again once there is room.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from awsview.emulator.disk import Notice, what_failed

SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    cursor      INTEGER PRIMARY KEY AUTOINCREMENT,
    time        REAL NOT NULL,
    table_name  TEXT NOT NULL,
    key         TEXT NOT NULL,
    operation   TEXT NOT NULL,
    condition   TEXT,
    expression  TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    message     TEXT,
    before      TEXT,
    after       TEXT,
    request     TEXT,
    caller      TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    name        TEXT PRIMARY KEY,
    value       TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS invocations (
    cursor      INTEGER PRIMARY KEY AUTOINCREMENT,
    time        REAL NOT NULL,
    request_id  TEXT NOT NULL UNIQUE,
    function    TEXT NOT NULL,
    version     TEXT NOT NULL,
    code_sha256 TEXT NOT NULL,
    caller      TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    error_type  TEXT,
    duration_ms REAL NOT NULL
);
"""

ACCEPTED = "accepted"
RETRY_S = 0.5


class JournalUnwritable(Exception):
    """The journal could not store a record: nothing of it was kept. The text says why."""


@dataclass(frozen=True)
class WriteDecision:
    """One DynamoDB write as the emulator decided it. Items are in DynamoDB wire format."""

    time: float
    table_name: str
    key: dict[str, Any]
    operation: str
    condition: str | None
    expression: dict[str, Any]
    outcome: str
    message: str | None
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    request: dict[str, Any] | None
    caller: dict[str, Any]
    cursor: int = 0

    def to_json(self) -> dict[str, Any]:
        """Its fields as they are, for a caller that encodes them (asdict would deep-copy both
        items, up to 400 KB each, only to have the copies encoded and dropped)."""
        return dict(vars(self))


@dataclass(frozen=True)
class Invocation:
    """One Lambda invocation: who asked for it and how it ended."""

    time: float
    request_id: str
    function: str
    version: str
    code_sha256: str
    caller: dict[str, Any]
    outcome: str
    error_type: str | None
    duration_ms: float
    cursor: int = field(default=0)

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


_JSON_COLUMNS = {"key", "expression", "before", "after", "request", "caller"}


class Journal:
    """A thread-safe, append-only SQLite journal of write decisions and invocations."""

    def __init__(
        self,
        path: Path,
        on_record: Callable[[str], None] | None = None,
        disk: Notice | None = None,
    ):
        """``on_record`` hears "decisions" or "invocations" after each record is stored;
        ``disk`` is told when the journal cannot be written, and when it can again."""
        self.path = Path(path)
        self.on_record = on_record
        self.disk = disk or Notice(self.path.parent, say=lambda line: None)
        self._failed_at = 0.0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        # Cursors restart with a new journal file: readers key what they keep by this id too.
        self._db.execute("INSERT OR IGNORE INTO meta VALUES ('id', ?)", (uuid.uuid4().hex,))
        self.id = self._db.execute("SELECT value FROM meta WHERE name = 'id'").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def record_decisions(self, decisions: list[WriteDecision]) -> list[int]:
        """All of one write's decisions, or none of them (JournalUnwritable)."""
        return self._insert("decisions", [d.to_json() for d in decisions])

    def record_invocation(self, invocation: Invocation) -> int:
        """The invocation's cursor; 0 when the journal cannot be written (the invocation ran
        all the same, and the emulator has said why once)."""
        try:
            return self._insert("invocations", [invocation.to_json()])[0]
        except JournalUnwritable:
            return 0

    def writable(self) -> bool:
        """False while the journal cannot be written; tries again at most every RETRY_S."""
        if self.disk.failing is None:
            return True
        with self._lock:
            if time.monotonic() - self._failed_at < RETRY_S:
                return False
            try:
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('written', ?)", (now(),))
            except (sqlite3.Error, OSError) as exc:
                self._failed(exc)
                return False
        return True  # said mended once a record is stored: a probe is smaller than a record

    def _insert(self, table: str, rows: list[dict[str, Any]]) -> list[int]:
        encoded = [
            {
                k: json.dumps(v, default=_bytes_as_base64) if k in _JSON_COLUMNS else v
                for k, v in row.items()
                if k != "cursor"
            }
            for row in rows
        ]
        cursors = []
        with self._lock:
            try:
                self._db.execute("BEGIN")
                for values in encoded:
                    columns = ", ".join(values)
                    marks = ", ".join("?" for _ in values)
                    cur = self._db.execute(
                        f"INSERT INTO {table} ({columns}) VALUES ({marks})",
                        tuple(values.values()),
                    )
                    cursors.append(int(cur.lastrowid or 0))
                self._db.execute("COMMIT")
            except (sqlite3.Error, OSError) as exc:
                if self._db.in_transaction:  # SQLite may have rolled back by itself
                    try:
                        self._db.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                raise JournalUnwritable(self._failed(exc)) from None
        if self.disk.failing is not None:
            self.disk.mended()
        if self.on_record is not None:
            self.on_record(table)
        return cursors

    def _failed(self, exc: BaseException) -> str:
        self._failed_at = time.monotonic()
        why = what_failed(exc, self.path.parent)
        self.disk.failed(why)
        return f"the emulator's state directory {self.path.parent} is {why}"

    def decisions(self, since: int = 0, limit: int = 500) -> list[WriteDecision]:
        return [WriteDecision(**row) for row in self._select("decisions", since, limit)]

    def invocations(self, since: int = 0, limit: int = 500) -> list[Invocation]:
        return [Invocation(**row) for row in self._select("invocations", since, limit)]

    def _select(self, table: str, since: int, limit: int) -> list[dict[str, Any]]:
        with self._lock:
            cur = self._db.execute(
                f"SELECT * FROM {table} WHERE cursor > ? ORDER BY cursor LIMIT ?",
                (since, limit),
            )
            names = [d[0] for d in cur.description]
            rows = cur.fetchall()
        return [
            {
                n: json.loads(v) if n in _JSON_COLUMNS and v is not None else v
                for n, v in zip(names, row)
            }
            for row in rows
        ]


def _bytes_as_base64(value: object) -> str:
    import base64

    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode()  # as DynamoDB's JSON wire format writes B
    raise TypeError(f"cannot record {type(value).__name__}")


def now() -> float:
    return time.time()
