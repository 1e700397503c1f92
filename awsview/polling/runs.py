"""Which run of the lab the viewer is looking at (`awsview.core.runs`), from the creation times the
other pollers fetched and the write decisions the timeline collected — no AWS calls of its own.
The runs and the creation time of each resource are kept in the viewer's store, per endpoint (or
account and region) and lab, so a viewer started later, or again, knows the runs it saw begin.

A view by ``--prefix`` alone (no lab profile) follows the same rules: its resources are the
tables, queues, state machines and roles listed under the prefix, each one the learner's (no
setup is known), and its book is kept under the prefix."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from awsview.aws.session import Connection
from awsview.core.runs import LabRun, RunBook, Sighting, closed
from awsview.labspec import LabSpec, Resource
from awsview.model import keys
from awsview.model.snapshot import Health
from awsview.model.state import LabState
from awsview.polling.store import UNUSABLE, DecisionStore

RUNS = keys.RUNS
ANSWERED = (Health.OK, Health.ABSENT)
WHOLE_SECOND_KINDS = ("queue", "role")  # kinds whose creation time AWS gives in whole seconds


def scope_of(conn: Connection) -> str:
    """What the viewer's store keeps apart: one endpoint, or one account profile and region."""
    return conn.resolved.scope


LISTS = {"queue": keys.QUEUES, "state_machine": keys.STATE_MACHINES, "role": keys.ROLES}


def book_name(profile: LabSpec) -> str:
    """Whose runs these are in the store: the lab's, or the prefix's for a view without a lab."""
    return f"prefix:{profile.prefix}" if profile.generic else profile.name


def watched(profile: LabSpec, model: LabState) -> tuple[tuple[Resource, ...], bool]:
    """The resources that tell runs apart, and whether their lists answered: the lab's own, or
    for a view without a lab every one listed under its prefix."""
    if not profile.generic:
        return profile.resources, True
    found: list[Resource] = []
    complete = True
    for kind, key in (("table", keys.TABLES), *LISTS.items()):
        snapshot = model.get(key)
        if snapshot is None or snapshot.health not in ANSWERED:
            complete = False
            continue
        for entry in snapshot.data or ():
            found.append(Resource(kind, entry if isinstance(entry, str) else entry.name, False))
    return tuple(found), complete


def sightings(profile: LabSpec, model: LabState) -> tuple[list[Sighting], bool]:
    """The lab's tables, queues, state machines and roles that exist, with their creation times;
    and whether every one of those kinds answered (a failed listing proves nothing)."""
    found: list[Sighting] = []
    resources, complete = watched(profile, model)

    def listed(key: str) -> tuple[Any, ...]:
        nonlocal complete
        snapshot = model.get(key)
        if snapshot is None or snapshot.health not in ANSWERED:
            complete = False
            return ()
        return snapshot.data or ()

    def seen(kind: str, name: str, created: Any, provided: bool) -> None:
        moment = created.timestamp() if hasattr(created, "timestamp") else created
        if isinstance(moment, (int, float)):
            # SQS and IAM answer in whole seconds on AWS (microseconds on moto); DynamoDB and Step
            # Functions in milliseconds everywhere, so a time of theirs on a whole second is exact.
            whole = kind in WHOLE_SECOND_KINDS and float(moment).is_integer()
            found.append(
                Sighting(f"{kind.replace('_', ' ')} {name}", float(moment), provided, whole)
            )

    for resource in resources:
        name, provided = resource.name, resource.provided
        if resource.kind == "table":
            snapshot = model.get(keys.table(name))
            if snapshot is None or snapshot.health not in ANSWERED:
                complete = False
            elif snapshot.data is not None:
                seen("table", name, snapshot.data.created, provided)
        elif resource.kind in ("queue", "state_machine", "role"):
            match = next((r for r in listed(LISTS[resource.kind]) if r.name == name), None)
            if match is not None:
                seen(resource.kind, name, match.created, provided)
    return found, complete


class RunKeeper:
    """The book of one lab's runs on one endpoint, kept in the viewer's store (or, when the state
    directory is unusable, for this session only)."""

    def __init__(self, profile: LabSpec, store: DecisionStore | None = None):
        self.profile = profile
        self._store = store
        self._book: RunBook | None = None
        self._scope = ""

    def _loaded(self, conn: Connection) -> RunBook:
        if self._book is None:
            self._scope = scope_of(conn)
            try:
                self._store = self._store or DecisionStore()
                self._book = self._store.run_book(self._scope, book_name(self.profile))
            except UNUSABLE:  # an unusable state dir must not stop the viewer; it just forgets
                self._store, self._book = None, RunBook()
        return self._book

    def runs(
        self, conn: Connection, model: LabState, writes: Callable[[], Iterable[float]]
    ) -> tuple[LabRun, ...]:
        """The runs after this round's sightings; ``writes`` gives every write decision's time."""
        book = self._loaded(conn)
        found, complete = sightings(self.profile, model)
        started = None
        if conn.is_local:
            journal = model.get(keys.JOURNAL)
            if journal is None or journal.health not in ANSWERED:
                complete = False
            elif journal.data is not None:
                started = journal.data.emulator_started
        began, seen = book.observe(found, complete, started, writes)
        if (began or seen) and self._store is not None:
            try:
                self._store.keep_runs(self._scope, book_name(self.profile), began, seen)
            except UNUSABLE:
                pass  # the book still has them for this session
        return closed(book.runs)
