"""Errors never look like "empty": stale with the reason, recovery after a restart; profiles that
are malformed name file and line; the scheduler never overlaps polls and backs off."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from awsview import labspec
from awsview.aws.ratelimit import RateLimiter, TokenBucket
from awsview.aws.session import Connection, Target
from awsview.model.snapshot import Health
from awsview.model.state import LabState
from awsview.polling.base import Poller
from awsview.polling.pollers.logs import LogPoller
from awsview.polling.scheduler import Scheduler
from tests.support.helpers import create_function, create_table, invoke


async def test_stopped_emulator_turns_snapshots_stale_and_restart_recovers(
    spawn_emulator, tmp_path
):
    running = spawn_emulator(tmp_path)
    try:
        create_table(running.client("dynamodb"), "labex-q05-orders")
        running.client("dynamodb").put_item(
            TableName="labex-q05-orders", Item={"id": {"S": "kept"}}
        )
        running.client("sqs").create_queue(QueueName="labex-q05-jobs")
        async with Connection(Target(endpoint_url=running.endpoint_url), connect_timeout=1) as conn:
            scheduler = Scheduler(conn, labspec.load("q05"))
            model = await scheduler.run_once()
            assert model.get("queues").health is Health.OK and len(model.get("queues").data) == 1
            assert model.get("table:labex-q05-orders").health is Health.OK

            running.stop()
            model = await scheduler.run_once()
            queues = model.get("queues")
            assert queues.health is Health.STALE
            assert "connection refused" in queues.error
            assert [q.name for q in queues.data] == [
                "labex-q05-jobs"
            ]  # last good data kept, not "empty"
            orders = model.get("table:labex-q05-orders")
            assert orders.health is Health.STALE and orders.data.items[0]["id"] == "kept"
            assert (
                orders.freshness().startswith("stale ")
                and "connection refused" in orders.freshness()
            )
            reference = model.get(
                "table:labex-q05-reference"
            )  # was absent: now unknown, not absent
            assert reference.health is Health.STALE and reference.note == "was absent"
            assert model.get("state_machines").health is Health.STALE
            # The journal (read over plain HTTP, not botocore) says it in the same words.
            assert model.get("journal").error == queues.error
            assert all(
                s.health is not Health.ABSENT
                for s in model.snapshots.values()
                if s.kind != "journal"
            )

            running.restart()
            model = await scheduler.run_once()
            assert model.get("queues").health is Health.OK
            assert model.get("queues").data == ()  # the emulator's resources live in memory
            assert model.get("table:labex-q05-orders").health is Health.ABSENT  # a real answer now
            await scheduler.stop()
    finally:
        running.stop()


async def test_log_events_are_transferred_once(emulator):
    lam = emulator.client("lambda")
    create_function(
        lam, "labex-q05-worker", "def handler(e, c):\n    print('RESULT {\"n\": %d}' % e['n'])\n"
    )
    profile = labspec.load("q05")
    async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
        poller, model = LogPoller(profile), LabState()
        for n in range(3):
            invoke(lam, "labex-q05-worker", {"n": n})
        model.apply(await poller.poll(conn, model))
        first = model.data("logs:/aws/lambda/labex-q05-worker")
        assert [e.line.data for e in first.lines if e.line.kind == "RESULT"] == [
            {"n": 0},
            {"n": 1},
            {"n": 2},
        ]
        invoke(lam, "labex-q05-worker", {"n": 3})
        model.apply(await poller.poll(conn, model))
        model.apply(await poller.poll(conn, model))
        feed = model.data("logs:/aws/lambda/labex-q05-worker")
        assert [e.line.data["n"] for e in feed.lines if e.line.kind == "RESULT"] == [0, 1, 2, 3]
        assert feed.events_seen == 4 * 4  # START, RESULT, END, REPORT per invocation, each once
        assert conn.limiter.calls[("logs", "FilterLogEvents")] == 3


class _SlowPoller(Poller):
    kind = "slow"
    fast_interval = 0.01
    slow_interval = 0.01

    def __init__(self):
        super().__init__(labspec.generic_spec())
        self.running = 0
        self.most = 0
        self.polls = 0

    async def poll(self, conn, model):
        self.running += 1
        self.most = max(self.most, self.running)
        await asyncio.sleep(0.02)
        self.running -= 1
        self.polls += 1
        return []


async def test_polls_of_one_kind_never_overlap():
    poller = _SlowPoller()
    scheduler = Scheduler(conn=None, profile=poller.profile, pollers=[poller])
    scheduler.start()
    await _until(lambda: poller.polls >= 5, "five polls", 60)
    await scheduler.stop()
    assert poller.most == 1


def test_interval_is_fast_while_active_slow_when_idle_and_backs_off_when_failing():
    from awsview.aws.errors import Failure
    from awsview.model.snapshot import failed, succeeded

    poller = _SlowPoller()
    poller.fast_interval, poller.slow_interval = 0.5, 8.0
    scheduler = Scheduler(conn=None, profile=poller.profile, pollers=[poller])
    ok = [succeeded(None, "slow", "k", 1)]
    assert scheduler.interval(poller, ok) == 8.0
    scheduler.model.apply([succeeded(None, "slow", "k", 1)])
    scheduler.model.apply([succeeded(None, "slow", "k", 2)])  # data changed just now
    assert scheduler.interval(poller, ok) == 0.5
    poller.last_failure = Failure(
        "throttled", "throttled (ThrottlingException)", "ThrottlingException"
    )
    bad = [failed(ok[0], "slow", "k", "throttled")]
    waits = [scheduler.interval(poller, bad) for _ in range(5)]
    assert waits == sorted(waits) and waits[-1] == 60.0 and waits[0] >= 8.0
    assert scheduler.interval(poller, ok) == 0.5  # success resets the backoff


async def test_token_bucket_holds_filter_log_events_to_one_per_second():
    limiter = RateLimiter()
    bucket = limiter.bucket("logs", "FilterLogEvents")
    assert (bucket.rate, bucket.capacity) == (1.0, 2.0)
    fast = TokenBucket(rate=20.0, capacity=1.0)
    loop = asyncio.get_running_loop()
    started = loop.time()
    for _ in range(5):
        await fast.acquire()
    assert loop.time() - started >= 4 / 20 * 0.9


@pytest.mark.parametrize(
    "text,expected",
    [
        ('name = "bad"\ntitle = \n', ":2"),
        (
            'name = "bad"\ntitle = "t"\nprefix = "p-"\n[[resources]]\nkind = "funtion"\nname = '
            '"x"\n',
            ":5: unknown resource kind 'funtion'",
        ),
        (
            'name = "bad"\ntitle = "t"\nprefix = "p-"\npanels = ["tables", "charts"]\n',
            ":4: unknown panel 'charts'",
        ),
        ('name = "bad"\ntitle = "t"\nprefix = 7\n', ":3: 'prefix' must be a string"),
        ('name = "other"\ntitle = "t"\nprefix = "p"\n', ":1: name 'other' does not match"),
        ('name = "bad"\nprefix = "p"\n', ": missing required key 'title'"),
    ],
)
def test_malformed_profile_names_file_line_and_problem(tmp_path: Path, text: str, expected: str):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(labspec.SpecError) as error:
        labspec.load_file(path)
    assert f"{path}{expected}" in str(error.value)


def test_unknown_profile_lists_known_ones():
    with pytest.raises(
        labspec.UnknownLabSpec, match="known labs: dlq, ev04, ev05, lambda-diagnose, q05"
    ):
        labspec.load("ev99")


def test_shipped_profiles_load_and_name_their_resources():
    for name in ("ev04", "ev05", "q05"):
        profile = labspec.load(name)
        assert profile.prefix == f"labex-{name}-"
        assert profile.tables("reference") == (f"labex-{name}-reference",)
        assert all(
            r.name.startswith(profile.prefix) or r.kind in ("log_group", "mapping")
            for r in profile.resources
        )
        assert json.dumps([c.text for c in profile.checkpoints])


async def test_injected_faults_reach_only_the_viewer_and_it_recovers(spawn_emulator, tmp_path):
    running = spawn_emulator(tmp_path)
    faults = tmp_path / "faults.json"
    try:
        running.client("sqs").create_queue(QueueName="labex-q05-jobs")
        async with Connection(Target(endpoint_url=running.endpoint_url)) as conn:
            scheduler = Scheduler(conn, labspec.load("q05"))
            model = await scheduler.run_once()
            assert model.get("queues").health is Health.OK
            faults.write_text(json.dumps({"credentials": "expired"}))
            model = await scheduler.run_once()
            assert model.get("queues").health is Health.STALE
            assert "credentials expired" in model.get("queues").error
            assert running.client("sqs").list_queues()["QueueUrls"]  # boto3 (the lab) unaffected
            faults.write_text(json.dumps({"throttle": 1.0}))
            model = await scheduler.run_once()
            assert model.get("queues").error == "throttled (ThrottlingException)"
            faults.unlink()
            model = await scheduler.run_once()
            assert model.get("queues").health is Health.OK
            await scheduler.stop()
    finally:
        running.stop()


def test_checkpoint_is_unknown_until_the_data_it_needs_was_read():
    from awsview.core.checkpoints import evaluate
    from awsview.model.resources import StateMachine
    from awsview.model.snapshot import succeeded
    from awsview.model.state import LabState

    profile = labspec.load("ev04")
    model = LabState()
    model.apply(
        [
            succeeded(
                None,
                "state_machines",
                "state_machines",
                (StateMachine("labex-ev04-orders", "arn:m", "STANDARD", None),),
            )
        ]
    )
    workflow = next(r for r in evaluate(profile, model) if r.checkpoint.step == "workflow")
    assert workflow.passed is None and "not read yet" in workflow.detail  # not a pass: unknown
    model.apply([succeeded(None, "executions", "executions:labex-ev04-orders", ())])
    workflow = next(r for r in evaluate(profile, model) if r.checkpoint.step == "workflow")
    assert workflow.passed is True


def test_an_unreachable_journal_is_an_error_on_the_decision_panels_not_empty():
    from awsview.core.checkpoints import evaluate
    from awsview.core.render import panels
    from awsview.core.timeline import Timeline
    from awsview.model.snapshot import failed, succeeded
    from awsview.model.state import LabState

    profile = labspec.load("q05")
    model = LabState()
    model.apply(
        [
            failed(None, "journal", "journal", "connection refused — http://127.0.0.1:9/"),
            succeeded(None, "timeline", "timeline", Timeline(keys=(), sources=())),
        ]
    )
    shown = {p.name: p for p in panels(model, profile)}
    for name in ("decisions", "verdicts"):
        assert shown[name].health == "error" and "connection refused" in shown[name].freshness
        # The derived panel says which of its inputs could not be read.
        assert shown[name].body_text.startswith("error — journal: connection refused")
    deploy = next(r for r in evaluate(profile, model) if r.checkpoint.step == "deploy")
    assert deploy.passed is None  # unknown, not failed


async def test_generic_mode_drops_tables_and_log_groups_that_are_gone(emulator):
    """With no lab profile, a table or log group deleted since the last listing leaves the model
    (a deleted resource is not shown as if it were still there)."""
    ddb, logs = emulator.client("dynamodb"), emulator.client("logs")
    create_table(ddb, "gen-orders")
    create_table(ddb, "gen-kept")
    logs.create_log_group(logGroupName="/aws/lambda/gen-worker")
    async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
        scheduler = Scheduler(conn, labspec.generic_spec("gen-"))
        model = await scheduler.run_once()
        assert {"table:gen-orders", "table:gen-kept", "logs:/aws/lambda/gen-worker"} <= set(
            model.snapshots
        )
        ddb.delete_table(TableName="gen-orders")
        logs.delete_log_group(logGroupName="/aws/lambda/gen-worker")
        model = await scheduler.run_once()
        assert "table:gen-orders" not in model.snapshots
        assert "logs:/aws/lambda/gen-worker" not in model.snapshots
        assert model.get("table:gen-kept").health is Health.OK
        await scheduler.stop()


class _Outage(Poller):
    """Fails like an unreachable endpoint while ``state["down"]``; a poll started while down
    can be held in flight until ``gate`` opens (a call that spans the endpoint's return)."""

    def __init__(self, kind: str, fast: float, state: dict, gate: asyncio.Event | None = None):
        super().__init__(labspec.generic_spec())
        self.kind, self.fast_interval, self.slow_interval = kind, fast, 30.0
        self.state = state
        self.gate = gate
        self.failures = 0
        self.recovered_at = None

    async def poll(self, conn, model):
        from awsview.aws.errors import Failure
        from awsview.model.snapshot import failed, succeeded

        loop = asyncio.get_running_loop()
        if self.state["down"]:
            if self.gate is not None:
                await self.gate.wait()
            self.failures += 1
            self.last_failure = Failure("network", "connection refused")
            return [failed(model.get(self.kind), self.kind, self.kind, "connection refused")]
        if self.recovered_at is None:
            self.recovered_at = loop.time()
        return [succeeded(model.get(self.kind), self.kind, self.kind, loop.time())]


async def _until(condition, what: str, within: float) -> None:
    """Wait for a condition; ``within`` is far below what the behaviour under test avoids."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not condition():
        assert loop.time() < deadline, f"{what}: not within {within} s"
        await asyncio.sleep(0.02)


async def test_after_an_outage_the_first_poll_through_brings_the_others_back():
    """Backoffs grow during an outage (up to a minute); once one poller gets through, the others
    try again at once instead of each waiting out its own backoff. Nothing is timed but against
    that minute: the wait allows half of it, the wake takes one fast interval (1 s)."""
    from awsview.polling.scheduler import MAX_BACKOFF_S

    state = {"down": True}
    quick, slow = _Outage("quick", 0.01, state), _Outage("slow", 1.0, state)
    scheduler = Scheduler(conn=None, profile=quick.profile, pollers=[quick, slow])
    scheduler._backoff["slow"] = (
        MAX_BACKOFF_S / 2
    )  # a long outage so far: its next wait is a minute
    scheduler.start()
    await _until(lambda: scheduler._backoff.get("slow") == MAX_BACKOFF_S, "slow backs off", 30)
    state["down"] = False
    await _until(
        lambda: slow.recovered_at is not None, "slow back before its backoff", MAX_BACKOFF_S / 2
    )
    await scheduler.stop()
    assert quick.recovered_at is not None and quick.recovered_at <= slow.recovered_at


async def test_a_poll_in_flight_as_the_endpoint_returns_does_not_wait_out_its_backoff():
    """Its call failed, but another poll got through meanwhile: the wake came before it began
    waiting, so it must not wait a minute for the next one (found by the soak)."""
    from awsview.polling.scheduler import MAX_BACKOFF_S

    state, gate = {"down": True}, asyncio.Event()
    quick, straggler = _Outage("quick", 0.01, state), _Outage("straggler", 0.5, state, gate)
    scheduler = Scheduler(conn=None, profile=quick.profile, pollers=[quick, straggler])
    scheduler._backoff["straggler"] = MAX_BACKOFF_S / 2  # its failure now backs off a minute
    scheduler.start()
    await _until(lambda: quick.failures > 0, "quick fails", 30)
    state["down"] = False  # the straggler's poll is still in flight, held at the gate
    await _until(lambda: quick.recovered_at is not None, "quick gets through", 30)
    gate.set()  # its call fails now, after the endpoint came back
    await _until(lambda: straggler.failures == 1, "the straggler fails", 30)
    await _until(
        lambda: straggler.recovered_at is not None,
        "the straggler back before its backoff",
        MAX_BACKOFF_S / 2,
    )
    await scheduler.stop()


async def test_a_woken_poller_never_retries_later_than_its_backoff():
    """After a wake, the pause that keeps pollers from retrying all at once is cut to what is
    left of the backoff: a 2 s fast interval woken near the end of a 4 s backoff retried at 6 s.
    Here (speed 0.02) the backoff is 1.2 s and the uncut pause would be 20 s."""
    state = {"down": True}
    quick, late = _Outage("quick", 0.01, state), _Outage("late", 1000.0, state)
    scheduler = Scheduler(conn=None, profile=quick.profile, pollers=[quick, late], speed=0.02)
    scheduler.start()
    await _until(lambda: late.failures > 0, "late fails", 30)
    state["down"] = False
    await _until(lambda: late.recovered_at is not None, "late back by its backoff", 10)
    await scheduler.stop()


class _Moving(Poller):
    """New data on every poll, so the scheduler's wake is set after each."""

    def __init__(self, kind: str):
        super().__init__(labspec.generic_spec())
        self.kind, self.fast_interval = kind, 30.0  # between polls: waiting on the wake

    async def poll(self, conn, model):
        from awsview.model.snapshot import succeeded

        return [succeeded(model.get(self.kind), self.kind, self.kind, time.monotonic())]


@pytest.mark.parametrize("turns", [0, 1, 2])
async def test_stop_ends_a_poll_loop_whose_wake_was_just_set(turns):
    """On Python 3.11 asyncio.wait_for swallowed a cancellation that landed as the wake it
    waited for was set, and stop() waited forever for a loop that polled on (the demo's lab
    switch and the app's exit wait for it; hung 3 runs in 8 of the outage test)."""
    scheduler = Scheduler(conn=None, profile=labspec.generic_spec(), pollers=[_Moving("moving")])
    scheduler.start()
    await asyncio.sleep(0.05)  # polled once, now waiting on the wake
    scheduler._pending["moving"].mark(None)  # its wake: read everything
    for _ in range(turns):
        await asyncio.sleep(0)
    stopping = asyncio.ensure_future(scheduler.stop())
    done, _ = await asyncio.wait([stopping], timeout=60)  # milliseconds, or never
    assert done, "stop() never returned"


async def test_a_policy_deleted_mid_poll_does_not_hide_its_role(emulator):
    """Found by the soak: ev04 removes its workflow's inline policy while the viewer reads it; the
    role must stay listed (without that policy), not vanish for a poll."""
    import json as _json

    from awsview.polling.pollers.iam import RolePoller

    iam = emulator.client("iam")
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": "sts:AssumeRole",
                "Principal": {"Service": "states.amazonaws.com"},
            }
        ],
    }
    iam.create_role(RoleName="labex-ev04-race-role", AssumeRolePolicyDocument=_json.dumps(trust))
    policy = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "lambda:InvokeFunction", "Resource": "*"}],
    }
    iam.put_role_policy(
        RoleName="labex-ev04-race-role",
        PolicyName="InvokeWorker",
        PolicyDocument=_json.dumps(policy),
    )
    async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
        real_call = conn.call

        async def call(service, operation, **params):
            if operation == "get_role_policy":  # the lab deletes it between the list and the read
                iam.delete_role_policy(RoleName=params["RoleName"], PolicyName=params["PolicyName"])
            return await real_call(service, operation, **params)

        conn.call = call
        poller, model = RolePoller(labspec.load("ev04")), LabState()
        (snapshot,) = await poller.poll(conn, model)
    assert snapshot.health is Health.OK
    (role,) = [r for r in snapshot.data if r.name == "labex-ev04-race-role"]
    assert role.grants == ()
    iam.delete_role(RoleName="labex-ev04-race-role")


