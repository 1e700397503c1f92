"""Lab runs and key lifetimes on the real emulator: a lab rerun, replayed after an emulator
restart, followed by a viewer kept open or started late — the current run's verdicts and
checkpoints stay true, earlier runs stay listed with their own verdicts.

(a) the initial worker's overwrite alarm is test_timeline's
test_unprotected_worker_given_the_same_key_twice_raises_the_overwrite_alarm.
"""

from __future__ import annotations

import json

import pytest

from awsview import labspec
from awsview.core import timeline
from awsview.core.checkpoints import progress
from awsview.core.details import describe
from awsview.core.runs import LabRun, RunBook, Sighting, closed, run_of
from awsview.labs.player import LabPlayer
from awsview.model.resources import Table
from awsview.model.snapshot import succeeded
from awsview.model.state import LabState
from awsview.polling.pollers.timeline import TimelinePoller
from awsview.polling.runs import sightings
from awsview.polling.store import DecisionStore
from awsview.ui.viewer.app import AWSViewApp
from tests.support import processes
from tests.support.helpers import LabViewer
from tests.support.probe import full_rows, screen_lines, settle, view

pytestmark = pytest.mark.timeout(240)

ORDERS = "labex-q05-orders"
SECOND_RUN = "1 write · 2 duplicates · 0 overwrites ✓"
FIRST_RUN = "1 write · 2 duplicates · 0 overwrites · 1 delete ✓"


def play(endpoint_url: str, lab: str = "q05", until: str | None = None) -> None:
    """`awsview lab setup` then `awsview lab play [--until]`, as a learner or instructor
    runs them."""
    player = LabPlayer(lab, endpoint_url=endpoint_url, log=lambda line: None)
    player.setup()
    player.play(until=until)


async def look(endpoint_url: str, store: DecisionStore, lab: str = "q05") -> LabState:
    """A viewer started now: one full round of every poller."""
    async with LabViewer(endpoint_url, lab, store) as viewer:
        return await viewer.advance()


def marks(model: LabState) -> list[str]:
    return [r.mark for r in model.data("checkpoints")]


def assert_second_run_of_q05(model: LabState) -> None:
    """What (b), (c) and (d) promise: the current run is judged on its own, the first is kept."""
    built = model.data("timeline")
    dedup = built.key(ORDERS, "dedup-order")
    assert dedup is not None and dedup.verdict.text == SECOND_RUN and not dedup.verdict.alarm, (
        _said(model)
    )
    assert [d.kind for d in dedup.decisions] == ["create", "duplicate", "duplicate"]
    assert marks(model) == ["✓", "✓", "✓", "✗", "✓"]  # steps 1-3 done, on the cleanup step
    assert progress(model.data("checkpoints")).text == "on step 4/4 cleanup"
    earlier = [k for run in built.earlier for k in run.keys if k.key == "dedup-order"]
    assert [k.verdict.text for k in earlier] == [FIRST_RUN]
    assert all(d.run == built.run.number for k in built.keys for d in k.decisions)
    assert all(
        d.run < built.run.number for run in built.earlier for k in run.keys for d in k.decisions
    )


def _said(model: LabState) -> str:
    """The runs, the lab's sightings and every decision with its run and time: what a failure
    needs to tell where a run boundary fell."""
    built = model.data("timeline")
    runs = [(r.number, r.start, r.reason) for r in model.data("runs", ())]
    found, complete = sightings(labspec.load("q05"), model)
    journal = model.data("journal")
    every = [
        (d.run, d.time, k.key, d.kind)
        for _, keys in built.by_run
        for k in keys
        for d in k.decisions
    ]
    every.sort(key=lambda e: e[1])
    return (
        f"runs {runs}; sightings {found} (complete {complete}); emulator started "
        f"{journal.emulator_started if journal else None}; decisions {every}"
    )


