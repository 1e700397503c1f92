"""Builds the write-decision timeline from what the other pollers fetched (no AWS calls of its
own) and keeps every decision in the viewer's local store."""

from __future__ import annotations

from typing import Any

from awsview import timeline
from awsview.aws.session import Connection
from awsview.model.snapshot import Health, Snapshot
from awsview.pollers.base import LabModel, Poller
from awsview.store import DecisionStore

TIMELINE = "timeline"


def log_evidence(model: LabModel) -> tuple[list[tuple[str | None, Any]], list[tuple[str | None, str]]]:
    """RESULT data and [ERROR] lines, each with the request id of the invocation that printed it."""
    results, errors = [], []
    for snapshot in model.with_prefix("logs:"):
        current: dict[str, str | None] = {}
        for entry in (snapshot.data.lines if snapshot.data is not None else ()):
            line = entry.line
            if line.kind == "START":
                current[entry.stream] = line.request_id
            elif line.kind == "RESULT":
                results.append((current.get(entry.stream), line.data))
            elif line.kind == "ERROR" and line.text.startswith("[ERROR]"):
                errors.append((current.get(entry.stream), line.text))
            elif line.kind == "END":
                current[entry.stream] = None
    return results, errors


class TimelinePoller(Poller):
    kind = TIMELINE
    fast_interval = 0.25
    slow_interval = 1.0
    after = ("journal", "table:", "stream:", "logs:", "history:")  # what its evidence comes from

    def __init__(self, profile, store: DecisionStore | None = None):
        super().__init__(profile)
        self._store = store
        self._stored: dict[str, timeline.Decision] | None = None
        self._scope: str | None = None

    def _memory(self, conn: Connection) -> dict[str, timeline.Decision]:
        if self._stored is None:
            self._scope = conn.target.endpoint_url or f"aws:{conn.target.profile or 'default'}:{conn.region}"
            try:
                self._store = self._store or DecisionStore()
                self._stored = {d.ident: d for d in self._store.load(self._scope)}
            except Exception:  # an unusable state dir must not stop the viewer; it just forgets
                self._store, self._stored = None, {}
        return self._stored

    async def poll(self, conn: Connection, model: LabModel) -> list[Snapshot[Any]]:
        return [await self.fetch(model, TIMELINE, lambda: self._build(conn, model))]

    async def _build(self, conn: Connection, model: LabModel) -> timeline.Timeline:
        memory = self._memory(conn)
        journal = model.get("journal")
        data = journal.data if journal is not None else None
        note = None
        if journal is None:
            note = "journal not read yet"
        elif journal.health is Health.ABSENT:
            note = journal.note
        elif data is None:
            note = f"journal unavailable: {journal.error}"
        tables = [model.data(f"table:{name}") for name in self.profile.tables("business")]
        results, errors = log_evidence(model)
        evidence = timeline.Evidence(
            business_tables=self.profile.tables("business") if not self.profile.generic else (),
            business_key=self.profile.business_key,
            journal_id=data.journal_id if data is not None else None,
            decisions=data.decisions if data is not None else (),
            invocations=data.invocations if data is not None else (),
            journal_note=note,
            streams={s.key.split(":", 1)[1]: s.data for s in model.with_prefix("stream:") if s.data},
            stream_tables=tuple(t.name for t in tables if t is not None and t.stream_arn),
            results=tuple(results), errors=tuple(errors),
            histories=tuple(s.data for s in model.with_prefix("history:") if s.data is not None),
            stored=tuple(memory.values()),
        )
        built = timeline.build(evidence)
        fresh = [d for k in built.keys for d in k.decisions if d.ident not in memory]
        if fresh and self._store is not None:
            try:
                self._store.save(self._scope, fresh)
            except Exception:
                pass  # memory still has them for this session
        for decision in fresh:
            memory[decision.ident] = decision
        return built


class CheckpointPoller(Poller):
    """The lab's checkpoints against the latest model (no AWS calls)."""

    kind = "checkpoints"
    fast_interval = 0.25
    slow_interval = 1.0
    after = ("",)  # every checkpoint reads some part of the model

    def __init__(self, profile, store: DecisionStore | None = None):
        super().__init__(profile)
        self._store = store
        self._memory = None

    async def poll(self, conn: Connection, model: LabModel) -> list[Snapshot[Any]]:
        from awsview.checkpoints import Memory, evaluate

        if self._memory is None:
            scope = conn.target.endpoint_url or f"aws:{conn.target.profile or 'default'}:{conn.region}"
            try:
                store = self._store or DecisionStore()
                self._memory = Memory(first=lambda name, value: store.first(scope, name, value))
            except Exception:  # no usable state dir: remember for this session only
                self._memory = Memory()
        return [await self.fetch(model, "checkpoints", lambda: _evaluate(evaluate, self.profile, model, self._memory))]


async def _evaluate(evaluate, profile, model, memory):
    return evaluate(profile, model, memory)
