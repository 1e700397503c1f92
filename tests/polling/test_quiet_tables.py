"""Polled (stock moto, as on AWS), a table that stopped changing is scanned less and less often,
and the first change brings it back to the poller's pace."""

from __future__ import annotations

import asyncio
import time

from awsview import labspec
from awsview.aws.session import Connection, Target
from awsview.model.state import LabState
from awsview.polling.pollers.dynamodb import TablePoller
from awsview.polling.quiet import ACTIVE_CEILING_S as QUIET_MAX_S
from awsview.polling.quiet import PACED
from tests.support.helpers import create_table
from tests.support.stock_moto import client

TABLE = "cost-q-orders"


async def test_a_quiet_table_is_read_less_often_and_a_change_still_shows(stock_moto_url):
    ddb = client(stock_moto_url, "dynamodb")
    create_table(ddb, TABLE)
    ddb.put_item(TableName=TABLE, Item={"id": {"S": "a"}})
    PACED.set(True)  # polled as in a scheduler's loop (a one-off read reads everything)
    model = LabState()
    poller = TablePoller(labspec.generic_spec("cost-q-"))
    async with Connection(Target(endpoint_url=stock_moto_url)) as conn:
        conn.limiter.scale = 1.0  # the waits as on AWS

        def scans() -> int:
            return conn.limiter.calls[("dynamodb", "Scan")]

        async def poll_for(seconds: float) -> None:  # as often as a busy lab makes it poll
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                model.apply(await poller.poll(conn, model))
                await asyncio.sleep(0.05)

        await poll_for(QUIET_MAX_S * 4)  # long enough to reach the quiet cadence
        before = scans()
        await poll_for(QUIET_MAX_S * 3)
        quiet = scans() - before
        # Polled 0.05 s apart, ~60 reads without the wait; with it, one per ~QUIET_MAX_S.
        assert quiet <= 4, f"{quiet} scans of an unchanged table"

        await asyncio.to_thread(ddb.put_item, TableName=TABLE, Item={"id": {"S": "b"}})
        deadline = time.monotonic() + QUIET_MAX_S * 1.2 + 5
        while not any(i["id"] == "b" for i in model.data(f"table:{TABLE}").items):
            assert time.monotonic() < deadline, "the change never showed"
            await poll_for(0.1)
        assert poller.quiet_wait(TABLE, model) < QUIET_MAX_S * 0.8  # back near the poller's pace


async def test_an_unpaced_scheduler_reads_a_quiet_table_every_round(stock_moto_url):
    """`awsview docs` waits, after each step, until every kind answered: its scheduler is unpaced,
    so a table that stopped changing is still read at the poller's pace (paced, its reads would
    spread out to IDLE_CEILING_S and hold every step that long)."""
    from awsview.polling.quiet import IDLE_CEILING_S
    from awsview.polling.scheduler import Scheduler

    ddb = client(stock_moto_url, "dynamodb")
    create_table(ddb, TABLE)
    spec = labspec.generic_spec("cost-q-")
    async with Connection(Target(endpoint_url=stock_moto_url)) as conn:
        conn.limiter.scale = 1e9  # no read-unit waits: only the pacing could hold a read back
        scheduler = Scheduler(
            conn, spec, pollers=[TablePoller(spec)], feed=False, paced=False, speed=0.1
        )
        scheduler.start()
        try:
            # Paced, twenty reads of an unchanged table take minutes (waits doubling up to
            # IDLE_CEILING_S); unpaced, a few seconds.
            deadline = time.monotonic() + IDLE_CEILING_S
            while conn.limiter.calls[("dynamodb", "Scan")] < 20:
                assert time.monotonic() < deadline, conn.limiter.calls[("dynamodb", "Scan")]
                await asyncio.sleep(0.1)
        finally:
            await scheduler.stop()
