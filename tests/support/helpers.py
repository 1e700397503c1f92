"""Small builders shared by the emulator tests."""

from __future__ import annotations

import io
import json
import os
import time
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.support.probe import screen_lines

ROLE = "arn:aws:iam::123456789012:role/test-worker-role"


def zip_code(source: str, name: str = "app.py", more: dict[str, str] | None = None) -> bytes:
    """A function's archive: ``source`` as ``name``, and ``more`` files (path: text) beside it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, source)
        for path, text in (more or {}).items():
            archive.writestr(path, text)
    return buffer.getvalue()


def ensure_worker_role(iam: Any) -> None:
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": "sts:AssumeRole",
                "Principal": {"Service": "lambda.amazonaws.com"},
            }
        ],
    }
    try:
        iam.create_role(
            RoleName=ROLE.rsplit("/", 1)[-1], AssumeRolePolicyDocument=json.dumps(trust)
        )
    except iam.exceptions.EntityAlreadyExistsException:
        pass


def create_function(
    lam: Any,
    name: str,
    source: str,
    timeout: int = 5,
    env: dict[str, str] | None = None,
    handler: str = "app.handler",
    more: dict[str, str] | None = None,
) -> str:
    ensure_worker_role(_iam_for(lam))
    response = lam.create_function(
        FunctionName=name,
        Runtime="python3.12",
        Role=ROLE,
        Handler=handler,
        Timeout=timeout,
        Code={"ZipFile": zip_code(source, more=more)},
        Environment={"Variables": env or {}},
    )
    return response["FunctionArn"]


def _iam_for(client: Any) -> Any:
    import boto3

    return boto3.client(
        "iam",
        endpoint_url=client.meta.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def invoke(lam: Any, name: str, payload: Any) -> tuple[str | None, Any]:
    response = lam.invoke(FunctionName=name, Payload=json.dumps(payload))
    return response.get("FunctionError"), json.loads(response["Payload"].read())


def create_table(ddb: Any, name: str, key: str = "id", **options: Any) -> None:
    """An on-demand table keyed by the string ``key``; ``options`` go to CreateTable as they are
    (a StreamSpecification)."""
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": key, "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        **options,
    )


def operations_sent(monkeypatch: Any) -> list[tuple[str, str]]:
    """Every AWS operation the connections' guarded clients send from now on, as (service,
    operation), in order. Written down after the read-only guard's handler: a refused operation
    is never sent, so never written down."""
    from awsview.aws import readonly, session

    sent: list[tuple[str, str]] = []

    def recording_guard(client: Any) -> Any:
        guarded = readonly.guard(client)
        service = client.meta.service_model.service_name
        guarded.meta.events.register(
            "provide-client-params", lambda model, **_: sent.append((service, model.name))
        )
        return guarded

    monkeypatch.setattr(session, "guard", recording_guard)
    return sent


def wait_for(predicate: Callable[[], Any], timeout: float = 60.0, interval: float = 0.1) -> Any:
    """Poll until predicate() is truthy; return its value or fail with the last one. The default
    deadline is generous for a busy machine: a passing test returns as soon as it holds."""
    deadline = time.monotonic() + timeout
    value = predicate()
    while not value:
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s (last value {value!r})")
        time.sleep(interval)
        value = predicate()
    return value


def journal(endpoint_url: str, route: str = "journal", since: int = 0, limit: int = 5000) -> dict:
    url = f"{endpoint_url}/_awsview/{route}?since={since}&limit={limit}"
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def log_messages(logs: Any, group: str) -> list[str]:
    paginator = logs.get_paginator("filter_log_events")
    if not logs.describe_log_groups(logGroupNamePrefix=group)["logGroups"]:
        return []
    return [e["message"] for page in paginator.paginate(logGroupName=group) for e in page["events"]]


def run_execution(sfn: Any, machine_arn: str, name: str, payload: Any, timeout: float = 30) -> dict:
    arn = sfn.start_execution(stateMachineArn=machine_arn, name=name, input=json.dumps(payload))[
        "executionArn"
    ]
    wait_for(lambda: sfn.describe_execution(executionArn=arn)["status"] != "RUNNING", timeout)
    return sfn.describe_execution(executionArn=arn)


class LabViewer:
    """A lab player beside one long-lived connection and scheduler, polled after each lab step
    the way a running viewer would see it."""

    def __init__(self, endpoint_url: str, lab: str, store: Any = None):
        from awsview import labspec
        from awsview.aws.session import Connection, Target
        from awsview.labs.player import LabPlayer

        self.profile = labspec.load(lab)
        self.conn = Connection(Target(endpoint_url=endpoint_url, region="us-east-1"))
        self.player = LabPlayer(lab, endpoint_url=endpoint_url, log=lambda line: None)
        self.store = (
            store  # awsview.polling.store.DecisionStore; None: the (test session's) state directory
        )
        self.scheduler: Any = None

    async def __aenter__(self) -> LabViewer:
        from awsview.polling.scheduler import Scheduler

        await self.conn.__aenter__()
        self.scheduler = Scheduler(self.conn, self.profile, store=self.store)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.scheduler.stop()
        await self.conn.__aexit__(*exc)

    @property
    def model(self) -> Any:
        return self.scheduler.model

    async def advance(self, name: str | None = None, rounds: int = 1) -> Any:
        """Play one step ("setup" for the provided resources), then poll ``rounds`` times."""
        import asyncio

        if name == "setup":
            await asyncio.to_thread(self.player.setup)
        elif name:
            await asyncio.to_thread(self.player.play, only=name)
        for _ in range(rounds):
            await self.scheduler.run_once()
        return self.scheduler.model


@dataclass(frozen=True)
class Process:
    pid: int
    ppid: int
    session: int
    state: str
    args: str


def processes(session: int | None = None) -> list[Process]:
    """Live processes from /proc (zombies left out: they only wait for their reaper), those of
    ``session`` only if given."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open(f"/proc/{entry}/stat").read()
            args = (
                open(f"/proc/{entry}/cmdline", "rb")
                .read()
                .replace(b"\0", b" ")
                .decode(errors="replace")
            )
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rindex(")") + 2 :].split()  # the command name may hold spaces and ')'
        state, ppid, sid = fields[0], int(fields[1]), int(fields[3])
        if state in ("Z", "X") or (session is not None and sid != session):
            continue
        found.append(Process(int(entry), ppid, sid, state, args.strip()))
    return sorted(found, key=lambda p: p.pid)


