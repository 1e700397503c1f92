"""Records every DynamoDB write decision the emulator makes, atomically with the write.

Wraps moto's DynamoHandler write actions. One lock covers the read of the item before, the
write itself, the read of the item after and the journal insert, so concurrent writers can never
interleave between a decision and the state it saw. A write whose decision cannot be recorded
(the state directory is full or read-only) is undone under the same lock and refused.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from typing import Any

from awsview.emulator.journal import ACCEPTED, Journal, JournalUnwritable, WriteDecision, now
from awsview.emulator.moto_patches import header_caller

log = logging.getLogger(__name__)
WRITE_LOCK = threading.RLock()
WRITE_ACTIONS = (
    "put_item",
    "update_item",
    "delete_item",
    "batch_write_item",
    "transact_write_items",
)


@dataclass
class _Target:
    table_name: str
    key: dict[str, Any]
    operation: str
    request: dict[str, Any]
    before: dict[str, Any] | None = None


def error_code(exc: BaseException) -> str:
    kind = getattr(exc, "error_type", None) or getattr(exc, "code", None) or type(exc).__name__
    return str(kind).rsplit("#", 1)[-1]


def _key_of(backend: Any, table_name: str, item: dict[str, Any]) -> dict[str, Any]:
    try:
        table = backend.get_table(table_name)
    except Exception:  # moto's error types vary: no table, no key
        return {}
    names = [table.hash_key_attr, table.range_key_attr]
    return {n: item[n] for n in names if n and n in item}


def _condition(request: dict[str, Any]) -> str | None:
    if request.get("ConditionExpression"):
        return request["ConditionExpression"]
    if request.get("Expected"):
        return "Expected " + json.dumps(request["Expected"], sort_keys=True)
    return None


def _targets(action: str, body: dict[str, Any], backend: Any) -> list[_Target]:
    if action == "put_item":
        table = body.get("TableName", "")
        return [_Target(table, _key_of(backend, table, body.get("Item") or {}), "PutItem", body)]
    if action in ("update_item", "delete_item"):
        op = "UpdateItem" if action == "update_item" else "DeleteItem"
        return [_Target(body.get("TableName", ""), body.get("Key") or {}, op, body)]
    if action == "batch_write_item":
        targets = []
        for table, requests in (body.get("RequestItems") or {}).items():
            for request in requests or []:
                if "PutRequest" in request:
                    item = request["PutRequest"].get("Item") or {}
                    targets.append(
                        _Target(
                            table,
                            _key_of(backend, table, item),
                            "BatchWriteItem.Put",
                            request["PutRequest"],
                        )
                    )
                elif "DeleteRequest" in request:
                    targets.append(
                        _Target(
                            table,
                            request["DeleteRequest"].get("Key") or {},
                            "BatchWriteItem.Delete",
                            request["DeleteRequest"],
                        )
                    )
        return targets
    targets = []
    for entry in body.get("TransactItems") or []:
        for kind, request in entry.items():
            table = request.get("TableName", "")
            key = request.get("Key") or _key_of(backend, table, request.get("Item") or {})
            targets.append(_Target(table, key, f"TransactWriteItems.{kind}", request))
    return targets


def _read(backend: Any, target: _Target) -> dict[str, Any] | None:
    if not target.key:
        return None
    try:
        item = backend.get_item(target.table_name, target.key)
    except Exception:  # no table, a bad key: no image
        return None
    return item.to_json()["Attributes"] if item is not None else None


def _cancellation_codes(exc: BaseException, count: int) -> list[str] | None:
    try:
        reasons = json.loads(getattr(exc, "description", "") or "{}").get("CancellationReasons")
    except ValueError:
        return None
    if not reasons or len(reasons) != count:
        return None
    codes = []
    for reason in reasons:
        code = reason.get("Code") or "None"
        codes.append(
            "ConditionalCheckFailedException"
            if code == "ConditionalCheckFailed"
            else "TransactionCanceled"
            if code == "None"
            else code
        )
    return codes


def install(journal: Journal) -> None:
    from moto.dynamodb.responses import DynamoHandler

    for action in WRITE_ACTIONS:
        setattr(DynamoHandler, action, _journaled(getattr(DynamoHandler, action), action, journal))


def _journaled(original: Any, action: str, journal: Journal) -> Any:
    def wrapper(self: Any) -> Any:
        body = self.body if isinstance(self.body, dict) else {}
        caller = header_caller(self.headers)
        with WRITE_LOCK:
            if not journal.writable():
                raise _unrecorded(journal.disk.failing or "", journal)  # nothing applied
            backend = self.dynamodb_backend
            targets = _targets(action, body, backend)
            for target in targets:
                target.before = _read(backend, target)
            started = now()
            try:
                result = original(self)
            except Exception as exc:  # whatever moto raised is journalled, then raised
                code = error_code(exc)
                codes = (
                    _cancellation_codes(exc, len(targets))
                    if action == "transact_write_items"
                    else None
                ) or [code] * len(targets)
                message = getattr(exc, "message", None) or str(exc)
                _keep(
                    journal,
                    backend,
                    targets,
                    [
                        _decision(target, outcome, message, _read(backend, target), caller, started)
                        for target, outcome in zip(targets, codes)
                    ],
                )
                raise
            _keep(
                journal,
                backend,
                targets,
                [
                    _decision(target, ACCEPTED, None, _read(backend, target), caller, started)
                    for target in targets
                ],
            )
            return result

    wrapper.__name__ = original.__name__
    wrapper.__doc__ = original.__doc__
    return wrapper


def _keep(
    journal: Journal, backend: Any, targets: list[_Target], decisions: list[WriteDecision]
) -> None:
    """Record the write's decisions; a write the journal cannot record is undone and refused,
    so every write a client saw acknowledged has its decision, and no decision lacks its write.
    """
    try:
        journal.record_decisions(decisions)
    except JournalUnwritable as exc:
        for target, decision in reversed(list(zip(targets, decisions))):
            if decision.after != target.before:
                _restore(backend, target)
        raise _unrecorded(str(exc), journal) from None


def _restore(backend: Any, target: _Target) -> None:
    """The item as it was before the write (through the backend, so the change feed hears it)."""
    try:
        if target.before is None:
            backend.delete_item(target.table_name, target.key)
        else:
            backend.put_item(target.table_name, target.before)
    except Exception:  # a table deleted meanwhile: nothing left to restore
        log.warning("could not undo an unrecorded write to %s", target.table_name, exc_info=True)


def _unrecorded(why: str, journal: Journal) -> Exception:
    """DynamoDB's InternalServerError, as 507 Insufficient Storage: SDKs retry 500, 502, 503 and
    504, and retrying cannot help until the state directory is writable again."""
    from moto.dynamodb.exceptions import ERROR_TYPE_PREFIX, DynamodbException

    if not why.startswith("the emulator"):
        why = f"the emulator's state directory {journal.path.parent} is {why}"
    error = DynamodbException(
        ERROR_TYPE_PREFIX + "InternalServerError",
        f"{why}: the write was not applied (the emulator records every write it accepts)",
    )
    error.code = 507
    return error


def _decision(
    target: _Target,
    outcome: str,
    message: str | None,
    after: dict[str, Any] | None,
    caller: dict[str, Any],
    at: float,
) -> WriteDecision:
    request = target.request
    return WriteDecision(
        time=at,
        table_name=target.table_name,
        key=target.key,
        operation=target.operation,
        condition=_condition(request),
        expression={
            "names": request.get("ExpressionAttributeNames") or {},
            "values": request.get("ExpressionAttributeValues") or {},
            "update": request.get("UpdateExpression"),
        },
        outcome=outcome,
        message=message if outcome != ACCEPTED else None,
        before=target.before,
        after=after,
        request={k: v for k, v in request.items() if k not in ("TableName",)},
        caller=caller,
    )
