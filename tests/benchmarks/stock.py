"""A polled backend for bench_all: stock moto server (no change feed, no Lambda or Step Functions
execution) in a process of its own, with what the timed changes need.

AWS View polls it as it polls LocalStack or AWS (adaptively: 0.3 s while something moves, 6-15 s
when idle); the naive viewer polls it every 2 s.
"""

from __future__ import annotations

import json
import time
from typing import Any

import boto3

from tests.benchmarks.bench_core import BENCH_QUEUE, ORDERS, WORKER_LOG

STREAM = "2024/01/01/[$LATEST]bench"
ROLE = "arn:aws:iam::123456789012:role/labex-ev04-workflow-role"


class StockChanges:
    """The timed changes on stock moto, recognised the way bench_core.Changes recognises them."""

    def __init__(self, url: str):
        kw = {
            "endpoint_url": url,
            "region_name": "us-east-1",
            "aws_access_key_id": "testing",
            "aws_secret_access_key": "testing",
        }
        self.ddb, self.sqs, self.logs, self.sfn = (
            boto3.client(s, **kw) for s in ("dynamodb", "sqs", "logs", "stepfunctions")
        )
        self.ddb.create_table(
            TableName=ORDERS,
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        self.queue_url = self.sqs.create_queue(QueueName=BENCH_QUEUE)["QueueUrl"]
        self.logs.create_log_group(logGroupName=WORKER_LOG)
        self.logs.create_log_stream(logGroupName=WORKER_LOG, logStreamName=STREAM)
        definition = {"StartAt": "Done", "States": {"Done": {"Type": "Pass", "End": True}}}
        self.machine = self.sfn.create_state_machine(
            name=ORDERS, definition=json.dumps(definition), roleArn=ROLE
        )["stateMachineArn"]

    def make(self, kind: str, n: int) -> float:
        made = time.time()
        if kind == "item write":
            self.ddb.put_item(TableName=ORDERS, Item={"id": {"S": f"bench-item-{n}"}})
        elif kind == "log line":
            message = "RESULT " + json.dumps({"id": "bench-seed", "bench": f"bench-log-{n}"})
            self.logs.put_log_events(
                logGroupName=WORKER_LOG,
                logStreamName=STREAM,
                logEvents=[{"timestamp": int(made * 1000), "message": message}],
            )
        elif kind == "execution start":
            self.sfn.start_execution(
                stateMachineArn=self.machine, name=f"bench-run-{n}", input="{}"
            )
        elif kind == "queue count":
            self.sqs.send_message(QueueUrl=self.queue_url, MessageBody=f"bench-{n}")
        else:
            raise ValueError(kind)
        return made

    def close(self) -> Any:
        return None
