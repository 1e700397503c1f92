"""Where the change feed taps moto 5.2: every write of a backend the labs use, and the changes the
emulator makes by itself.

A backend method whose name says it writes (``create_``, ``put_``, ``send_``, ``receive_`` …) is
wrapped so that, after it returns, the feed hears (kind, resource name). Wrapping by name prefix
rather than a list of operations means a write we did not think of still reaches the feed: when
its resource cannot be named, it is emitted with the name "" and readers read the whole kind.
Besides API writes the feed hears: the log lines Lambda invocations print (they go through
``put_log_events``), each history event of an execution and its final status, the SQS poller's
receives and deletes (through the SQS backend like any client's), redrives to a DLQ, and — by
timer — messages whose visibility timeout or delay ends and mappings that settle.

A failed write emits nothing: it changed nothing (a rejected DynamoDB write reaches the feed as a
journal change instead).
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
import time
from collections.abc import Callable
from typing import Any

from awsview.emulator.changes import ChangeFeed
from awsview.emulator.moto_patches import MAPPING_TRANSITION_S

log = logging.getLogger(__name__)

WRITES = re.compile(
    r"^(create|delete|update|put|send|receive|change|purge|attach|detach|start|stop|set|tag|"
    r"untag|batch_write|transact_write|publish|ensure|import|restore|execute|batch_execute|"
    r"add|remove|redrive|cancel|enable|disable)_"
)
# Writes that are reads, or that no panel shows.
NOT_CHANGES = {
    "start_query",
    "start_live_tail",
    "create_export_task",
    "cancel_export_task",
    "send_sqs_batch",
    "send_sns_message",
    "send_dynamodb_items",
    "send_kinesis_message",
    "send_log_event",
    "create_backup",
    "delete_backup",
}


def install(feed: Any) -> None:
    """``feed``: the newest emulator's ChangeFeed (or a forwarder to it)."""
    from moto.awslambda.models import LambdaBackend
    from moto.dynamodb.models import DynamoDBBackend
    from moto.iam.models import IAMBackend
    from moto.logs.models import LogsBackend
    from moto.sqs.models import SQSBackend
    from moto.stepfunctions.models import StepFunctionBackend
    from moto.stepfunctions.parser.models import StepFunctionsParserBackend

    _wrap(DynamoDBBackend, feed, _table)
    _wrap(SQSBackend, feed, _queue)
    _wrap(LogsBackend, feed, _log_group)
    _wrap(IAMBackend, feed, _role, only=lambda name: "role" in name or "polic" in name)
    _wrap(LambdaBackend, feed, _function)
    for cls in (StepFunctionBackend, StepFunctionsParserBackend):
        _wrap(cls, feed, _state_machine)
    _hook_executions(feed)


Namer = Callable[[str, dict[str, Any], Any, Any, ChangeFeed], None]


def _wrap(
    cls: type, feed: Any, namer: Namer, only: Callable[[str], bool] = lambda name: True
) -> None:
    for name, original in list(vars(cls).items()):
        if (
            not (inspect.isfunction(original) and WRITES.match(name) and only(name))
            or name in NOT_CHANGES
            or name.endswith("cloudformation_json")
        ):
            continue
        setattr(cls, name, _wrapped(original, name, feed, namer))


def _wrapped(original: Callable, method: str, feed: Any, namer: Namer) -> Callable:
    signature = inspect.signature(original)

    @functools.wraps(original)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        before = _sqs_count(self, args, kwargs) if method == "receive_message" else None
        result = original(self, *args, **kwargs)
        if before is not None and not result and _sqs_count(self, args, kwargs) == before:
            return result  # an empty receive (the SQS poller asks every 0.1 s): nothing moved
        try:
            namer(
                method, signature.bind_partial(self, *args, **kwargs).arguments, result, self, feed
            )
        except Exception:  # the feed must never turn a write into a failure
            log.exception("change feed: %s", method)
        return result

    wrapper._awsview_change_hook = True  # type: ignore[attr-defined]
    return wrapper


def _first(bound: dict[str, Any], *names: str) -> str:
    for name in names:
        value = bound.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


# -- DynamoDB -------------------------------------------------------------------------------


def _table(method: str, bound: dict[str, Any], result: Any, backend: Any, feed: ChangeFeed) -> None:
    if method == "transact_write_items":
        names = {
            request.get("TableName", "")
            for entry in bound.get("transact_items") or []
            for request in entry.values()
            if isinstance(request, dict)
        }
        for name in names or {""}:
            feed.emit("table", name)
        return
    table = bound.get("table")  # update_table_streams and the like pass the Table itself
    name = getattr(table, "name", None) or _first(bound, "table_name", "name", "target_table_name")
    feed.emit("table", name)  # PartiQL statements and the like: "" (every table)