async def test_b_a_rerun_on_the_same_emulator_is_judged_on_its_own(
    starts_processes, spawn_emulator, tmp_path
):
    running = spawn_emulator(tmp_path / "emulator")
    try:
        store = DecisionStore(tmp_path / "viewer.sqlite3")
        play(running.endpoint_url)  # every step, cleanup included
        model = await look(
            running.endpoint_url, store
        )  # a viewer that comes only after the cleanup
        assert model.data("timeline").key(ORDERS, "dedup-order").verdict.text == FIRST_RUN
        # The cleanup holds after the run's writes: it was done, and so was every step before it.
        assert (
            marks(model) == ["✓"] * 5
            and progress(model.data("checkpoints")).text == "all 4 steps done"
        )
        play(running.endpoint_url, until="repeats")
        model = await look(running.endpoint_url, store)
        assert_second_run_of_q05(model)
        assert [r.number for r in model.data("runs")] == [1, 2]
        assert model.data("runs")[-1].reason == "queue labex-q05-jobs created after run 1's writes"

        # What a user sees: the current run, and every run with --all-runs; --json labels each
        # decision.
        env = {**running.env, "XDG_STATE_HOME": str(tmp_path / "state")}
        dump = processes.awsview(
            "dump", "--endpoint-url", running.endpoint_url, timeout=60, env=env
        )
        assert dump.returncode == 0, dump.stderr
        assert "on step 4/4 cleanup" in dump.stdout.splitlines()[1]
        verdicts = dump.stdout.split("== Idempotency per business key")[1].split("==")[0]
        assert SECOND_RUN in verdicts and FIRST_RUN not in verdicts and "ALARM" not in verdicts
        every = processes.awsview(
            "dump", "--all-runs", "--endpoint-url", running.endpoint_url, timeout=60, env=env
        )
        verdicts = every.stdout.split("== Idempotency per business key")[1].split("==")[0]
        assert FIRST_RUN in verdicts and SECOND_RUN in verdicts and "ALARM" not in verdicts
        dumped = processes.awsview(
            "dump", "--json", "--endpoint-url", running.endpoint_url, timeout=60, env=env
        )
        data = json.loads(dumped.stdout)["snapshots"]["timeline"]["data"]
        now = [d["run"] for k in data["keys"] for d in k["decisions"]]
        before = [d["run"] for r in data["earlier"] for k in r["keys"] for d in k["decisions"]]
        assert (
            set(now) == {data["run"]["number"]} and before and data["run"]["number"] not in before
        )
    finally:
        running.stop()


async def test_c_a_rerun_after_the_emulator_restarted_on_its_state_directory(
    spawn_emulator, tmp_path
):
    running = spawn_emulator(tmp_path / "emulator")
    try:
        store = DecisionStore(tmp_path / "viewer.sqlite3")
        play(running.endpoint_url)
        await look(running.endpoint_url, store)  # a viewer saw the first run
        running.restart()  # the journal survives; moto's resources do not
        play(running.endpoint_url, until="repeats")
        model = await look(running.endpoint_url, store)
        assert_second_run_of_q05(model)
        assert model.data("timeline").run.reason.startswith("the emulator restarted")
        # A viewer that never saw the first run tells them apart too: the journal's first-run
        # decisions come from an emulator that no longer exists.
        late = await look(running.endpoint_url, DecisionStore(tmp_path / "late.sqlite3"))
        assert_second_run_of_q05(late)
    finally:
        running.stop()


async def test_d_a_viewer_open_across_both_runs_and_one_started_after_them(
    spawn_emulator, tmp_path
):
    running = spawn_emulator(tmp_path / "emulator")
    try:
        async with LabViewer(
            running.endpoint_url, "q05", DecisionStore(tmp_path / "open.sqlite3")
        ) as viewer:
            app = AWSViewApp(model=viewer.model, profile=viewer.profile)
            async with app.run_test(size=(160, 60)) as pilot:
                for step in ("setup", "connect", "deploy", "repeats", "cleanup"):
                    model = await viewer.advance(step)
                assert marks(model) == ["✓"] * 5
                await viewer.advance("setup")
                model = await viewer.advance("connect")
                assert marks(model) == [
                    "✓",
                    "✗",
                    "·",
                    "·",
                    "·",
                ]  # a new run: back at its second step
                assert model.data("timeline").keys == ()
                for step in ("deploy", "repeats"):
                    model = await viewer.advance(step)
                assert_second_run_of_q05(model)

                # The viewer: this run's verdicts, the step in the status line, every run on r.
                await settle(pilot)
                assert "on step 4/4 cleanup · run 2 since " in screen_lines(app)[0]
                assert [r[:4] for r in full_rows(app, "verdicts")] == [
                    (ORDERS, "dedup-order", SECOND_RUN, "ok"),
                    (ORDERS, "other-order", "1 write · 0 duplicates · 0 overwrites ✓", "ok"),
                ]
                assert "Earlier runs" in screen_lines(app)[-1]  # the footer offers r
                await pilot.press("r")
                await settle(pilot)
                every = full_rows(app, "verdicts")
                assert ("run 1", ORDERS, "dedup-order", FIRST_RUN, "ok") in [r[:5] for r in every]
                assert ("run 2 (now)", ORDERS, "dedup-order", SECOND_RUN, "ok") in [
                    r[:5] for r in every
                ]
                assert {r[0] for r in full_rows(app, "decisions")} == {"run 1", "run 2 (now)"}
                shown = view(app, "verdicts").shown.panel
                first = dict(
                    describe(model, shown, "verdicts", f"run:1#{ORDERS}#dedup-order").fields
                )
                assert first["Verdict"] == FIRST_RUN and first["Run"].startswith("run 1 ")
                assert "every run (r)" in screen_lines(app)[0]
                await pilot.press("r")
                await settle(pilot)
                assert (
                    len(full_rows(app, "verdicts")) == 2
                    and full_rows(app, "decisions")[0][0] != "run 1"
                )
        late = await look(running.endpoint_url, DecisionStore(tmp_path / "late.sqlite3"))
        assert_second_run_of_q05(late)
    finally:
        running.stop()


