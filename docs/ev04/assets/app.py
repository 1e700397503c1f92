"""The order worker: stores an order, or fails the way a real dependency would.

mode "flaky": the first attempt of an order fails with TransientOrderError, before storing it.
mode "permanent": every attempt fails with InvalidOrder (retrying cannot help).
stage "summary": reads the stored order back.
"""

import json
import os

import boto3

dynamodb = boto3.client("dynamodb")
ORDERS = os.environ["ORDERS_TABLE"]
ATTEMPTS = os.environ["ATTEMPTS_TABLE"]


class TransientOrderError(Exception):
    pass


class InvalidOrder(Exception):
    pass


def price(quantity):
    return quantity * 250 + 100


def summary(order_id):
    item = dynamodb.get_item(TableName=ORDERS, Key={"id": {"S": order_id}})["Item"]
    result = {
        "id": order_id,
        "quantity": int(item["quantity"]["N"]),
        "total_cents": int(item["total_cents"]["N"]),
        "completed": True,
    }
    print("RESULT " + json.dumps(result, sort_keys=True))
    return result


def handler(event, context):
    print("WORKFLOW " + json.dumps(event, sort_keys=True))
    if event.get("stage") == "summary":
        return summary(event["id"])
    if event.get("mode") == "permanent":
        raise InvalidOrder("this order can never be completed")
    quantity = event.get("quantity")
    if type(quantity) is not int or not 1 <= quantity <= 10:
        raise InvalidOrder("quantity must be a whole number from 1 to 10")
    counted = dynamodb.update_item(
        TableName=ATTEMPTS,
        Key={"id": {"S": event["id"]}},
        UpdateExpression="ADD attempts :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
        ReturnValues="UPDATED_NEW",
    )
    attempt = int(counted["Attributes"]["attempts"]["N"])
    if event.get("mode") == "flaky" and attempt == 1:
        raise TransientOrderError("the stock service did not answer")
    total = price(quantity)
    dynamodb.put_item(
        TableName=ORDERS,
        Item={
            "id": {"S": event["id"]},
            "quantity": {"N": str(quantity)},
            "total_cents": {"N": str(total)},
        },
    )
    result = {"id": event["id"], "quantity": quantity, "total_cents": total}
    print("RESULT " + json.dumps(result, sort_keys=True))
    return result
