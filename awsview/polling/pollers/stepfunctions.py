"""State machines, their executions and execution histories.

A definition is described once per machine (and again on a slow cadence); a finished
execution is described once; a finished execution's history is fetched once and cached.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable
from typing import Any

from awsview.aws.answers import Pages
from awsview.aws.session import Connection
from awsview.model import keys
from awsview.model.asl import DefinitionError, parse_definition
from awsview.model.history import parse_history
from awsview.model.resources import Execution, History, StateMachine
from awsview.model.snapshot import Health, Snapshot
from awsview.model.state import LabState
from awsview.polling.base import Poller, failing, unless_deleted
from awsview.polling.quiet import LISTING_CEILING_S, Quiet

MACHINES = keys.STATE_MACHINES
EXECUTIONS = keys.EXECUTIONS  # key: executions:<machine name>
HISTORY = keys.HISTORY  # key: history:<execution arn>
REDESCRIBE_S = 30.0
MAX_EXECUTIONS = 100  # newest first, per machine
MAX_HISTORIES = 25  # newest executions whose histories are followed
# Polled, the probes of running executions' histories that found nothing new share this rate
# (GetExecutionHistory refills at 5 per second for the whole account): with many executions
# waiting in a Retry or a Wait state, each is probed less often.
HISTORY_PROBES_PER_S = 1.0


def _json(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _newest_first(executions: Iterable[Execution]) -> list[Execution]:
    """Newest start first; an execution without a start (not described yet) before them all."""
    return sorted(executions, key=lambda e: (e.started is None, e.started), reverse=True)


def machine_name(arn: str) -> str:
    """The state machine's name in a state machine or execution ARN."""
    parts = arn.split(":")
    return parts[6] if len(parts) > 6 and parts[5] in ("stateMachine", "execution") else ""


class StateMachinePoller(Poller):
    kind = MACHINES
    slow_interval = 10.0
    follows = ("state_machine",)

    def __init__(self, profile):
        super().__init__(profile)
        self._described: dict[str, tuple[float, StateMachine]] = {}
        self._quiet = Quiet(LISTING_CEILING_S)

    async def refresh(
        self, conn: Connection, model: LabState, names: frozenset[str]
    ) -> list[Snapshot[Any]]:
        """Lists the machines and describes again those the change feed named."""
        names = frozenset(n for n in names if self.prefix_match(machine_name(n)))
        if not names:
            return []
        for arn in names:
            self._described.pop(arn, None)
        self._quiet.forget(MACHINES)
        return await self.poll(conn, model)

    async def poll(self, conn: Connection, model: LabState) -> list[Snapshot[Any]]:
        if model.get(MACHINES) is not None and not self._quiet.due(MACHINES, model):
            return []  # listed lately and unchanged since: a lab creates machines seldom

        async def fetch() -> tuple[StateMachine, ...]:
            listed = await conn.pages("stepfunctions", "list_state_machines", "stateMachines")
            machines = []
            for entry in listed:
                if not self.prefix_match(entry["name"]):
                    continue
                cached = self._described.get(entry["stateMachineArn"])
                if cached is None or time.monotonic() - cached[0] > REDESCRIBE_S:
                    described = await unless_deleted(self._describe(conn, entry))
                    if described is None:
                        continue  # deleted between the listing and the describe: it is gone
                    cached = (time.monotonic(), described)
                    self._described[entry["stateMachineArn"]] = cached
                machines.append(cached[1])
            live = {m.arn for m in machines}
            self._described = {k: v for k, v in self._described.items() if k in live}
            return tuple(sorted(machines, key=lambda m: m.name))

        previous = model.get(MACHINES)
        snapshot = await self.fetch(model, MACHINES, fetch)
        self._quiet.read(
            MACHINES,
            previous is None or snapshot.data != previous.data,
            failed=failing(snapshot),
        )
        return [snapshot]

    async def _describe(self, conn: Connection, entry: dict[str, Any]) -> StateMachine:
        detail = await conn.call(
            "stepfunctions", "describe_state_machine", stateMachineArn=entry["stateMachineArn"]
        )
        text = detail.get("definition")
        definition, error = None, None
        try:
            definition = parse_definition(text or "")
        except DefinitionError as exc:
            error = str(exc)
        return StateMachine(
            name=entry["name"],
            arn=entry["stateMachineArn"],
            type=entry.get("type", detail.get("type", "STANDARD")),
            created=entry.get("creationDate"),
            role_arn=detail.get("roleArn"),
            definition=definition,
            definition_text=text,
            definition_error=error,
        )


