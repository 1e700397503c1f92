"""Builds the write-decision timeline from what the other pollers fetched (no AWS calls of its
own) and keeps every decision in the viewer's local store. It also tells which lab run the
viewer looks at (awsview.core.runs: a "runs" snapshot beside the timeline), since a run can begin
with a resource created after the current run's first write.

An item that a scan showed and the next scan no longer shows, with no delete seen in between,
ends its key's lifetime: the timeline gets a "seen gone" mark (source "scan"), kept like a
decision. Only a scan finished GONE_AFTER_S after the key's last decision counts, so a write the
journal or stream has not delivered yet, or an eventually consistent scan, is not taken for it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from awsview.aws.session import Connection
from awsview.core import timeline
from awsview.model import keys
from awsview.model.snapshot import Health, Snapshot
from awsview.model.state import LabState
from awsview.polling.base import Poller
from awsview.polling.runs import RUNS, RunKeeper, scope_of
from awsview.polling.store import UNUSABLE, DecisionStore

TIMELINE = keys.TIMELINE
GONE_AFTER_S = 5.0
MAX_SCANNED = 20000  # TablePoller.max_items: a scan this long may have been cut short


def log_evidence(
    model: LabState,
) -> tuple[list[tuple[str | None, Any]], list[tuple[str | None, str]]]:
    """RESULT data (with when it was printed) and [ERROR] lines, each with the request id of the
    invocation that printed it."""
    results, errors = [], []
    for snapshot in model.with_prefix(keys.LOGS_PREFIX):
        current: dict[str, str | None] = {}
        for entry in snapshot.data.lines if snapshot.data is not None else ():
            line = entry.line
            if line.kind == "START":
                current[entry.stream] = line.request_id
            elif line.kind == "RESULT":
                results.append((current.get(entry.stream), line.data, entry.timestamp_ms / 1000))
            elif line.kind == "ERROR" and line.text.startswith("[ERROR]"):
                errors.append((current.get(entry.stream), line.text))
            elif line.kind == "END":
                current[entry.stream] = None
    return results, errors


class TimelinePoller(Poller):
    kind = TIMELINE
    makes = (RUNS,)
    remembers = True
    fast_interval = 0.25
    slow_interval = 1.0
    # what its evidence comes from
    after = (
        keys.JOURNAL,
        keys.TABLE_PREFIX,
        keys.STREAM_PREFIX,
        keys.LOGS_PREFIX,
        keys.HISTORY_PREFIX,
    )

    def __init__(self, profile, store: DecisionStore | None = None):
        super().__init__(profile)
        self._store = store
        self._stored: dict[str, timeline.Decision] | None = None
        self._scope: str | None = None
        self._present: dict[tuple[str, str], bool] = {}  # (table, key) -> in the last scan read
        self._runs = RunKeeper(profile, store)

    def _memory(self, conn: Connection) -> dict[str, timeline.Decision]:
        if self._stored is None:
            self._scope = scope_of(conn)
            try:
                self._store = self._store or DecisionStore()
                self._stored = {d.ident: d for d in self._store.load(self._scope)}
            except UNUSABLE:  # an unusable state dir must not stop the viewer; it just forgets
                self._store, self._stored = None, {}
        return self._stored

    async def poll(self, conn: Connection, model: LabState) -> list[Snapshot[Any]]:
        runs: list[Any] = []

        async def build() -> timeline.Timeline:
            built, known = self._build(conn, model)
            runs.append(known)
            return built

        made = await self.fetch(model, TIMELINE, build)
        ran = await self.fetch(
            model, RUNS, lambda: _ready(runs[0] if runs else model.data(RUNS, ()))
        )
        return [ran, made]  # the runs first: a listener sees them with the timeline they made

    def _build(
        self, conn: Connection, model: LabState
    ) -> tuple[timeline.Timeline, tuple[Any, ...]]:
        memory = self._memory(conn)
        journal = model.get(keys.JOURNAL)
        data = journal.data if journal is not None else None
        note = None
        if journal is None:
            note = "journal not read yet"
        elif journal.health is Health.ABSENT:
            note = journal.note
        elif data is None:
            note = f"journal unavailable: {journal.error}"
        tables = [model.data(keys.table(name)) for name in self.profile.tables("business")]
        results, errors = log_evidence(model)
        evidence = timeline.Evidence(
            business_tables=self.profile.tables("business") if not self.profile.generic else (),
            business_key=self.profile.business_key,
            prefix=self.profile.prefix,
            journal_id=data.journal_id if data is not None else None,
            decisions=data.decisions if data is not None else (),
            invocations=data.invocations if data is not None else (),
            journal_note=note,
            streams={
                s.key.split(":", 1)[1]: s.data
                for s in model.with_prefix(keys.STREAM_PREFIX)
                if s.data
            },
            stream_tables=tuple(t.name for t in tables if t is not None and t.stream_arn),
            results=tuple(results),
            errors=tuple(errors),
            histories=tuple(
                s.data for s in model.with_prefix(keys.HISTORY_PREFIX) if s.data is not None
            ),
            stored=tuple(memory.values()),
        )
        decisions, sources, missing = timeline.collect(evidence)

        def writes():  # asked only when a learner's resource appears: no sort per round
            return (d.time for d in decisions.values() if d.kind != "gone")

        evidence = replace(evidence, runs=self._runs.runs(conn, model, writes))
        built = timeline.assemble(evidence, decisions, sources, missing)
        gone = self._seen_gone(built, model)
        if gone:
            built = timeline.build(replace(evidence, stored=evidence.stored + tuple(gone)))
        fresh = [
            d
            for _, keys in built.by_run
            for k in keys
            for d in k.decisions
            if d.ident not in memory
        ]
        if fresh and self._store is not None:
            try:
                self._store.save(self._scope, fresh)
            except UNUSABLE:
                pass  # memory still has them for this session
        for decision in fresh:
            memory[decision.ident] = decision
        return built, evidence.runs

    def _seen_gone(self, built: timeline.Timeline, model: LabState) -> list[timeline.Decision]:
        """ "Seen gone" marks for items of open lifetimes that a scan showed and the next
        does not."""
        marks = []
        names = model.data(keys.TABLES, ()) if self.profile.generic else ()
        for name in names or self.profile.tables("business"):
            snapshot = model.get(keys.table(name))
            if (
                snapshot is None
                or snapshot.health is not Health.OK
                or snapshot.data is None
                or snapshot.fetched_at is None
                or len(snapshot.data.items) >= MAX_SCANNED
            ):
                continue  # not read, failed, or possibly cut short: absence proves nothing
            table = snapshot.data
            present = {
                timeline.key_text({k: i.get(k) for k in table.key_names}) for i in table.items
            }
            for key in (k for k in built.keys if k.table == name):
                here = key.key in present
                was = self._present.get((name, key.key))
                self._present[(name, key.key)] = here
                last = key.lifetimes[-1] if key.lifetimes else None
                if here or not was or last is None or last.ended:
                    continue
                if snapshot.fetched_at - last.decisions[-1].time < GONE_AFTER_S:
                    self._present[(name, key.key)] = True  # ask again once the evidence had time
                    continue
                marks.append(timeline.gone_mark(name, key.key, snapshot.fetched_at))
        return marks


async def _ready(value: Any) -> Any:
    return value
