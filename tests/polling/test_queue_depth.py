"""Queue depth over time: each queue's visible / in-flight counts of the last five minutes, as two
sparklines in the queue panel (and so in `dump` and in recordings). q05's queue on the emulator
with a message that is taken and not deleted: it comes back after the visibility timeout, again
and again.
"""

from __future__ import annotations

import asyncio
import json
import time

from awsview import labspec
from awsview.aws.session import Connection, Target
from awsview.core import render
from awsview.labs.player import LabPlayer
from awsview.model.snapshot import Health
from awsview.polling.scheduler import Scheduler
from tests.support.emulator import RunningEmulator
from tests.support.helpers import wait_for

POISON = json.dumps({"id": "poison-order", "quantity": 99})  # the worker raises: quantity 1 to 10


def test_a_message_that_keeps_coming_back_reads_at_a_glance():
    now = 10_000.0
    depth = [(now - 400, 0, 0)]
    for start in range(-290, 0, 31):  # received, fails, back after a 30 s visibility timeout
        depth += [(now + start, 1, 0), (now + start + 1, 0, 1)]
    visible, in_flight = render.sparklines(tuple(depth), now).split(" / ")
    assert len(visible) == len(in_flight) == render.SPARK_CELLS
    assert in_flight == "█" * render.SPARK_CELLS  # always in flight …
    assert visible.count("█") >= 6  # … and visible again every half minute


def test_sparklines_say_what_they_do_not_know():
    now = 10_000.0
    assert render.sparklines((), now) == "—"
    visible, in_flight = render.sparklines(((now - 60, 0, 0), (now - 30, 3, 1)), now).split(" / ")
    assert visible.startswith(" " * 9) and visible.endswith(
        "▁██"
    )  # not watched before, then 0, then 3
    assert in_flight.endswith("▁▄▄")  # one scale for both: 1 of 3
    assert render.sparklines(((now - 900, 0, 0),), now) == "▁" * 12 + " / " + "▁" * 12


async def test_the_poison_message_comes_back_on_the_queue_panel(emulator: RunningEmulator):
    """The worker's part is played by the test, so the panel is asked about each state it saw, not
    about a moment it had to catch: received and not deleted (in flight), then back on the queue
    (its visibility timeout over, here cut to 0), twice. A real worker takes a returned message
    again within a tenth of a second, too quick a state for any poll, whatever the machine."""
    player = LabPlayer("q05", endpoint_url=emulator.endpoint_url, log=lambda line: None)
    player.setup()
    sqs = emulator.client("sqs")
    url = sqs.create_queue(QueueName="labex-q05-jobs")[
        "QueueUrl"
    ]  # the lab's queue, no worker connected
    profile = labspec.load("q05")
    async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
        scheduler = Scheduler(conn, profile, speed=0.5)
        scheduler.start()
        try:
            await asyncio.to_thread(sqs.send_message, QueueUrl=url, MessageBody=POISON)

            def last() -> tuple[int, int] | None:
                snapshot = scheduler.model.get("queues")
                if snapshot is None or snapshot.health is not Health.OK or not snapshot.data:
                    return None
                return snapshot.data[0].depth[-1][1:] if snapshot.data[0].depth else None

            async def seen(counts: tuple[int, int]) -> None:
                deadline = time.monotonic() + 60
                while last() != counts and time.monotonic() < deadline:
                    await asyncio.sleep(0.2)
                assert last() == counts, scheduler.model.get("queues")

            await seen((1, 0))
            for _ in range(2):  # taken, fails, comes back
                received = await asyncio.to_thread(
                    sqs.receive_message, QueueUrl=url, VisibilityTimeout=600, WaitTimeSeconds=5
                )
                handle = received["Messages"][0]["ReceiptHandle"]
                await seen((0, 1))
                await asyncio.to_thread(
                    sqs.change_message_visibility,
                    QueueUrl=url,
                    ReceiptHandle=handle,
                    VisibilityTimeout=0,
                )
                await seen((1, 0))
            points = scheduler.model.get("queues").data[0].depth
            assert sum(1 for a, b in zip(points, points[1:]) if a[2] > 0 and b[1] > 0) == 2
            panel = render.queues(scheduler.model, profile, time.time())[0]
            assert panel.columns[3] == render.DEPTH_COLUMN
            visible, in_flight = panel.rows[0].cells[3].split(" / ")
            assert set(visible[-2:]) - {"▁", " "} and set(in_flight) - {"▁", " "}
        finally:
            await scheduler.stop()
            sqs.delete_queue(QueueUrl=url)
    wait_for(lambda: url not in sqs.list_queues().get("QueueUrls", []))