async def test_e_a_viewer_started_after_ev05_s_third_step_shows_steps_1_to_3_done(
    played_lab, tmp_path
):
    running = played_lab("ev05", "executions")  # `awsview lab setup`, `lab play --until`
    model = await look(running.endpoint_url, DecisionStore(tmp_path / "viewer.sqlite3"), "ev05")
    results = model.data("checkpoints")
    assert marks(model) == ["✓", "✓", "✓", "✓", "✗", "✓"]
    # The deployed code and "no executions yet" are no longer visible: later steps prove them.
    assert [r.detail for r in results[:2]] == ["done: a later step holds"] * 2
    assert progress(results).text == "on step 4/4 cleanup"
    assert results[4].detail == "1 state machine; labex-ev05-orders: 2 items"


async def test_f_a_delete_then_a_create_is_a_new_lifetime_an_overwrite_still_alarms(
    spawn_emulator, tmp_path
):
    running = spawn_emulator(tmp_path / "emulator")
    try:
        store = DecisionStore(tmp_path / "viewer.sqlite3")
        LabPlayer("q05", endpoint_url=running.endpoint_url, log=lambda line: None).setup()
        ddb = running.client("dynamodb")
        item = {"id": {"S": "k1"}, "quantity": {"N": "1"}}
        async with LabViewer(running.endpoint_url, "q05", store) as viewer:
            await viewer.advance()
            ddb.put_item(
                TableName=ORDERS, Item=item, ConditionExpression="attribute_not_exists(id)"
            )
            ddb.delete_item(TableName=ORDERS, Key={"id": {"S": "k1"}})
            ddb.put_item(
                TableName=ORDERS, Item=item, ConditionExpression="attribute_not_exists(id)"
            )
            model = await viewer.advance()
            key = model.data("timeline").key(ORDERS, "k1")
            assert [[d.kind for d in life.decisions] for life in key.lifetimes] == [
                ["create", "delete"],
                ["create"],
            ]
            assert (
                key.lifetimes[0].ended
                and key.lifetimes[0].verdict.text
                == "1 write · 0 duplicates · 0 overwrites · 1 delete ✓"
            )
            assert (
                key.verdict.text == "1 write · 0 duplicates · 0 overwrites ✓"
                and not key.verdict.alarm
            )
            ddb.put_item(
                TableName=ORDERS, Item={**item, "quantity": {"N": "2"}}
            )  # unconditional, over it
            model = await viewer.advance()
            key = model.data("timeline").key(ORDERS, "k1")
            assert (
                key.verdict.text == "1 write · 0 duplicates · 1 overwrite ⚠" and key.verdict.alarm
            )
            assert len(key.lifetimes) == 2 and [r.number for r in model.data("runs")] == [1]
            panel = _panel(model, "verdicts")
            rows = {r.key: r.cells for r in panel.rows}
            assert rows[f"{ORDERS}#k1"][3] == "ALARM"
            assert rows[f"{ORDERS}#k1#lifetime1"][3].startswith("earlier lifetime, deleted ")
            earlier = dict(describe(model, panel, "verdicts", f"{ORDERS}#k1#lifetime1").fields)
            assert earlier["Alarm"] == "no" and earlier["Lifetime"].startswith(
                "lifetime 1 of 2, deleted "
            )
            latest = dict(describe(model, panel, "verdicts", f"{ORDERS}#k1").fields)
            assert latest["Alarm"] == "yes" and latest["Run"].startswith("run 1 since ")
    finally:
        running.stop()


async def test_a_done_step_whose_work_is_removed_before_the_cleanup_is_red_again(
    spawn_emulator, tmp_path
):
    running = spawn_emulator(tmp_path / "emulator")
    try:
        async with LabViewer(
            running.endpoint_url, "ev04", DecisionStore(tmp_path / "viewer.sqlite3")
        ) as viewer:
            for step in ("setup", "authorize", "workflow"):
                model = await viewer.advance(step)
            assert marks(model) == ["✓", "✓", "✗", "✗", "·", "·"]
            iam = running.client("iam")
            iam.delete_role_policy(RoleName="labex-ev04-workflow-role", PolicyName="InvokeWorker")
            model = await viewer.advance()
            results = model.data("checkpoints")
            assert marks(model) == [
                "✗",
                "✓",
                "✗",
                "✗",
                "·",
                "·",
            ]  # authorize broken; still on executions
            assert results[0].status == "broken" and results[0].detail.startswith(
                "role labex-ev04-workflow-role may not invoke labex-ev04-worker (held at "
            )
            assert progress(results).text == "on step 3/4 executions"
    finally:
        running.stop()