# -- SQS ------------------------------------------------------------------------------------


def _sqs_count(backend: Any, args: tuple, kwargs: dict) -> int:
    """Messages in a queue: a receive that returns none may still have moved some to a DLQ."""
    name = kwargs.get("queue_name", args[0] if args else None)
    queue = backend.queues.get(name) if isinstance(name, str) else None
    return len(getattr(queue, "_messages", ())) if queue is not None else -1


def _queue(method: str, bound: dict[str, Any], result: Any, backend: Any, feed: ChangeFeed) -> None:
    name = _first(bound, "queue_name", "name")
    feed.emit("queue", name)
    queue = backend.queues.get(name)
    if queue is None:
        return
    dlq = getattr(queue, "dead_letter_queue", None)
    if method == "receive_message" and dlq is not None:
        feed.emit("queue", dlq.name)  # a redrive moves messages there
    # Counts that time alone will change: in-flight messages whose visibility timeout ends, and
    # delayed ones that become visible.
    now_ms = time.time() * 1000
    for message in list(getattr(queue, "_messages", ())):
        for due in (getattr(message, "visible_at", 0), getattr(message, "delayed_until", 0)):
            if due and due > now_ms:
                feed.later((due - now_ms) / 1000 + 0.01, "queue", name)


# -- CloudWatch Logs ------------------------------------------------------------------------


def _log_group(
    method: str, bound: dict[str, Any], result: Any, backend: Any, feed: ChangeFeed
) -> None:
    feed.emit("log_group", _first(bound, "log_group_name", "logGroupName"))


# -- IAM ------------------------------------------------------------------------------------


def _role(method: str, bound: dict[str, Any], result: Any, backend: Any, feed: ChangeFeed) -> None:
    feed.emit("role", _first(bound, "role_name"))  # a managed policy's change: "" (every role)


# -- Lambda ---------------------------------------------------------------------------------


def _function_name(value: str) -> str:
    if value.startswith("arn:"):
        parts = value.split(":")
        return parts[6] if len(parts) > 6 else value
    return value.split(":", 1)[0]


def _function(
    method: str, bound: dict[str, Any], result: Any, backend: Any, feed: ChangeFeed
) -> None:
    if "event_source_mapping" in method:
        uuid = _first(bound, "uuid") or getattr(result, "uuid", "")
        feed.emit("mapping", uuid)
        feed.later(MAPPING_TRANSITION_S + 0.05, "mapping", uuid)  # Creating/Enabling/… settles
        return
    spec = bound.get("spec") if isinstance(bound.get("spec"), dict) else {}
    name = _first(bound, "function_name", "name_or_arn") or str(spec.get("FunctionName") or "")
    feed.emit("function", _function_name(name) if name else "")


# -- Step Functions -------------------------------------------------------------------------


def _state_machine(
    method: str, bound: dict[str, Any], result: Any, backend: Any, feed: ChangeFeed
) -> None:
    if method in ("start_execution", "stop_execution"):
        arn = getattr(result, "execution_arn", None) or _first(
            bound, "execution_arn", "state_machine_arn"
        )
        feed.emit("execution", arn)
        return
    if "activity" in method or "map_run" in method or method.startswith("send_task"):
        return  # nothing a panel shows
    arn = getattr(result, "arn", None) or _first(bound, "arn", "state_machine_arn")
    feed.emit("state_machine", arn if isinstance(arn, str) else "")


def _hook_executions(feed: Any) -> None:
    """An execution's progress: each history event (kind "history"), then its final status
    ("execution"; set after the last event, so a reader woken by the last event alone could
    still read RUNNING)."""
    from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager
    from moto.stepfunctions.parser.backend import execution, execution_worker

    original_environment = execution_worker.ExecutionWorker._get_evaluation_environment
    original_add = EventManager.add_event
    original_terminated = execution.BaseExecutionWorkerCommunication.terminated

    def _get_evaluation_environment(self: Any) -> Any:
        env = original_environment(self)
        env.event_manager._awsview_execution = self._evaluation_details.execution_details.arn
        return env

    def add_event(self: Any, *args: Any, **kwargs: Any) -> int:
        event_id = original_add(self, *args, **kwargs)
        arn = getattr(self, "_awsview_execution", None)
        if arn:
            feed.emit("history", arn)  # the execution's row is unchanged until it ends
        return event_id

    def terminated(self: Any) -> None:
        original_terminated(self)
        feed.emit("execution", self.execution.exec_arn)

    execution_worker.ExecutionWorker._get_evaluation_environment = _get_evaluation_environment
    EventManager.add_event = add_event
    execution.BaseExecutionWorkerCommunication.terminated = terminated