async def test_a_state_machine_deleted_mid_poll_leaves_the_others_listed(emulator):
    """Found by the soak under load: a lab's cleanup deleted its state machine between the
    viewer's listing and its describe, and the whole list read "absent" for a poll while the
    other machines (and the listing) were there."""
    from awsview.polling.pollers.stepfunctions import ExecutionPoller, StateMachinePoller

    sfn = emulator.client("stepfunctions")
    role = "arn:aws:iam::123456789012:role/labex-ev04-race-sfn"
    definition = json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Pass", "End": True}}})
    kept = sfn.create_state_machine(name="labex-ev04-kept", definition=definition, roleArn=role)
    doomed = sfn.create_state_machine(name="labex-ev04-doomed", definition=definition, roleArn=role)
    sfn.start_execution(stateMachineArn=kept["stateMachineArn"], name="survivor")
    async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
        real_call = conn.call

        async def call(service, operation, **params):
            if params.get("stateMachineArn") == doomed["stateMachineArn"] and operation.startswith(
                "describe"
            ):
                sfn.delete_state_machine(stateMachineArn=doomed["stateMachineArn"])
            if operation == "describe_execution" and params["executionArn"].endswith(":survivor"):
                sfn.delete_state_machine(stateMachineArn=kept["stateMachineArn"])  # and its run
            return await real_call(service, operation, **params)

        conn.call = call
        model, profile = LabState(), labspec.load("ev04")
        model.apply(await StateMachinePoller(profile).poll(conn, model))
        machines = model.get("state_machines")
        assert machines.health is Health.OK
        assert [m.name for m in machines.data] == ["labex-ev04-kept"]
        (executions,) = await ExecutionPoller(profile).poll(conn, model)
    assert executions.health is Health.OK and executions.data == ()  # gone, not an absent listing
