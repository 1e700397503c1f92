"""The jobs worker: handles each job of an SQS batch, and fails the batch on a poison job.

A job is a JSON object with a "task". A job whose task is "poison" cannot be handled: the worker
raises, the batch is not deleted, and the queue's redrive policy decides where it goes next.
"""

import json


class PoisonJob(Exception):
    pass


def handle(job):
    if job.get("task") == "poison":
        raise PoisonJob(f"job {job.get('id')} cannot be processed")
    print(f"DONE job {job.get('id')} task {job.get('task')}")


def handler(event, context):
    for record in event["Records"]:
        handle(json.loads(record["body"]))
    return {"processed": len(event["Records"])}
