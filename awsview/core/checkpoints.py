"""Lab checkpoints, evaluated live against the model, and the learner's progress through the
lab's steps.

A profile's checkpoint has a ``check``: statements joined by ``;``, all of which must hold:

    machine NAME exists            machines none            executions none
    execution NAME STATUS          history NAME EVENTTYPE == N
    table TABLE count == N         item TABLE KEY ATTRIBUTE == VALUE
    queue NAME empty               queues none              mapping QUEUE STATE
    role ROLE invokes FUNCTION     function NAME updated
    decisions KEY accepted|rejected == N                    reference unchanged

A checkpoint may instead (or as well) have a ``query``: a JMESPath expression over what
``awsview dump --json`` prints (``panels``, ``snapshots``, ``step``), which holds when its value
is truthy (not null, false, 0, nor an empty list, object or string); ``now`` is a second
expression that says what is there (without it, the query's own value is said).

A statement is True, False, or None when the data it needs is not available (an error is never
taken for a pass or a fail). Its NOW text says what is there ("no state machine X yet"), never
the name it looks for as if it existed.

Progress, within the current lab run (awsview.core.runs), whenever the viewer started:

- a step is done when its checkpoints held at any time in this run, or when a later step's did
  (the learner cannot be past a step not done);
- the learner is on the first step not done; the last step (the cleanup) counts only once the
  learner is on it — before that it would hold vacuously on an empty account — or once this run
  has write decisions (the lab's writes need its resources, so a cleanup that holds after them
  was done: a viewer that comes only after the cleanup sees every step done); it is live;
- marks: done ✓; ✗ only for the step the learner is on, or for a done step whose work is now
  gone or changed (a role's grant, a state machine, deployed code, a mapping, an item) before
  the cleanup; · not reached yet; ? not knowable from here (on any step). Counts and "none
  yet" conditions are moments: one that stopped holding after its step is still done.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from awsview.core.progress import (  # noqa: F401  (the names this module always offered)
    BROKEN,
    CURRENT,
    DONE,
    MARKS,
    TODO,
    UNKNOWN,
    Progress,
    progress,
)
from awsview.labspec import Checkpoint, LabSpec
from awsview.model import keys
from awsview.model.snapshot import Health
from awsview.model.state import LabState, TracedModel


class Unknown(Exception):
    """The data needed is missing or not fresh; the answer is neither pass nor fail."""


@dataclass(frozen=True)
class CheckResult:
    checkpoint: Checkpoint
    passed: bool | None  # done (True), not done (False), not knowable (None)
    detail: str
    state: str = ""  # done | current | broken | todo | unknown; "" reads it from ``passed``
    # The snapshot keys its check read, sorted (a recording holds them in this order): the
    # checkpoints panel is as fresh as these are.
    reads: tuple[str, ...] = ()

    @property
    def status(self) -> str:
        return self.state or {True: DONE, False: CURRENT, None: UNKNOWN}[self.passed]

    @property
    def mark(self) -> str:
        return MARKS[self.status]


@dataclass
class Memory:
    """What the evaluator remembers between rounds (e.g. a function's first code hash, when each
    checkpoint first held in this run); ``first``, ``recall`` and ``keep`` may be backed by the
    viewer's store so it survives restarts."""

    first_code: dict[str, str] = field(default_factory=dict)
    first: Callable[[str, str], str] | None = None
    held: dict[int, float] = field(default_factory=dict)  # checkpoint index -> when it first held
    run: int | None = None  # the lab run ``held`` is about
    recall: Callable[[int], dict[int, float]] | None = None  # run -> what held in it
    keep: Callable[[int, int, float], Any] | None = None  # run, checkpoint index, when

    def first_seen(self, name: str, value: str) -> str:
        if name not in self.first_code:
            self.first_code[name] = self.first(name, value) if self.first else value
        return self.first_code[name]

    def enter_run(self, run: int) -> None:
        """A new lab run starts with nothing held (but what a viewer saw of it before)."""
        if run == self.run:
            return
        self.run, self.held = run, {}
        if self.recall is not None:
            try:
                self.held = dict(self.recall(run))
            except Exception:
                pass  # an unreadable store: this session's memory only

    def hold(self, index: int, moment: float) -> None:
        if index in self.held:
            return
        self.held[index] = moment
        if self.keep is not None:
            try:
                self.keep(self.run or 0, index, moment)
            except Exception:  # an unwritable store: this session's memory only
                pass


