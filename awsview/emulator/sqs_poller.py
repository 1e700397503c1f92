"""The SQS -> Lambda poller behind event source mappings, as AWS runs it.

A mapping that is Enabled receives up to BatchSize visible messages with the queue's visibility
timeout, invokes its function with them and deletes them only on success. A failed batch stays
in flight until its visibility timeout ends, so it never blocks other messages, and the queue's
redrive policy moves it to the DLQ after maxReceiveCount receives.
"""

from __future__ import annotations

import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from awsview.emulator.lambda_runtime import LambdaRuntime
from awsview.emulator.moto_patches import mapping_state

log = logging.getLogger(__name__)

POLL_INTERVAL_S = 0.1
MAX_BATCHES_IN_FLIGHT = 5  # per mapping; AWS starts with five concurrent pollers


def sqs_event(message: Any, queue: Any, region: str) -> dict[str, Any]:
    return {
        "messageId": message.id,
        "receiptHandle": message.receipt_handle,
        "body": message.body,
        "attributes": {
            "ApproximateReceiveCount": str(message.approximate_receive_count),
            "SentTimestamp": str(message.sent_timestamp),
            "SenderId": str(getattr(message, "sender_id", "")),
            "ApproximateFirstReceiveTimestamp": str(message.approximate_first_receive_timestamp),
        },
        "messageAttributes": getattr(message, "message_attributes", None) or {},
        "md5OfBody": message.body_md5,
        "eventSource": "aws:sqs",
        "eventSourceARN": queue.queue_arn,
        "awsRegion": region,
    }


class SqsPoller:
    def __init__(self, runtime: LambdaRuntime, batches_in_flight: int = MAX_BATCHES_IN_FLIGHT):
        self.runtime = runtime
        self.batches_in_flight = batches_in_flight  # 1: one batch at a time, in queue order
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="esm")
        self._in_flight: dict[str, int] = {}
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="sqs-poller", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _run(self) -> None:
        while not self._stop.wait(POLL_INTERVAL_S):
            try:
                self.poll_once()
            except Exception:  # the poller must outlive any single odd mapping or queue
                log.exception("SQS poll round failed")

    def poll_once(self) -> None:
        from moto.awslambda.models import lambda_backends
        from moto.sqs.models import sqs_backends

        for account_id, regions in list(lambda_backends.items()):
            for region, backend in list(regions.items()):
                for esm in list(backend._event_source_mappings.values()):
                    if ":sqs:" not in esm.event_source_arn or mapping_state(esm) != "Enabled":
                        continue
                    queue = next(
                        (
                            q
                            for q in list(sqs_backends[account_id][region].queues.values())
                            if q.queue_arn == esm.event_source_arn
                        ),
                        None,
                    )
                    if queue is not None:
                        self._poll_mapping(backend, esm, queue, region)

    def _poll_mapping(self, backend: Any, esm: Any, queue: Any, region: str) -> None:
        from moto.sqs.models import sqs_backends

        while True:
            with self._lock:
                if self._in_flight.get(esm.uuid, 0) >= self.batches_in_flight:
                    return
            sqs = sqs_backends[esm.account_id][region]
            messages = sqs.receive_message(
                queue.name, esm.batch_size, 0, int(queue.visibility_timeout)
            )
            if not messages:
                return
            with self._lock:
                self._in_flight[esm.uuid] = self._in_flight.get(esm.uuid, 0) + 1
            self._pool.submit(self._deliver, backend, esm, queue, region, messages)

    def _deliver(
        self, backend: Any, esm: Any, queue: Any, region: str, messages: list[Any]
    ) -> None:
        from moto.sqs.models import sqs_backends

        try:
            fn = backend.get_function(esm.function_arn)
            event = {"Records": [sqs_event(m, queue, region) for m in messages]}
            caller = {
                "kind": "sqs",
                "mapping": esm.uuid,
                "queue_arn": queue.queue_arn,
                "message_ids": [m.id for m in messages],
            }
            result = self.runtime.invoke(fn, json.dumps(event).encode(), caller)
            if result.function_error:
                return  # the batch becomes visible again when its visibility timeout ends
            done = _successful(messages, result.payload, esm)
            sqs = sqs_backends[esm.account_id][region]
            for message in done:
                try:
                    sqs.delete_message(queue.name, message.receipt_handle)
                except Exception:  # the queue may have been deleted meanwhile
                    log.debug("could not delete %s", message.id)
        except Exception:  # one failed delivery must not stop the poller
            log.exception("delivery to %s failed", esm.function_arn)
        finally:
            with self._lock:
                self._in_flight[esm.uuid] -= 1


def _successful(messages: list[Any], payload: bytes, esm: Any) -> list[Any]:
    """Messages to delete: all of them, unless the function reports partial batch failures."""
    if "ReportBatchItemFailures" not in (esm.function_response_types or []):
        return messages
    try:
        failures = json.loads(payload).get("batchItemFailures") or []
        failed = {f.get("itemIdentifier") for f in failures}
    except (ValueError, AttributeError):
        return []
    return [m for m in messages if m.id not in failed]
