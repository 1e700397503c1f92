"""The write-decision journal: every DynamoDB write, its condition, outcome, before and after,
who made it; durable across restarts; paged by cursor; read-only over HTTP."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.helpers import create_function, create_table, invoke, journal

PROTECTED = """
import os, boto3
def handler(event, context):
    db = boto3.client("dynamodb")
    item = {"id": {"S": event["id"]}, "quantity": {"N": str(event["quantity"])}}
    try:
        db.put_item(TableName=os.environ["TABLE"], Item=item,
                    ConditionExpression="attribute_not_exists(id)",
                    ReturnValuesOnConditionCheckFailure="ALL_OLD")
        return {"duplicate": False}
    except db.exceptions.ConditionalCheckFailedException as error:
        return {"duplicate": True, "old": error.response.get("Item")}
"""


def _decisions(emulator, table, since=0):
    return [
        d for d in journal(emulator.endpoint_url, since=since)["items"] if d["table_name"] == table
    ]


def test_conditional_put_records_accept_then_reject_with_items_and_caller(emulator):
    ddb, lam = emulator.client("dynamodb"), emulator.client("lambda")
    create_table(ddb, "j-orders")
    create_function(lam, "j-worker", PROTECTED, env={"TABLE": "j-orders"})
    first = json.loads(
        lam.invoke(FunctionName="j-worker", Payload=json.dumps({"id": "k", "quantity": 4}))[
            "Payload"
        ].read()
    )
    assert first == {"duplicate": False}
    error, second = invoke(lam, "j-worker", {"id": "k", "quantity": 4})
    assert second["duplicate"] is True
    assert second["old"] == {"id": {"S": "k"}, "quantity": {"N": "4"}}  # ALL_OLD came back
    accepted, rejected = _decisions(emulator, "j-orders")
    assert accepted["operation"] == "PutItem" and accepted["key"] == {"id": {"S": "k"}}
    assert accepted["condition"] == "attribute_not_exists(id)"
    assert accepted["outcome"] == "accepted" and accepted["before"] is None
    assert accepted["after"] == {"id": {"S": "k"}, "quantity": {"N": "4"}}
    assert rejected["outcome"] == "ConditionalCheckFailedException"
    assert rejected["before"] == rejected["after"] == accepted["after"]
    assert accepted["caller"]["kind"] == "lambda" and accepted["caller"]["function"] == "j-worker"
    assert accepted["caller"]["request_id"] != rejected["caller"]["request_id"]
    invocations = {i["request_id"] for i in journal(emulator.endpoint_url, "invocations")["items"]}
    assert {accepted["caller"]["request_id"], rejected["caller"]["request_id"]} <= invocations


def test_unconditional_overwrite_update_delete_and_errors(emulator):
    ddb = emulator.client("dynamodb")
    create_table(ddb, "j-misc")
    ddb.put_item(TableName="j-misc", Item={"id": {"S": "a"}, "n": {"N": "1"}})
    ddb.put_item(TableName="j-misc", Item={"id": {"S": "a"}, "n": {"N": "2"}})
    ddb.update_item(
        TableName="j-misc",
        Key={"id": {"S": "a"}},
        UpdateExpression="ADD n :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
    )
    with pytest.raises(ddb.exceptions.ConditionalCheckFailedException):
        ddb.delete_item(
            TableName="j-misc",
            Key={"id": {"S": "a"}},
            ConditionExpression="n = :x",
            ExpressionAttributeValues={":x": {"N": "9"}},
        )
    ddb.delete_item(TableName="j-misc", Key={"id": {"S": "a"}})
    with pytest.raises(ddb.exceptions.ClientError):
        ddb.put_item(TableName="j-misc", Item={"n": {"N": "1"}})  # no key: ValidationException
    rows = _decisions(emulator, "j-misc")
    assert [(r["operation"], r["outcome"]) for r in rows] == [
        ("PutItem", "accepted"),
        ("PutItem", "accepted"),
        ("UpdateItem", "accepted"),
        ("DeleteItem", "ConditionalCheckFailedException"),
        ("DeleteItem", "accepted"),
        ("PutItem", "ValidationException"),
    ]
    overwrite = rows[1]
    assert overwrite["condition"] is None
    assert overwrite["before"]["n"] == {"N": "1"} and overwrite["after"]["n"] == {"N": "2"}
    assert rows[2]["expression"]["update"] == "ADD n :one" and rows[2]["after"]["n"] == {"N": "3"}
    assert rows[4]["before"]["n"] == {"N": "3"} and rows[4]["after"] is None
    assert rows[0]["caller"]["kind"] == "api"


def test_batch_and_transaction_record_each_item(emulator):
    ddb = emulator.client("dynamodb")
    create_table(ddb, "j-batch")
    ddb.batch_write_item(
        RequestItems={
            "j-batch": [
                {"PutRequest": {"Item": {"id": {"S": "b1"}}}},
                {"PutRequest": {"Item": {"id": {"S": "b2"}}}},
            ]
        }
    )
    with pytest.raises(ddb.exceptions.TransactionCanceledException):
        ddb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": "j-batch", "Item": {"id": {"S": "b3"}}}},
                {
                    "Put": {
                        "TableName": "j-batch",
                        "Item": {"id": {"S": "b1"}},
                        "ConditionExpression": "attribute_not_exists(id)",
                    }
                },
            ]
        )
    rows = _decisions(emulator, "j-batch")
    assert [(r["operation"], r["key"]["id"]["S"], r["outcome"]) for r in rows] == [
        ("BatchWriteItem.Put", "b1", "accepted"),
        ("BatchWriteItem.Put", "b2", "accepted"),
        ("TransactWriteItems.Put", "b3", "TransactionCanceled"),
        ("TransactWriteItems.Put", "b1", "ConditionalCheckFailedException"),
    ]
    assert rows[2]["after"] is None  # the cancelled transaction wrote nothing


def test_thousand_writes_from_eight_threads_give_thousand_records_and_survive_restart(emulator):
    create_table(emulator.client("dynamodb"), "j-load")
    start = journal(emulator.endpoint_url, limit=1)  # noqa: F841 - the API answers before load
    clients = [emulator.client("dynamodb") for _ in range(8)]

    def write(i: int) -> None:
        clients[i % 8].put_item(
            TableName="j-load", Item={"id": {"S": f"k{i % 50}"}, "i": {"N": str(i)}}
        )

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(write, range(1000)))
    rows = _decisions(emulator, "j-load")
    assert len(rows) == 1000
    assert sorted(int(r["after"]["i"]["N"]) for r in rows) == list(range(1000))
    # Atomic with the write: each write's "before" is exactly the previous write's "after".
    last: dict[str, dict] = {}
    for row in rows:
        key = row["key"]["id"]["S"]
        assert row["before"] == last.get(key)
        last[key] = row["after"]

    emulator.restart()
    assert len(_decisions(emulator, "j-load")) == 1000


def test_cursor_paging_and_read_only_api(emulator):
    ddb = emulator.client("dynamodb")
    create_table(ddb, "j-page")
    for i in range(5):
        ddb.put_item(TableName="j-page", Item={"id": {"S": f"p{i}"}})
    everything = journal(emulator.endpoint_url)
    tail = everything["cursor"]
    page = journal(emulator.endpoint_url, since=tail - 5, limit=2)
    assert len(page["items"]) == 2 and page["more"] is True
    rest = journal(emulator.endpoint_url, since=page["cursor"])
    assert [r["key"]["id"]["S"] for r in page["items"] + rest["items"]] == [
        f"p{i}" for i in range(5)
    ]
    assert journal(emulator.endpoint_url, since=tail) == {
        "items": [],
        "cursor": tail,
        "more": False,
        "journal": everything["journal"],
        "instance": everything["instance"],
        "started_at": everything["started_at"],
    }
    request = urllib.request.Request(
        f"{emulator.endpoint_url}/_awsview/journal", data=b"{}", method="POST"
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code == 405