def lambda_workers(found: list[Process], emulator: int | None = None) -> list[Process]:
    """The Lambda workers among ``found`` (of the emulator ``emulator`` only, if given): forked
    by an emulator's zygote (awsview/emulator/_zygote.py), or started as `_bootstrap.py`."""
    zygotes = {p.pid for p in found if "_zygote.py" in p.args and emulator in (None, p.ppid)}
    return [
        p
        for p in found
        if p.ppid in zygotes or ("_bootstrap.py" in p.args and emulator in (None, p.ppid))
    ]


async def until(pilot, predicate, timeout: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{what} not met within {timeout} s; screen:\n" + "\n".join(screen_lines(pilot.app))
            )
        await pilot.pause(0.1)


def status(app) -> str:
    return str(app.query_one("#status").render())


KEY_NAMES = {" ": "space", "-": "minus", "/": "slash"}


async def palette(pilot, app, *picks: str) -> None:
    """Open the palette and pick ``picks`` in turn: a command, then its choice."""
    from textual.command import CommandInput, CommandList, CommandPalette

    await pilot.press("ctrl+p")
    for pick in picks:
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
        await pilot.press(*[KEY_NAMES.get(c, c) for c in pick.rstrip("…")])

        def offered(pick=pick) -> bool:
            found = app.screen.query_one(CommandList)
            return found.option_count > 0 and str(found.get_option_at_index(0).prompt).startswith(
                pick
            )

        await until(pilot, offered, what=f"{pick!r} offered")
        await pilot.press("down", "enter")
        await until(
            pilot,
            lambda pick=pick: (
                not isinstance(app.screen, CommandPalette)
                or app.screen.query_one(CommandInput).value == ""
            ),
            what=f"{pick!r} picked",
        )


def folder_workflow(lab: str, worker_arn: str) -> dict:
    """What a lab folder's workflow step makes of its ``workflow-template.json``: the worker's
    ARN in the two tasks (the step's ``jq``)."""
    from awsview.labspec.folder import builtin_dir

    path = builtin_dir() / lab / "assets" / "workflow-template.json"
    definition = json.loads(path.read_text(encoding="utf-8"))
    definition["States"]["StoreOrder"]["Parameters"]["FunctionName"] = worker_arn
    definition["States"]["ReadSummary"]["Parameters"]["FunctionName"] = worker_arn
    return definition