class ExecutionPoller(Poller):
    kind = EXECUTIONS
    slow_interval = 8.0
    follows = ("execution",)
    after = (MACHINES,)

    def __init__(self, profile):
        super().__init__(profile)
        # Finished executions by (ARN, start): a lab run again reuses execution names and ARNs.
        self._finished: dict[tuple[str, Any], Execution] = {}
        self._quiet = Quiet()  # per machine: its listing is the probe of its executions

    def is_busy(self, model: LabState) -> bool:
        return any(e.running for s in model.with_prefix(f"{EXECUTIONS}:") for e in (s.data or ()))

    async def poll(self, conn: Connection, model: LabState) -> list[Snapshot[Any]]:
        machines = model.data(MACHINES, ())
        snapshots = []
        for machine in machines:
            key = f"{EXECUTIONS}:{machine.name}"
            previous = model.get(key)
            if previous is not None and not self._quiet.due(key, model):
                continue
            snapshot = await self.fetch(
                model, key, lambda m=machine: self._executions(conn, m, model)
            )
            self._quiet.read(
                key,
                previous is None or snapshot.data != previous.data,
                failed=failing(snapshot),
            )
            snapshots.append(snapshot)
            if snapshot.health is Health.OK and snapshot.data is not None:
                # This machine's listing answered: the histories of its executions that are no
                # longer listed go now (a server restarted empty), not once every other
                # machine's listing answered too.
                arns, mine = {e.arn for e in snapshot.data}, machine.name
                model.drop(
                    _histories(model, lambda a, m=mine, k=arns: _machine_of(a) == m and a not in k)
                )
        live = {f"{EXECUTIONS}:{m.name}" for m in machines}
        self._quiet.keep(live)
        gone = [s.key for s in model.with_prefix(f"{EXECUTIONS}:") if s.key not in live]
        listed = model.get(MACHINES)
        if listed is not None and listed.health is Health.OK and listed.data is not None:
            # Machines were listed successfully and these are no longer there: their executions'
            # histories go with them (an execution ARN names its machine), even if the history
            # reader is not asked again (it is, only once its inputs change).
            names = {m.name for m in machines}
            model.drop(gone + _histories(model, lambda arn: _machine_of(arn) not in names))
        return snapshots

    async def refresh(
        self, conn: Connection, model: LabState, names: frozenset[str]
    ) -> list[Snapshot[Any]]:
        """The executions the change feed named (started or ended), each described alone: the
        feed names every execution that starts, so a new one needs no listing of its machine."""
        wanted: dict[str, set[str]] = {}
        for name in names:
            wanted.setdefault(machine_name(name), set()).add(name)
        return [
            await self.fetch(
                model,
                f"{EXECUTIONS}:{machine.name}",
                lambda m=machine: self._changed(conn, m, wanted[m.name], model),
            )
            for machine in model.data(MACHINES, ())
            if machine.name in wanted
        ]

    async def _changed(
        self, conn: Connection, machine: StateMachine, arns: set[str], model: LabState
    ) -> tuple[Execution, ...]:
        """The machine's executions with those named described again (at once, side by side):
        the listing this saves is slow on a busy machine, and a changed execution would wait
        for it and for the describes of the others new in it. Listed again when nothing
        is known yet, or when a named one is gone (deleted with its machine)."""
        known = model.data(f"{EXECUTIONS}:{machine.name}")
        if known is None or any(arn.split(":")[5:6] != ["execution"] for arn in arns):
            return await self._executions(conn, machine, model)
        described = await asyncio.gather(
            *(
                unless_deleted(conn.call("stepfunctions", "describe_execution", executionArn=arn))
                for arn in sorted(arns)
            )
        )
        if any(d is None for d in described):
            return await self._executions(conn, machine, model)  # gone: list again
        fresh = {
            arn: self._execution(machine, {"executionArn": arn, "name": d.get("name")}, d)
            for arn, d in zip(sorted(arns), described)
        }
        # A name run again has a new start: the described run replaces the one shown.
        executions = _newest_first([fresh.pop(e.arn, e) for e in known] + list(fresh.values()))
        return tuple(executions[:MAX_EXECUTIONS])

    async def _executions(
        self, conn: Connection, machine: StateMachine, model: LabState
    ) -> tuple[Execution, ...]:
        # One page, newest first: the panel shows no more than it holds.
        listed = (
            await conn.call(
                "stepfunctions",
                "list_executions",
                maxResults=MAX_EXECUTIONS,
                stateMachineArn=machine.arn,
            )
        ).get("executions") or []
        # A running execution is described once; after that only when the listing shows another
        # status (its input is fixed; its output and error come with the end). The lab's retries
        # keep executions RUNNING for seconds, and on stock moto they never end: describing each
        # of them on every read was most of the reads' calls.
        running = {
            (e.arn, e.started): e
            for e in model.data(f"{EXECUTIONS}:{machine.name}", ())
            if e.running
        }
        executions = []
        for entry in listed:
            arn = entry["executionArn"]
            cached = self._finished.get((arn, entry.get("startDate")))
            if cached is None:
                seen = running.get((arn, entry.get("startDate")))
                cached = seen if seen is not None and entry.get("status") == seen.status else None
            if cached is not None:
                executions.append(cached)
                continue
            described = await unless_deleted(
                conn.call("stepfunctions", "describe_execution", executionArn=arn)
            )
            if described is None:
                continue  # its machine was deleted between the listing and the describe
            executions.append(self._execution(machine, entry, described))
        return tuple(_newest_first(executions))

    def _execution(
        self, machine: StateMachine, entry: dict[str, Any], described: dict[str, Any]
    ) -> Execution:
        arn = entry["executionArn"]
        execution = Execution(
            name=entry.get("name") or arn.rsplit(":", 1)[-1],
            arn=arn,
            machine_arn=machine.arn,
            status=described.get("status", entry.get("status", "UNKNOWN")),
            started=described.get("startDate", entry.get("startDate")),
            stopped=described.get("stopDate", entry.get("stopDate")),
            input=_json(described.get("input")),
            output=_json(described.get("output")),
            error=described.get("error"),
            cause=described.get("cause"),
            described=True,
        )
        if not execution.running:
            self._finished[(arn, entry.get("startDate", execution.started))] = execution
        return execution


