"""The order consumer as the VM provides it: one SQS record per call, each order stored with a
plain put_item (a repeated job writes again)."""

import json
import os

import boto3

TABLE = os.environ["TABLE_NAME"]
# The lab VM's endpoint, as the worker has always been configured on it.
dynamodb = boto3.client("dynamodb", endpoint_url="http://127.0.0.1:5000", region_name="us-east-1")


def read_job(event):
    print("EVENT " + json.dumps(event, sort_keys=True))
    records = event.get("Records")
    if set(event) != {"Records"} or len(records) != 1:
        raise ValueError("expected exactly one SQS record")
    job = json.loads(records[0]["body"])
    print("JOB " + json.dumps(job, sort_keys=True))
    if set(job) != {"id", "quantity"} or not isinstance(job["id"], str):
        raise ValueError("a job has an id and a quantity, nothing else")
    quantity = job["quantity"]
    if type(quantity) is not int or not 1 <= quantity <= 10:
        raise ValueError("quantity must be a whole number from 1 to 10")
    return job


def order_item(job):
    return {
        "id": {"S": job["id"]},
        "quantity": {"N": str(job["quantity"])},
        "total_cents": {"N": str(job["quantity"] * 250 + 100)},
    }


def handler(event, context):
    job = read_job(event)
    dynamodb.put_item(TableName=TABLE, Item=order_item(job))
    result = {"id": job["id"], "quantity": job["quantity"], "processed": True, "duplicate": False}
    print("RESULT " + json.dumps(result, sort_keys=True))
    return result