def _fresh(model: LabState, key: str) -> Any:
    snapshot = model.get(key)
    if snapshot is None:
        raise Unknown(f"{key} not read yet")
    if snapshot.health is Health.ABSENT:
        return None
    if snapshot.health is not Health.OK:
        raise Unknown(f"{key}: {snapshot.error}")
    return snapshot.data


def _executions(model: LabState) -> dict[str, Any]:
    runs = {}
    for machine in _fresh(model, "state_machines") or ():
        if model.get(keys.executions(machine.name)) is None:
            raise Unknown(f"executions of {machine.name} not read yet")
    for snapshot in model.with_prefix(keys.EXECUTIONS_PREFIX):
        if snapshot.health is not Health.OK:
            raise Unknown(f"{snapshot.key}: {snapshot.error}")
        runs.update({e.name: e for e in snapshot.data or ()})
    return runs


def _compare(actual: Any, op: str, expected: str) -> bool:
    left: Any
    right: Any
    try:
        left, right = float(actual), float(expected)
    except (TypeError, ValueError):
        left, right = str(actual), expected
    return {
        "==": left == right,
        "!=": left != right,
        ">=": left >= right,
        "<=": left <= right,
        ">": left > right,
        "<": left < right,
    }[op]


def _statement(
    words: list[str], model: LabState, profile: LabSpec, memory: Memory
) -> tuple[bool, str, bool]:
    """(holds, what is there now, whether a failure means something built is gone or changed)."""
    head = words[0]
    if head == "machines" and words[1:] == ["none"]:
        machines = _fresh(model, "state_machines") or ()
        return not machines, _count(len(machines), "state machine"), False
    if head == "machine" and words[2:] == ["exists"]:
        machines = _fresh(model, "state_machines") or ()
        found = any(m.name == words[1] for m in machines)
        return (
            found,
            f"state machine {words[1]}" if found else f"no state machine {words[1]} yet",
            True,
        )
    if head == "executions" and words[1:] == ["none"]:
        runs = _executions(model)
        return not runs, _count(len(runs), "execution"), False
    if head == "execution" and len(words) == 3:
        run = _executions(model).get(words[1])
        return (
            run is not None and run.status == words[2],
            f"{words[1]} {run.status}" if run else f"no execution {words[1]} yet",
            False,
        )
    if head == "history" and len(words) == 5:
        run = _executions(model).get(words[1])
        if run is None:
            return _compare(0, words[3], words[4]), f"no execution {words[1]} yet", False
        history = _fresh(model, keys.history(run.arn))
        count = sum(e.type == words[2] for e in history.history.events) if history else 0
        return _compare(count, words[3], words[4]), f"{words[1]}: {count} {words[2]}", False
    if head == "table" and words[2] == "count":
        table = _fresh(model, keys.table(words[1]))
        if table is None:
            return _compare(0, words[3], words[4]), f"no table {words[1]}", False
        return (
            _compare(len(table.items), words[3], words[4]),
            f"{words[1]}: {_count(len(table.items), 'item')}",
            False,
        )
    if head == "item" and len(words) == 6:
        table = _fresh(model, keys.table(words[1]))
        item = next(
            (
                i
                for i in (table.items if table else ())
                if str(i.get(profile.business_key)) == words[2]
            ),
            None,
        )
        if item is None:
            return False, f"no item {words[2]} yet" if table else f"no table {words[1]}", True
        value = item.get(words[3])
        return _compare(value, words[4], words[5]), f"{words[2]}.{words[3]} = {value}", True
    if head == "queue" and words[2:] == ["empty"]:
        queue = next((q for q in _fresh(model, "queues") or () if q.name == words[1]), None)
        if queue is None:
            return False, f"no queue {words[1]} yet", True
        return (
            queue.empty,
            f"queue {words[1]}: {queue.visible} visible, {queue.in_flight} in flight",
            False,
        )
    if head == "queues" and words[1:] == ["none"]:
        queues = _fresh(model, "queues") or ()
        return not queues, _count(len(queues), "queue"), False
    if head == "mapping" and len(words) == 3:
        mappings = [
            m
            for f in _fresh(model, "functions") or ()
            for m in f.mappings
            if m.source_arn.endswith(f":{words[1]}")
        ]
        if not mappings:
            return False, f"no mapping from {words[1]} yet", True
        return mappings[0].state == words[2], f"mapping {mappings[0].state}", True
    if head == "role" and words[2] == "invokes":
        role = next((r for r in _fresh(model, "roles") or () if r.name == words[1]), None)
        if role is None:
            return False, f"no role {words[1]} yet", True
        ok = "states.amazonaws.com" in role.trust_principals and any(
            g.effect == "Allow"
            and g.action.lower() in ("lambda:invokefunction", "lambda:*")
            and g.resource.endswith(f":function:{words[3]}")
            for g in role.grants
        )
        return ok, "granted" if ok else f"role {words[1]} may not invoke {words[3]}", True
    if head == "function" and words[2:] == ["updated"]:
        fn = next((f for f in _fresh(model, "functions") or () if f.name == words[1]), None)
        if fn is None:
            return False, f"no function {words[1]}", True
        first = memory.first_seen(f"code:{fn.arn}", fn.code_sha256 or "")
        if fn.code_sha256 == first:  # the first version seen may already be the deployed one
            raise Unknown(f"CodeSha256 {(fn.code_sha256 or '')[:12]}, no other version seen yet")
        return True, f"CodeSha256 {(first or '')[:12]} → {(fn.code_sha256 or '')[:12]}", True
    if head == "decisions" and len(words) == 5:
        journal = model.get(keys.JOURNAL)
        if journal is not None and journal.health in (Health.STALE, Health.ERROR):
            raise Unknown(f"journal: {journal.error}")
        built = _fresh(model, "timeline")
        # The key's latest lifetime, as its verdict: a key deleted and written again (a lab
        # played again on the same table) starts counting anew.
        decisions = [
            d
            for k in (built.keys if built else ())
            if k.key == words[1]
            for d in (k.lifetimes[-1].decisions if k.lifetimes else k.decisions)
        ]
        wanted = "Accepted" if words[2] == "accepted" else "Rejected"
        count = sum(d.outcome == wanted and d.kind != "delete" for d in decisions)
        said = (
            f"{words[1]}: {count} {words[2]}"
            if decisions
            else f"no write decisions for {words[1]} yet"
        )
        return _compare(count, words[3], words[4]), said, False
    if head == "reference" and words[1:] == ["unchanged"]:
        verdicts = [(_fresh(model, keys.table(n)), n) for n in profile.tables("reference")]
        bad = [
            f"{n}: {t.baseline if t else 'absent'}"
            for t, n in verdicts
            if t is None or t.baseline != "unchanged"
        ]
        return not bad, "; ".join(bad) or "unchanged", True
    raise ValueError(f"cannot read check {' '.join(words)!r}")