def _newest(model: LabState) -> list[Execution]:
    """Every machine's executions, newest first."""
    return _newest_first(e for s in model.with_prefix(f"{EXECUTIONS}:") for e in (s.data or ()))


class HistoryPoller(Poller):
    """Histories of the newest executions, fetched incrementally (newest events first on AWS)."""

    kind = HISTORY
    fast_interval = 0.3
    slow_interval = 8.0
    follows = ("execution", "history")
    after = (f"{EXECUTIONS}:",)

    def __init__(self, profile):
        super().__init__(profile)
        self._quiet = Quiet()  # per running execution: the probe that found nothing new waits

    def is_busy(self, model: LabState) -> bool:
        return any(not s.data.complete for s in model.with_prefix(f"{HISTORY}:") if s.data)

    def after_change(self, model: LabState) -> frozenset[str] | None:
        """The histories the feed does not name once the executions changed: a new execution's
        (named before its row existed), one that ended (read while its row still said RUNNING),
        one not read well. A running one's next events are named by the feed: reading every
        unfinished history on each execution's change would make the emulator answer every
        other read of the lab later (GetExecutionHistory is slow on a busy machine)."""
        executions = _newest(model)
        live = {e.arn for e in executions}
        if any(s.key.split(":", 1)[1] not in live for s in model.with_prefix(f"{HISTORY}:")):
            return None  # some are gone: everything, so their histories go too
        wanted = set()
        for execution in executions[:MAX_HISTORIES]:
            previous = model.get(f"{HISTORY}:{execution.arn}")
            if (
                previous is None
                or previous.health is not Health.OK
                or previous.data is None
                or previous.data.started != execution.started
                or (not execution.running and not previous.data.complete)
            ):
                wanted.add(execution.arn)
        return frozenset(wanted)

    async def _poll(
        self, conn: Connection, model: LabState, only: frozenset[str] | None
    ) -> list[Snapshot[Any]]:
        """Reads on the histories (``only``: of the executions the change feed named)."""
        executions = _newest(model)
        machines = model.get(MACHINES)
        listed = [machines] + model.with_prefix(f"{EXECUTIONS}:") if machines is not None else []
        if listed and all(s.health is Health.OK for s in listed):
            # Executions are known to be gone only after every listing succeeded: then their
            # histories go too, so a rerun under the same names never shows the earlier run.
            live = {e.arn for e in executions}
            model.drop(_histories(model, lambda arn: arn not in live))
        snapshots = []
        followed = executions[:MAX_HISTORIES]
        self._quiet.keep({e.arn for e in followed})
        ceiling = max(1.0, sum(e.running for e in followed) / HISTORY_PROBES_PER_S)
        for execution in followed:
            if only is not None and execution.arn not in only:
                continue
            key = f"{HISTORY}:{execution.arn}"
            previous = model.get(key)
            if (
                previous is not None
                and previous.data is not None
                and previous.data.started != execution.started
            ):
                previous = None  # the same ARN ran again: a new history
            if previous is not None and previous.data is not None and previous.data.complete:
                continue  # finished and fully fetched: never asked again
            known = previous is not None and previous.data is not None
            if (
                only is None
                and known
                and execution.running
                and not self._quiet.due(execution.arn, model, ceiling)
            ):
                continue  # running, and its newest event was the one known at the last probe
            snapshot = await self.fetch(
                model, key, lambda e=execution, p=previous: self._history(conn, e, p)
            )
            self._quiet.read(
                execution.arn,
                not known
                or snapshot.data is None
                or snapshot.data.history is not previous.data.history,
                failed=failing(snapshot),
            )
            snapshots.append(snapshot)
        return snapshots

    async def _history(self, conn: Connection, execution: Execution, previous: Any) -> History:
        known = (
            previous.data.history if previous is not None and previous.data is not None else None
        )
        last_id = known.events[-1].id if known is not None and known.events else 0
        # A running execution already read is first asked for its newest event alone (the probe):
        # when that is the last one seen, or the one after it, the probe was the whole read.
        # Otherwise the new events are read in pages. A server that ignores maxResults answers
        # the probe with every event, which is a whole read too.
        probe = known is not None and last_id > 0 and execution.running
        fresh: dict[int, dict[str, Any]] = {}
        params: dict[str, Any] = {
            "executionArn": execution.arn,
            "reverseOrder": True,
            "maxResults": 1 if probe else 100,
        }
        pages = Pages("get_execution_history")
        while True:
            page = await conn.call("stepfunctions", "get_execution_history", **params)
            events = page.get("events") or []
            fresh.update((e["id"], e) for e in events if e["id"] > last_id)
            token = pages.next(params.get("nextToken"), page.get("nextToken"))
            if token is None:
                break
            if params["maxResults"] == 1:
                newest = max(e["id"] for e in events) if events else 0
                if newest in (last_id, last_id + 1):
                    break  # nothing new, or the one new event the probe brought
                # More than one is new (or the server ignores reverseOrder): read in pages.
                params = {**params, "maxResults": 100}
                continue
            if any(e["id"] <= last_id for e in events):
                break  # reached what was known
            params["nextToken"] = token
        # Some servers ignore reverseOrder: parse_history orders by id either way.
        events = list(fresh.values())
        history = parse_history(events, previous=known) if events or known is None else known
        return self._made(execution, history)

    @staticmethod
    def _made(execution: Execution, history: Any) -> History:
        return History(
            execution_arn=execution.arn,
            execution_name=execution.name,
            history=history,
            complete=not execution.running and history.is_finished,
            started=execution.started,
        )


def _machine_of(execution_arn: str) -> str:
    """The state machine's name in an execution ARN (arn:…:execution:MACHINE:NAME)."""
    parts = execution_arn.split(":")
    return parts[-2] if len(parts) >= 2 else ""


def _histories(model: LabState, gone: Callable[[str], bool]) -> list[str]:
    """The keys of the histories ``model`` holds whose execution ARN ``gone`` says is gone."""
    return [s.key for s in model.with_prefix(f"{HISTORY}:") if gone(s.key.split(":", 1)[1])]
