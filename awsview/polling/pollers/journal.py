"""The embedded emulator's write-decision journal and invocation log, read incrementally by
cursor (GET only). Against real AWS there is no journal: the snapshot says so instead of
pretending nothing was written."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from awsview.access import TOKEN_HEADER
from awsview.aws.errors import said_as_botocore
from awsview.model import keys
from awsview.model.snapshot import Snapshot

if TYPE_CHECKING:
    from awsview.aws.session import Connection
from awsview.model.state import LabState
from awsview.polling.base import Absent, Poller

JOURNAL = keys.JOURNAL
MAX_RECORDS = 50_000
PAGES_PER_READ = 25  # of 2,000 records: MAX_RECORDS in one poll


@dataclass(frozen=True)
class JournalData:
    decisions: tuple[dict[str, Any], ...]
    invocations: tuple[dict[str, Any], ...]
    journal_id: str | None  # identifies the journal file; cursors are only meaningful within it
    emulator_started: float | None = None  # when the emulator answering now started (it survives
    # restarts on the same state directory; moto's resources do not: a new lab run)


class JournalPoller(Poller):
    kind = JOURNAL
    fast_interval = 0.25  # a local HTTP GET, not an AWS API call
    slow_interval = 1.0
    follows = ("journal",)

    def __init__(self, profile):
        super().__init__(profile)
        self._cursors = {"journal": 0, "invocations": 0}
        self._records: dict[str, list[dict[str, Any]]] = {"journal": [], "invocations": []}
        self._session: Any = None
        self._journal_id: str | None = None
        self._started: float | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def poll(self, conn: Connection, model: LabState) -> list[Snapshot[Any]]:
        endpoint = conn.resolved.endpoint_url if conn.resolved is not None else None
        if endpoint is None:
            return [await self.fetch(model, JOURNAL, self._no_journal)]
        if self._session is None:
            import aiohttp

            from awsview.aws.answers import bounded_session

            # An emulator off loopback answers its token, the access key id, here too.
            key = await conn.access_key_id()
            self._session = bounded_session(
                timeout=aiohttp.ClientTimeout(total=5), headers={TOKEN_HEADER: key} if key else None
            )
        return [await self.fetch(model, JOURNAL, lambda: self._read(endpoint))]

    async def _no_journal(self) -> JournalData:
        raise Absent(
            "no write-decision journal on real AWS (it is a feature of the embedded emulator)"
        )

    async def _read(self, endpoint: str, again: bool = False) -> JournalData:
        for route in ("journal", "invocations"):
            # At most PAGES_PER_READ pages a poll: the cursor keeps the place, the next poll goes
            # on from it (an endpoint that always has more cannot hold the poll for ever).
            for _ in range(PAGES_PER_READ):
                since = self._cursors[route]
                url = f"{endpoint.rstrip('/')}/_awsview/{route}?since={since}&limit=2000"
                with said_as_botocore(url):
                    async with self._session.get(url) as response:
                        if response.status == 404:
                            raise Absent(
                                "this endpoint has no write-decision "
                                "journal (not the AWS View emulator)"
                            )
                        response.raise_for_status()
                        page = await response.json()
                if page.get(keys.JOURNAL) != self._journal_id:
                    if self._journal_id is not None and not again:  # another journal: start over
                        self._cursors = {"journal": 0, "invocations": 0}
                        self._records = {"journal": [], "invocations": []}
                        self._journal_id = page.get(keys.JOURNAL)
                        return await self._read(endpoint, again=True)
                    self._journal_id = page.get(keys.JOURNAL)
                if isinstance(page.get("started_at"), (int, float)):
                    self._started = float(page["started_at"])
                rows = page.get("items") or []
                self._records[route].extend(rows)
                del self._records[route][:-MAX_RECORDS]
                self._cursors[route] = page.get("cursor", self._cursors[route])
                if not page.get("more"):
                    break
        return JournalData(
            tuple(self._records["journal"]),
            tuple(self._records["invocations"]),
            self._journal_id,
            self._started,
        )
