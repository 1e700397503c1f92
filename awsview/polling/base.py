"""What every poller shares: turning one fetch into a snapshot of the model they feed
(`awsview.model.state.LabState`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from awsview.aws.errors import Failure, classify
from awsview.labspec import LabSpec
from awsview.model.snapshot import Health, Snapshot, absent, failed, succeeded
from awsview.model.state import LabState

if TYPE_CHECKING:  # the session (urllib, http, email) only where a poll runs
    from awsview.aws.session import Connection


class Absent(Exception):
    """Raised inside a fetch when a successful answer says the resource does not exist."""

    def __init__(self, note: str = ""):
        super().__init__(note)
        self.note = note


class Poller:
    """One resource kind. ``poll`` makes its API calls and returns fresh snapshots."""

    kind = "resource"
    fast_interval = 0.3
    slow_interval = 8.0
    # With a change feed: the feed kinds this poller reads (their names go to ``refresh``), and
    # the model keys (prefixes) it derives from — a change there makes it poll.
    follows: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    remembers = False  # keeps what it learns in the viewer's store: made with one (``store=``)
    # The model keys it writes besides its kind's own (``kind`` and ``kind:<name>``).
    makes: tuple[str, ...] = ()

    def __init__(self, profile: LabSpec):
        self.profile = profile
        self.last_failure: Failure | None = None
        # Names the last poll left unread on purpose (a table's scan budget), with when they are
        # due (monotonic): with a change feed, the scheduler asks for them then.
        self.deferred: dict[str, float] = {}

    def writes(self, key: str) -> bool:
        """Whether this poller writes the model key ``key``, or keys starting with it (a prefix
        such as ``table:``; the empty prefix is every key)."""
        head = key.split(":", 1)[0]
        return not key or head == self.kind or head in self.makes

    def prefix_match(self, name: str) -> bool:
        return name.startswith(self.profile.prefix) if self.profile.prefix else True

    def named(self, model: LabState, key: str, names: frozenset[str]) -> tuple[Any, frozenset[str]]:
        """For a ``refresh``: the rows shown under ``key`` by name (None when the last listing
        did not answer), and which of the feed's ``names`` are this lab's."""
        known = model.get(key)
        shown = (
            {row.name: row for row in known.data}
            if healthy(known) and known.data is not None
            else None
        )
        return shown, frozenset(n for n in names if self.prefix_match(n))

    def after_change(self, model: LabState) -> frozenset[str] | None:
        """With a change feed, once its inputs (``after``) changed in the model: the names to
        read (none: no read), or None for everything."""
        return None

    def is_busy(self, model: LabState) -> bool:
        """True while this kind's own resources are moving (e.g. an execution is RUNNING)."""
        return False

    async def poll(self, conn: Connection, model: LabState) -> list[Snapshot[Any]]:
        """Read everything."""
        return await self._poll(conn, model, None)

    async def refresh(
        self, conn: Connection, model: LabState, names: frozenset[str]
    ) -> list[Snapshot[Any]]:
        """Read only the resources the change feed named."""
        return await self._poll(conn, model, names)

    async def _poll(
        self, conn: Connection, model: LabState, only: frozenset[str] | None
    ) -> list[Snapshot[Any]]:
        """One read, of ``only`` the named resources (None: everything). A poller defines this
        and gets both ``poll`` and ``refresh``; one that defines ``poll`` alone reads everything
        when the feed names some of its resources."""
        if only is None:
            raise NotImplementedError
        return await self.poll(conn, model)

    async def fetch(
        self, model: LabState, key: str, fn: Callable[[], Awaitable[Any]], note: str | None = None
    ) -> Snapshot[Any]:
        """Run one fetch; a success, a proven absence or a failure each make the right snapshot."""
        previous = model.get(key)
        try:
            data = await fn()
        except Absent as gone:
            return absent(previous, self.kind, key, gone.note or None)
        except Exception as exc:  # every failure becomes a reason on the snapshot, never a crash
            failure = classify(exc)
            if failure.is_not_found:
                return absent(previous, self.kind, key, failure.text)
            self.last_failure = failure
            return failed(previous, self.kind, key, failure.text)
        return succeeded(previous, self.kind, key, data, note=note)


def listed(model: LabState, kind: str, listing: Snapshot[Any]) -> tuple[list[str], list[str]]:
    """Generic mode: the names to read under ``kind:``, and those that are gone.

    A failed listing keeps reading what was read. A successful one is the truth: what it no
    longer lists was deleted, not just unread, and leaves the model.
    """
    known = [s.key.split(":", 1)[1] for s in model.with_prefix(f"{kind}:")]
    if listing.data is None:
        return known, []
    names = list(listing.data)
    gone = [n for n in known if n not in names]
    model.drop([f"{kind}:{n}" for n in gone])
    return names, gone


def healthy(snapshot: Snapshot[Any] | None) -> bool:
    return snapshot is not None and snapshot.health is Health.OK


def failing(snapshot: Snapshot[Any]) -> bool:
    """True when the read that made ``snapshot`` got no answer (its last good data, if any, is
    kept): it says nothing of whether the resource changed."""
    return snapshot.health in (Health.STALE, Health.ERROR)


async def unless_deleted(call: Awaitable[Any]) -> Any:
    """The answer of a call about one listed item, or None if it was deleted since the listing.

    The lab's cleanup deletes while the viewer reads: a not-found on one item must drop that
    item (or that part of it), not turn the whole listing absent.
    """
    try:
        return await call
    except Exception as exc:  # calls raise many types; classify() finds not-found
        if classify(exc).is_not_found:
            return None
        raise
