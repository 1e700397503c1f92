"""The scan budget, on a 2,500-item table in the emulator (which reports the read units AWS
would bill): a big table is read page by page, never whole every poll; each table waits until its
read units are paid back, so a lab's small table stays fast; every unit is counted.

The poller's page and pass sizes are its own attributes: the first test sets them to a tenth of
the defaults (200 items a poll, 2,000 a pass), so that a table of a tenth of the size is cut short
in the same way; the second reads with the defaults."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import pytest

from awsview.aws.session import Connection, Target
from awsview.labspec import generic_spec
from awsview.model.state import LabState
from awsview.polling.pollers.dynamodb import MAX_ITEMS, POLL_ITEMS, READ_UNITS_PER_S, TablePoller

BIG, SMALL = "budget-big", "budget-small"
SCALE = 10  # the first test's poller reads a tenth of POLL_ITEMS a poll, MAX_ITEMS a pass
ITEMS = 2_500  # more than such a pass reads, so that a pass is cut short
PAGE, PASS = POLL_ITEMS // SCALE, MAX_ITEMS // SCALE
ITEM_BYTES = (
    len("id") + len("order-000000") + len("qty") + 2 + len("note") + 30
)  # as DynamoDB sizes it


def create(client, name: str) -> None:
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


@pytest.fixture(scope="module")
def tables(emulator):
    dynamodb = emulator.client("dynamodb")
    create(dynamodb, BIG)
    create(dynamodb, SMALL)

    def write(start: int) -> None:
        client = emulator.client("dynamodb")
        for first in range(start, start + 250, 25):
            client.batch_write_item(
                RequestItems={
                    BIG: [
                        {
                            "PutRequest": {
                                "Item": {
                                    "id": {"S": f"order-{i:06d}"},
                                    "qty": {"N": str(10 + i % 80)},
                                    "note": {"S": "x" * 30},
                                }
                            }
                        }
                        for i in range(first, first + 25)
                    ]
                }
            )

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(write, range(0, ITEMS, 250)))
    for i in range(5):
        dynamodb.put_item(TableName=SMALL, Item={"id": {"S": f"k{i}"}})
    return emulator


async def test_a_big_table_is_read_in_pages_and_a_small_one_whole(tables):
    poller = TablePoller(generic_spec("budget-"))
    poller.poll_items, poller.max_items = PAGE, PASS
    model = LabState()
    async with Connection(Target(endpoint_url=tables.endpoint_url)) as conn:
        conn.limiter.scale = 1.0  # the budget as on AWS, so the waits below are AWS's
        scans = lambda: conn.limiter.calls[("dynamodb", "Scan")]  # noqa: E731

        model.apply(await poller.poll(conn, model))
        big, small = model.data(f"table:{BIG}"), model.data(f"table:{SMALL}")
        assert len(small.items) == 5 and not small.paged
        assert len(big.items) == PAGE and big.paged and big.item_count == ITEMS
        assert scans() == 2  # one page of the big table, the small one whole
        # The units AWS reports (and the emulator computes as AWS does) are counted per table.
        page_units = math.ceil(PAGE * ITEM_BYTES / 4096) / 2
        assert conn.limiter.read_units[BIG] == page_units
        assert conn.limiter.read_units[SMALL] == 0.5
        # Each table waits until its units are paid back: the big one seconds, the small one not.
        assert poller.wait(BIG, conn) == page_units / READ_UNITS_PER_S  # 1.5 units: 0.3 s
        assert poller.wait(SMALL, conn) == 0.5 / READ_UNITS_PER_S

        conn.limiter.scale = 0.01  # 30 s for the big table, 10 s for the small one: neither is due
        model.apply(await poller.poll(conn, model))
        assert scans() == 2 and conn.limiter.read_units[BIG] == page_units

        # A pass: page after page, each poll reading at most a page of items, never the whole
        # table.
        conn.limiter.scale = 1e9  # no waiting from here on
        passes = PASS // PAGE
        for _ in range(passes - 1):
            before = scans()
            model.apply(await poller.poll(conn, model))
            assert scans() - before == 2
        big = model.data(f"table:{BIG}")
        assert len(big.items) == PASS and big.truncated
        assert conn.limiter.read_units[BIG] == pytest.approx(passes * page_units)

        # Between passes, what the last pass read stays shown; an item deleted is gone after a pass.
        gone = big.items[0]["id"]
        tables.client("dynamodb").delete_item(TableName=BIG, Key={"id": {"S": gone}})
        model.apply(await poller.poll(conn, model))
        assert len(model.data(f"table:{BIG}").items) == PASS
        for _ in range(passes - 1):
            model.apply(await poller.poll(conn, model))
        ids = {item["id"] for item in model.data(f"table:{BIG}").items}
        assert gone not in ids and len(ids) == PASS


async def test_the_panel_title_says_how_the_table_is_read(tables):
    from awsview.core.render import panels

    poller = TablePoller(generic_spec("budget-"))
    model = LabState()
    async with Connection(Target(endpoint_url=tables.endpoint_url)) as conn:
        model.apply(await poller.poll(conn, model))
    titles = [p.title for p in panels(model, generic_spec("budget-"), 0) if p.name == "tables"]
    count = tables.client("dynamodb").describe_table(TableName=BIG)["Table"][
        "ItemCount"
    ]  # an earlier test deletes one
    assert f"Table · {BIG} · 2,000 of ~{count:,} items, read in pages" in titles
    assert f"Table · {SMALL}" in titles
