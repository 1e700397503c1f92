"""The viewer's own memory: write decisions seen, kept in the user state directory so they are
still shown after the lab's cleanup deletes the resources and after a restart; the lab's runs
and the creation time of each resource that tells them apart (awsview.core.runs); first sightings
(a function's first code hash, when a checkpoint first held in a run)."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from awsview.core.runs import LabRun, RunBook
from awsview.core.timeline import Actor, Decision
from awsview.model.items import plain_to_json

SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    scope TEXT NOT NULL,
    ident TEXT NOT NULL,
    time  REAL NOT NULL,
    body  TEXT NOT NULL,
    PRIMARY KEY (scope, ident)
);
CREATE TABLE IF NOT EXISTS firsts (
    scope TEXT NOT NULL,
    name  TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (scope, name)
);
CREATE TABLE IF NOT EXISTS runs (
    scope  TEXT NOT NULL,
    lab    TEXT NOT NULL,
    number INTEGER NOT NULL,
    start  REAL NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (scope, lab, number)
);
CREATE TABLE IF NOT EXISTS sightings (
    scope    TEXT NOT NULL,
    lab      TEXT NOT NULL,
    resource TEXT NOT NULL,
    created  REAL NOT NULL,
    run      INTEGER NOT NULL,
    PRIMARY KEY (scope, lab, resource)
);
"""


# What an unusable state dir raises (unwritable, full, not a database): the pollers then carry on
# with a memory for this session only. Anything else is a bug and is not swallowed.
UNUSABLE = (OSError, sqlite3.Error)


def default_path() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(base) / "awsview" / "viewer.sqlite3"


def unusable(path: Path | None = None) -> str | None:
    """Why the store cannot be kept at ``path`` (one line for the person running the viewer), or
    None. The pollers then carry on with a memory for this session only, as they do for any
    store that fails to open or to write."""
    where = Path(path) if path else default_path()
    try:
        DecisionStore(where).close()
    except UNUSABLE as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        return (
            f"cannot keep the viewer's state in {where.parent} ({why}): write decisions and "
            "runs are remembered for this session only"
        )
    return None


class DecisionStore:
    """Decisions by scope (one endpoint or account+region); written once, read back at start."""

    def __init__(self, path: Path | None = None):
        self.path = Path(path) if path else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def save(self, scope: str, decisions: Iterable[Decision]) -> int:
        rows = [(scope, d.ident, d.time, json.dumps(_to_json(d))) for d in decisions]
        with self._lock:
            before = self._db.total_changes
            # One transaction: in autocommit each row is its own commit, seconds on the event
            # loop for a thousand rows.
            with self._db:
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR IGNORE INTO decisions VALUES (?, ?, ?, ?)", rows)
            return self._db.total_changes - before

    def first(self, scope: str, name: str, value: str) -> str:
        """The first value ever seen under this name (stored now if this is the first)."""
        with self._lock:
            self._db.execute("INSERT OR IGNORE INTO firsts VALUES (?, ?, ?)", (scope, name, value))
            return self._db.execute(
                "SELECT value FROM firsts WHERE scope = ? AND name = ?", (scope, name)
            ).fetchone()[0]

    def recall(self, scope: str, prefix: str) -> dict[str, str]:
        """Every first sighting stored under a name starting with ``prefix``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT name, value FROM firsts WHERE scope = ? AND substr(name, 1, ?) = ?",
                (scope, len(prefix), prefix),
            ).fetchall()
        return dict(rows)

    def run_book(self, scope: str, lab: str) -> RunBook:
        with self._lock:
            runs = self._db.execute(
                "SELECT number, start, reason FROM runs WHERE scope = ? AND lab = ? "
                "ORDER BY number",
                (scope, lab),
            ).fetchall()
            seen = self._db.execute(
                "SELECT resource, created, run FROM sightings WHERE scope = ? AND lab = ?",
                (scope, lab),
            ).fetchall()
        return RunBook(
            [LabRun(n, start, reason) for n, start, reason in runs],
            {resource: (created, run) for resource, created, run in seen},
        )

    def keep_runs(
        self, scope: str, lab: str, began: list[LabRun], seen: dict[str, tuple[float, int]]
    ) -> None:
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?)",
                [(scope, lab, r.number, r.start, r.reason) for r in began],
            )
            self._db.executemany(
                "INSERT OR REPLACE INTO sightings VALUES (?, ?, ?, ?, ?)",
                [(scope, lab, name, created, run) for name, (created, run) in seen.items()],
            )

    def load(self, scope: str) -> list[Decision]:
        with self._lock:
            rows = self._db.execute(
                "SELECT body FROM decisions WHERE scope = ? ORDER BY time, ident", (scope,)
            ).fetchall()
        decisions = []
        for (body,) in rows:
            try:
                decisions.append(_from_json(json.loads(body)))
            except (ValueError, TypeError, KeyError):
                continue  # a row from an older format: skip it, keep the rest
        return decisions


def _to_json(decision: Decision) -> dict[str, Any]:
    data = asdict(decision)
    data["before"] = plain_to_json(decision.before) if decision.before is not None else None
    data["after"] = plain_to_json(decision.after) if decision.after is not None else None
    return data


def _from_json(data: dict[str, Any]) -> Decision:
    actor = data.pop("actor")
    actor["message_ids"] = tuple(actor.get("message_ids") or ())
    data["notes"] = tuple(data.get("notes") or ())
    return Decision(actor=Actor(**actor), **data)