def _count(n: int, noun: str) -> str:
    return f"no {noun}s" if n == 0 else f"{n} {noun}{'' if n == 1 else 's'}"


QUERY_SAID = 200  # characters of a query's value said as NOW


def dump_json(profile: LabSpec, model: LabState, panels: bool = True) -> dict[str, Any]:
    """What ``awsview dump --json`` prints of this model (what a query reads); without
    ``panels`` when no query reads them (rendering every panel each round costs the viewer)."""
    from awsview.core.printout import as_json, to_jsonable

    if panels:
        return as_json(profile, model, "", "", time.time())
    now = time.time()
    return {
        "lab": profile.name,
        "step": progress(tuple(model.data(keys.CHECKPOINTS, ()))).text or None,
        "panels": [],
        "snapshots": {
            key: {**s.to_json(now), "data": to_jsonable(s.data)}
            for key, s in sorted(model.snapshots.items())
        },
    }


def _reads_panels(checkpoints: tuple[Checkpoint, ...]) -> bool:
    return any("panels" in c.query or "panels" in c.now for c in checkpoints)


def _said(value: Any) -> str:
    import json

    if value in (None, [], {}, ""):
        return "nothing"
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= QUERY_SAID else text[: QUERY_SAID - 1] + "…"


def _query(
    checkpoint: Checkpoint, document: Callable[[], dict[str, Any]]
) -> tuple[bool | None, str]:
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        data = document()
        value = jmespath.search(checkpoint.query, data)
        said = jmespath.search(checkpoint.now, data) if checkpoint.now else value
    except JMESPathError as exc:
        return None, f"query not understood: {' '.join(str(exc).split())}"
    for snapshot in data.get("snapshots", {}).values():
        if snapshot.get("health") not in ("ok", "absent", None) and not value:
            return None, f"{_said(said)} (some reads failed)"
    return value not in (None, False, 0, [], {}, ""), _said(said)


