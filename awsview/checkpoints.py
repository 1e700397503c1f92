"""Lab checkpoints, evaluated live against the model.

A profile's checkpoint has a ``check``: statements joined by ``;``, all of which must hold:

    machine NAME exists            machines none            executions none
    execution NAME STATUS          history NAME EVENTTYPE == N
    table TABLE count == N         item TABLE KEY ATTRIBUTE == VALUE
    queue NAME empty               queues none              mapping QUEUE STATE
    role ROLE invokes FUNCTION     function NAME updated
    decisions KEY accepted|rejected == N                    reference unchanged

A statement is True, False, or None when the data it needs is not available (an error is never
taken for a pass or a fail).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from awsview.model.snapshot import Health
from awsview.pollers.base import LabModel
from awsview.profiles import Checkpoint, LabProfile


class Unknown(Exception):
    """The data needed is missing or not fresh; the answer is neither pass nor fail."""


@dataclass(frozen=True)
class CheckResult:
    checkpoint: Checkpoint
    passed: bool | None
    detail: str

    @property
    def mark(self) -> str:
        return {True: "✓", False: "✗", None: "?"}[self.passed]


@dataclass
class Memory:
    """What the evaluator remembers between rounds (e.g. a function's first code hash);
    ``first`` may be backed by the viewer's store so it survives restarts."""

    first_code: dict[str, str] = field(default_factory=dict)
    first: Callable[[str, str], str] | None = None
    held: dict[int, float] = field(default_factory=dict)  # checkpoint index -> when it first held

    def first_seen(self, name: str, value: str) -> str:
        if name not in self.first_code:
            self.first_code[name] = self.first(name, value) if self.first else value
        return self.first_code[name]


def _fresh(model: LabModel, key: str) -> Any:
    snapshot = model.get(key)
    if snapshot is None:
        raise Unknown(f"{key} not read yet")
    if snapshot.health is Health.ABSENT:
        return None
    if snapshot.health is not Health.OK:
        raise Unknown(f"{key}: {snapshot.error}")
    return snapshot.data


def _executions(model: LabModel) -> dict[str, Any]:
    runs = {}
    for machine in _fresh(model, "state_machines") or ():
        if model.get(f"executions:{machine.name}") is None:
            raise Unknown(f"executions of {machine.name} not read yet")
    for snapshot in model.with_prefix("executions:"):
        if snapshot.health is not Health.OK:
            raise Unknown(f"{snapshot.key}: {snapshot.error}")
        runs.update({e.name: e for e in snapshot.data or ()})
    return runs


def _compare(actual: Any, op: str, expected: str) -> bool:
    try:
        left, right = float(actual), float(expected)
    except (TypeError, ValueError):
        left, right = str(actual), expected
    return {"==": left == right, "!=": left != right, ">=": left >= right, "<=": left <= right,
            ">": left > right, "<": left < right}[op]


def _statement(words: list[str], model: LabModel, profile: LabProfile, memory: Memory) -> tuple[bool, str]:
    head = words[0]
    if head == "machines" and words[1:] == ["none"]:
        machines = _fresh(model, "state_machines") or ()
        return not machines, f"{len(machines)} state machine(s)"
    if head == "machine" and words[2:] == ["exists"]:
        machines = _fresh(model, "state_machines") or ()
        return any(m.name == words[1] for m in machines), f"machine {words[1]}"
    if head == "executions" and words[1:] == ["none"]:
        runs = _executions(model)
        return not runs, f"{len(runs)} execution(s)"
    if head == "execution" and len(words) == 3:
        run = _executions(model).get(words[1])
        return run is not None and run.status == words[2], f"{words[1]} {run.status if run else 'not started'}"
    if head == "history" and len(words) == 5:
        run = _executions(model).get(words[1])
        history = _fresh(model, f"history:{run.arn}") if run else None
        count = sum(e.type == words[2] for e in history.history.events) if history else 0
        return _compare(count, words[3], words[4]), f"{words[1]}: {count} {words[2]}"
    if head == "table" and words[2] == "count":
        table = _fresh(model, f"table:{words[1]}")
        count = len(table.items) if table else 0
        return _compare(count, words[3], words[4]), f"{words[1]}: {count} item(s)"
    if head == "item" and len(words) == 6:
        table = _fresh(model, f"table:{words[1]}")
        item = next((i for i in (table.items if table else ()) if str(i.get(profile.business_key)) == words[2]), None)
        value = item.get(words[3]) if item else None
        return item is not None and _compare(value, words[4], words[5]), f"{words[2]}.{words[3]} = {value}"
    if head == "queue" and words[2:] == ["empty"]:
        queue = next((q for q in _fresh(model, "queues") or () if q.name == words[1]), None)
        if queue is None:
            return False, f"no queue {words[1]}"
        return queue.empty, f"{queue.visible} visible, {queue.in_flight} in flight"
    if head == "queues" and words[1:] == ["none"]:
        queues = _fresh(model, "queues") or ()
        return not queues, f"{len(queues)} queue(s)"
    if head == "mapping" and len(words) == 3:
        mappings = [m for f in _fresh(model, "functions") or () for m in f.mappings
                    if m.source_arn.endswith(f":{words[1]}")]
        state = mappings[0].state if mappings else "none"
        return state == words[2], f"mapping {state}"
    if head == "role" and words[2] == "invokes":
        role = next((r for r in _fresh(model, "roles") or () if r.name == words[1]), None)
        ok = role is not None and "states.amazonaws.com" in role.trust_principals and any(
            g.effect == "Allow" and g.action.lower() in ("lambda:invokefunction", "lambda:*")
            and g.resource.endswith(f":function:{words[3]}") for g in role.grants)
        return ok, "granted" if ok else ("no role" if role is None else "not granted")
    if head == "function" and words[2:] == ["updated"]:
        fn = next((f for f in _fresh(model, "functions") or () if f.name == words[1]), None)
        if fn is None:
            return False, "no function"
        first = memory.first_seen(f"code:{fn.arn}", fn.code_sha256 or "")
        if fn.code_sha256 == first:  # the first version seen may already be the deployed one
            raise Unknown(f"CodeSha256 {(fn.code_sha256 or '')[:12]}, no other version seen yet")
        return True, f"CodeSha256 {(first or '')[:12]} → {(fn.code_sha256 or '')[:12]}"
    if head == "decisions" and len(words) == 5:
        journal = model.get("journal")
        if journal is not None and journal.health in (Health.STALE, Health.ERROR):
            raise Unknown(f"journal: {journal.error}")
        built = _fresh(model, "timeline")
        decisions = [d for k in (built.keys if built else ()) if k.key == words[1] for d in k.decisions]
        wanted = "Accepted" if words[2] == "accepted" else "Rejected"
        count = sum(d.outcome == wanted and d.kind != "delete" for d in decisions)
        return _compare(count, words[3], words[4]), f"{words[1]}: {count} {words[2]}"
    if head == "reference" and words[1:] == ["unchanged"]:
        verdicts = [(_fresh(model, f"table:{n}"), n) for n in profile.tables("reference")]
        bad = [f"{n}: {t.baseline if t else 'absent'}" for t, n in verdicts if t is None or t.baseline != "unchanged"]
        return not bad, "; ".join(bad) or "unchanged"
    raise ValueError(f"cannot read check {' '.join(words)!r}")


def evaluate(profile: LabProfile, model: LabModel, memory: Memory | None = None) -> tuple[CheckResult, ...]:
    """Checkpoints of earlier steps stay passed once they held (their step is done); those of the
    last step (the cleanup) are always evaluated live."""
    import time

    memory = memory or Memory()
    last_step = profile.checkpoints[-1].step if profile.checkpoints else None
    results = []
    for index, checkpoint in enumerate(profile.checkpoints):
        passed: bool | None = True
        details = []
        for statement in filter(None, (s.strip() for s in checkpoint.check.split(";"))):
            try:
                ok, detail = _statement(statement.split(), model, profile, memory)
            except Unknown as unknown:
                ok, detail = None, str(unknown)
            except (ValueError, IndexError, KeyError) as exc:
                ok, detail = None, f"check not understood: {exc}"
            details.append(detail)
            if ok is False:
                passed = False
            elif ok is None and passed is not False:
                passed = None
        detail = "; ".join(details)
        if passed is True and index not in memory.held:
            memory.held[index] = time.time()
        elif passed is not True and index in memory.held and checkpoint.step != last_step:
            passed = True
            detail = f"held at {time.strftime('%H:%M:%S', time.localtime(memory.held[index]))}"
        results.append(CheckResult(checkpoint, passed, detail))
    return tuple(results)


Evaluator = Callable[[LabProfile, LabModel], tuple[CheckResult, ...]]