def _panel(model: LabState, name: str):
    from awsview import kinds

    (panel,) = kinds.resolve(kinds.KINDS[name].renderer)(model, labspec.load("q05"), 0.0)
    return panel


# -- the rules on their own ------------------------------------------------------------------


def test_a_resource_created_again_in_its_own_run_starts_the_next_one():
    book = RunBook()
    table, queue = Sighting("table t", 100.5, True), Sighting("queue q", 110.25, False)
    assert book.observe([table], complete=False) == ([], {})  # one failed listing proves nothing
    began, _ = book.observe([table], complete=True)
    assert [(r.number, r.start) for r in began] == [(1, 100.5)]
    assert book.observe([table, queue], complete=True)[0] == []  # the queue is new in this run
    began, _ = book.observe([table, Sighting("queue q", 200.0, False, True)], complete=True)
    # SQS and IAM say whole seconds on AWS: the run starts once the queue surely exists.
    assert [(r.number, r.start, r.reason) for r in began] == [(2, 201.0, "queue q created again")]
    began, _ = book.observe(
        [Sighting("table t", 300.5, True)], complete=True, emulator_started=290.0
    )
    # A restarted emulator ends the run; the table set up again is part of the new one.
    assert [(r.number, r.start) for r in began] == [(3, 290.0)] and book.current.number == 3
    runs = closed(book.runs)
    assert [run_of(runs, t) for t in (50.0, 150.0, 200.5, 250.0, 295.0)] == [0, 1, 1, 2, 3]
    assert runs[0].end == 201.0 and runs[-1].current


def test_a_viewer_new_to_a_lab_starts_its_run_at_the_learner_s_first_resource():
    book = RunBook()
    book.observe(
        [
            Sighting("table t", 100.5, True),
            Sighting("queue q", 150.5, False),
            Sighting("role r", 160.5, False),
        ],
        complete=True,
        emulator_started=10.0,
    )
    assert book.current == LabRun(1, 150.5, "queue q created")


def test_a_millisecond_time_on_a_whole_second_is_exact():
    """DynamoDB and Step Functions give milliseconds: one in a thousand tables is created on a whole
    second, and its run must not start a second late (that put the first writes of a late viewer's
    run, made within that second, into the run before)."""
    profile = labspec.load("q05")
    model = LabState()
    model.apply(
        [
            succeeded(
                None,
                "table",
                f"table:{name}",
                Table(name, "ACTIVE", ("id",), (), created=created),
                at=200.0,
            )
            for name, created in ((ORDERS, 100.0), ("labex-q05-reference", 99.5))
        ]
    )
    found = {s.resource: s for s in sightings(profile, model)[0]}
    assert found[f"table {ORDERS}"].known_from == 100.0
    book = RunBook()
    book.observe(found.values(), complete=True, emulator_started=10.0)
    assert book.current == LabRun(1, 100.0, f"table {ORDERS} created (set up)")
    # A queue's whole second is AWS's rounding: the run starts once it surely exists.
    assert Sighting("queue q", 100.0, False, True).known_from == 101.0


def test_an_item_seen_gone_between_two_scans_ends_its_lifetime():
    profile = labspec.load("q05")
    created = timeline.Decision(
        "journal:j:1",
        100.0,
        ORDERS,
        "k",
        "PutItem",
        None,
        "Accepted",
        None,
        "create",
        None,
        {"id": "k"},
        timeline.Actor("api", "API call"),
        "journal",
    )
    built = timeline.build(
        timeline.Evidence(business_tables=(ORDERS,), journal_id="j", stored=(created,))
    )
    poller = TimelinePoller(profile)
    model = LabState()
    for at, items in ((101.0, ({"id": "k"},)), (103.0, ()), (110.0, ())):
        model.apply(
            [
                succeeded(
                    None, "table", f"table:{ORDERS}", Table(ORDERS, "ACTIVE", ("id",), items), at=at
                )
            ]
        )
        marks = poller._seen_gone(built, model)
        if at < 110.0:
            assert marks == []  # too soon after the write: the journal may not have said all yet
    (gone,) = marks
    built = timeline.build(
        timeline.Evidence(business_tables=(ORDERS,), journal_id="j", stored=(created, gone))
    )
    key = built.key(ORDERS, "k")
    assert key.lifetimes[0].ended and key.lifetimes[0].end_text.startswith("seen gone ")