def live(
    checkpoint: Checkpoint,
    model: LabState,
    profile: LabSpec,
    memory: Memory,
    document: Callable[[], dict[str, Any]] | None = None,
    read: set[str] | None = None,
    listed: set[str] | None = None,
) -> tuple[bool | None, str, bool]:
    """The checkpoint now: holds / not / not knowable, what is there, and whether it is broken.
    ``read`` gets the snapshot keys it looked at, ``listed`` the key prefixes it listed."""
    passed: bool | None = True
    details, broken = [], False
    traced = TracedModel(model)
    if checkpoint.query:
        traced.read.update(model.snapshots)  # a query reads the whole dump
        ok, detail = _query(
            checkpoint,
            document or (lambda: dump_json(profile, model, _reads_panels((checkpoint,)))),
        )
        details.append(detail)
        passed = ok
    for statement in filter(None, (s.strip() for s in checkpoint.check.split(";"))):
        try:
            ok, detail, lasting = _statement(statement.split(), traced, profile, memory)
        except Unknown as unknown:
            ok, detail, lasting = None, str(unknown), False
        except (ValueError, IndexError, KeyError) as exc:
            ok, detail, lasting = None, f"check not understood: {exc}", False
        details.append(detail)
        if ok is False:
            passed, broken = False, broken or lasting
        elif ok is None and passed is not False:
            passed = None
    if read is not None:
        read.update(traced.read)
    if listed is not None:
        listed.update(traced.prefixes)
    return passed, "; ".join(details), broken


def _ahead(passed: bool | None) -> str:
    """A checkpoint of a step not reached: ·, or ? when its data could not be read (an error is
    neither a pass nor a fail, and not a "not yet" either)."""
    return UNKNOWN if passed is None else TODO


def _run_wrote(model: LabState) -> bool:
    """The current lab run has write decisions (a timeline's keys are its current run's)."""
    snapshot = model.get(keys.TIMELINE)
    return snapshot is not None and snapshot.data is not None and bool(snapshot.data.keys)


def evaluate(
    profile: LabSpec, model: LabState, memory: Memory | None = None
) -> tuple[CheckResult, ...]:
    """Every checkpoint with its mark, by the progress rules of this module's docstring."""
    memory = memory or Memory()
    now = time.time()
    checkpoints = profile.checkpoints
    steps = list(dict.fromkeys(c.step for c in checkpoints))
    cleanup = steps[-1] if len(steps) > 1 else None
    cached: dict[str, Any] = {}

    def document() -> dict[str, Any]:  # one dump per round, only if a checkpoint queries it
        if "json" not in cached:
            cached["json"] = dump_json(profile, model, _reads_panels(checkpoints))
        return cached["json"]

    reads: list[set[str]] = [set() for _ in checkpoints]
    live_now = [
        live(c, model, profile, memory, document, read)
        for c, read in zip(checkpoints, reads, strict=True)
    ]
    for index, (passed, _, _) in enumerate(live_now):
        if passed is True and checkpoints[index].step != cleanup:
            memory.hold(index, now)
    by_step = {s: [i for i, c in enumerate(checkpoints) if c.step == s] for s in steps}
    done: dict[str, bool] = {}
    later = False
    for step in reversed([s for s in steps if s != cleanup]):
        later = later or all(i in memory.held for i in by_step[step])
        done[step] = later
    cleaned = cleanup is not None and all(live_now[i][0] is True for i in by_step[cleanup])
    reached = all(done.values()) or (
        cleaned and _run_wrote(model)
    )  # the learner is on the cleanup step
    if cleanup is not None:
        done = (
            {step: True for step in done} if reached else done
        )  # implied by the cleanup, a later step
        done[cleanup] = reached and cleaned
    on = next((s for s in steps if not done[s]), None)
    results = []
    for index, checkpoint in enumerate(checkpoints):
        passed, detail, broken = live_now[index]
        held = memory.held.get(index)
        since = (
            f"held at {time.strftime('%H:%M:%S', time.localtime(held))}" if held is not None else ""
        )
        step = checkpoint.step
        if step == cleanup:
            state = (
                {True: DONE, False: CURRENT, None: UNKNOWN}[passed] if reached else _ahead(passed)
            )
        elif done[step] and passed is False and broken and not reached:
            state = BROKEN
            detail = f"{detail} ({since})" if since else detail
        elif done[step] or held is not None:
            state = DONE
            if passed is not True:
                detail = since or "done: a later step holds"
        elif step == on:
            state = {True: DONE, False: CURRENT, None: UNKNOWN}[passed]
        else:
            state = _ahead(passed)
        results.append(
            CheckResult(
                checkpoint,
                {DONE: True, UNKNOWN: None}.get(state, False),
                detail,
                state,
                tuple(sorted(reads[index])),
            )
        )
    return tuple(results)


Evaluator = Callable[[LabSpec, LabState], tuple[CheckResult, ...]]
