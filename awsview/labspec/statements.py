"""The grammar of a checkpoint's ``check`` statements, known when a lab is loaded (what each
one means is awsview.core.checkpoints')."""

from __future__ import annotations

import re

_NAME = r"\S+"
_OP = r"(==|!=|>=|<=|>|<)"
STATEMENTS = tuple(
    re.compile(form.replace("NAME", _NAME).replace("OP", _OP).replace(" ", r"\s+"))
    for form in (
        "machine NAME exists",
        "machines none",
        "executions none",
        "execution NAME NAME",
        "history NAME NAME OP NAME",
        "table NAME count OP NAME",
        "item NAME NAME NAME OP NAME",
        "queue NAME empty",
        "queues none",
        "mapping NAME NAME",
        "role NAME invokes NAME",
        "function NAME updated",
        "decisions NAME (accepted|rejected) OP NAME",
        "reference unchanged",
    )
)


def statement_problem(check: str) -> str | None:
    """What is wrong with a ``check`` (statements joined by ``;``), or None."""
    for statement in filter(None, (s.strip() for s in check.split(";"))):
        if not any(form.fullmatch(statement) for form in STATEMENTS):
            return f"cannot read the statement {statement!r}"
    return None
