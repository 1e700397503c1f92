"""The polling core against the emulator: after each step of each lab the model (and `dump`)
shows what the lab text says AWS View shows."""

from __future__ import annotations

import json

import pytest

from awsview.core.render import panels
from awsview.model.snapshot import Health
from tests.support.cli import awsview_here
from tests.support.helpers import LabViewer


class Viewer(LabViewer):
    """The shared lab viewer, plus the rendered panels by title."""

    async def step(self, name: str | None = None):
        return await self.advance(name)

    def panel(self, title_start: str):
        return [
            p for p in panels(self.scheduler.model, self.profile) if p.title.startswith(title_start)
        ]


def _executions(model):
    return {e.name: e for s in model.with_prefix("executions:") for e in s.data or ()}


def _items(model, table):
    return model.get(f"table:{table}").data.items


def _ok(model, key):
    snapshot = model.get(key)
    assert snapshot is not None and snapshot.health is Health.OK, snapshot
    return snapshot.data


async def test_ev04_step_by_step(emulator):
    async with Viewer(emulator.endpoint_url, "ev04") as viewer:
        model = await viewer.step("setup")
        assert _ok(model, "state_machines") == ()
        assert _items(model, "labex-ev04-orders") == ()
        assert model.get("table:labex-ev04-reference").data.baseline == "unchanged"
        assert [f.name for f in _ok(model, "functions")] == ["labex-ev04-worker"]
        assert _ok(model, "functions")[0].runtime == "python3.12"

        model = await viewer.step("authorize")
        role = next(r for r in _ok(model, "roles") if r.name == "labex-ev04-workflow-role")
        assert role.trust_principals == ("states.amazonaws.com",)
        assert [(g.action, g.resource.rsplit(":", 1)[-1]) for g in role.grants] == [
            ("lambda:InvokeFunction", "labex-ev04-worker")
        ]

        model = await viewer.step("workflow")
        (machine,) = _ok(model, "state_machines")
        assert machine.name == "labex-ev04-orders" and machine.role_arn.endswith(
            "/labex-ev04-workflow-role"
        )
        summary = " ".join(machine.definition.retry_catch_summary())
        assert (
            "TransientOrderError" in summary and "InvalidOrder" in summary and "Rejected" in summary
        )
        assert _ok(model, "executions:labex-ev04-orders") == ()
        assert _items(model, "labex-ev04-orders") == ()

        model = await viewer.step("executions")
        runs = _executions(model)
        assert runs["retry-order"].status == "SUCCEEDED"
        assert runs["retry-order"].output["total_cents"] == 600
        assert (runs["permanent-order"].status, runs["permanent-order"].error) == (
            "FAILED",
            "OrderRejected",
        )
        assert runs["denied-order"].status == "FAILED"
        history = _ok(model, f"history:{runs['retry-order'].arn}").history
        assert history.attempts["StoreOrder"] == 2
        assert [e.error for e in history.task_failures] == ["TransientOrderError"]
        assert [e.type for e in history.events].count("TaskSucceeded") == 2
        denied = _ok(model, f"history:{runs['denied-order'].arn}").history
        assert [e.is_access_denied for e in denied.task_failures] == [True]
        assert [
            (i["id"], i["quantity"], i["total_cents"]) for i in _items(model, "labex-ev04-orders")
        ] == [("retry-order", 2, 600)]
        assert [(i["id"], i["attempts"]) for i in _items(model, "labex-ev04-attempts")] == [
            ("retry-order", 2)
        ]
        assert model.get("table:labex-ev04-reference").data.baseline == "unchanged"
        from awsview.core.explain import explanations_for

        explained = dict(explanations_for(model))
        retry_store = explained["retry-order"][0]
        assert (retry_store.state, len(retry_store.attempts), retry_store.allowed) == (
            "StoreOrder",
            2,
            3,
        )
        # At least the 1 s interval, and shorter than the next wait of the series (2 s) would be.
        assert (
            retry_store.attempts[1].expected_wait == 1
            and 0.9 <= retry_store.attempts[1].actual_wait < 2.0
        )
        permanent = explained["permanent-order"][0]
        assert permanent.caught == "InvalidOrder → Rejected ($.failure)"
        assert "no Retry covers InvalidOrder" in permanent.summary
        assert (
            explained["denied-order"][0].outcome
            == "failed the execution with Lambda.AWSLambdaException"
        )
        logs = _ok(model, "logs:/aws/lambda/labex-ev04-worker")
        assert any(
            e.line.kind == "RESULT" and e.line.data.get("total_cents") == 600 for e in logs.lines
        )
        assert any(e.line.kind == "ERROR" for e in logs.lines)  # the multi-line error event, split

        model = await viewer.step("cleanup")
        assert _ok(model, "state_machines") == ()
        assert model.get("executions:labex-ev04-orders") is None  # gone with its machine
        assert _items(model, "labex-ev04-orders") == ()
        assert model.get("logs:/aws/lambda/labex-ev04-worker").health is Health.ABSENT
        assert "labex-ev04-workflow-role" not in [r.name for r in _ok(model, "roles")]
        reference = model.get("table:labex-ev04-reference").data
        assert reference.baseline == "unchanged" and reference.items[0]["note"] == "keep unchanged"


def _mark_list(model):
    return [r.mark for r in _ok(model, "checkpoints")]


def _details(model):
    return [r.detail for r in _ok(model, "checkpoints")]


async def test_ev05_step_by_step(emulator):
    async with Viewer(emulator.endpoint_url, "ev05") as viewer:
        model = await viewer.step("setup")
        initial_sha = _ok(model, "functions")[0].code_sha256
        # Nothing is wrong yet: the first step cannot be told yet, the others are not reached.
        assert _mark_list(model) == ["?", "·", "·", "·", "·", "·"]
        model = await viewer.step("deploy")
        assert _ok(model, "functions")[0].code_sha256 != initial_sha
        assert _mark_list(model) == ["✓", "✗", "·", "·", "·", "·"]
        assert _details(model)[1] == "no state machine labex-ev05-orders yet; no executions"
        model = await viewer.step("workflow")
        assert _mark_list(model) == ["✓", "✓", "✗", "✗", "·", "·"]
        model = await viewer.step("executions")
        # On the cleanup step now: its first checkpoint is the one to do, the reference holds.
        assert _mark_list(model) == ["✓", "✓", "✓", "✓", "✗", "✓"]
        runs = _executions(model)
        assert {n: (e.status, e.output["total_cents"]) for n, e in runs.items()} == {
            "after-write-order": ("SUCCEEDED", 1100),
            "repeated-order": ("SUCCEEDED", 1100),
            "different-order": ("SUCCEEDED", 350),
        }
        first = _ok(model, f"history:{runs['after-write-order'].arn}").history
        assert first.task_failures[0].error == "TransientOrderError"
        succeeded = [e for e in first.events if e.type == "TaskSucceeded"]
        assert succeeded[0].payload["duplicate"] is True
        items = [
            (i["id"], i["quantity"], i["total_cents"]) for i in _items(model, "labex-ev05-orders")
        ]
        assert items == [("different-order", 1, 350), ("protected-order", 4, 1100)]
        starts = [
            e
            for e in _ok(model, "logs:/aws/lambda/labex-ev05-worker").lines
            if e.line.kind == "START"
        ]
        assert len(starts) == 7
        model = await viewer.step("cleanup")
        assert _mark_list(model) == ["✓"] * 6  # earlier steps stay done; cleanup live
        decisions = [
            d
            for d in _ok(model, "journal").decisions
            if d["table_name"] == "labex-ev05-orders" and d["operation"] == "PutItem"
        ]
        assert [(d["key"]["id"]["S"], d["outcome"]) for d in decisions] == [
            ("protected-order", "accepted"),
            ("protected-order", "ConditionalCheckFailedException"),
            ("protected-order", "ConditionalCheckFailedException"),
            ("different-order", "accepted"),
        ]


async def test_q05_step_by_step_and_dump_matches(starts_processes, emulator):
    async with Viewer(emulator.endpoint_url, "q05") as viewer:
        await viewer.step("setup")
        model = await viewer.step("connect")
        (queue,) = _ok(model, "queues")
        assert (queue.name, queue.visible, queue.in_flight, queue.visibility_timeout) == (
            "labex-q05-jobs",
            0,
            0,
            30,
        )
        (mapping,) = _ok(model, "functions")[0].mappings
        assert (mapping.batch_size, mapping.state) == (1, "Enabled")
        assert _items(model, "labex-q05-orders") == ()
        assert [p.rows for p in viewer.panel("Write decisions")] == [()]

        model = await viewer.step("deploy")
        assert [(i["id"], i["total_cents"]) for i in _items(model, "labex-q05-orders")] == [
            ("dedup-order", 1100)
        ]
        results = [
            e.line
            for e in _ok(model, "logs:/aws/lambda/labex-q05-worker").lines
            if e.line.kind == "RESULT"
        ]
        assert results[-1].data == {
            "duplicate": False,
            "id": "dedup-order",
            "processed": True,
            "quantity": 4,
        }

        model = await viewer.step("repeats")
        assert _ok(model, "queues")[0].empty
        lines = _ok(model, "logs:/aws/lambda/labex-q05-worker").lines
        assert [e.line.data["processed"] for e in lines if e.line.kind == "RESULT"].count(
            False
        ) == 2
        event_lines = " ".join(e.line.text for e in lines if e.line.kind == "EVENT")
        assert "receiptHandle" in event_lines and "AQEB" not in event_lines  # redacted
        rows = viewer.panel("Write decisions")[0].rows
        outcomes = [(r.cells[2], r.cells[5]) for r in rows]
        # The poller delivers up to five batches at once, as AWS does: order after the first varies.
        assert outcomes[0] == ("dedup-order", "Accepted")
        assert sorted(outcomes) == [
            ("dedup-order", "Accepted"),
            ("dedup-order", "Rejected: ConditionalCheckFailedException"),
            ("dedup-order", "Rejected: ConditionalCheckFailedException"),
            ("other-order", "Accepted"),
        ]

        result = starts_processes.awsview(
            "dump",
            "--lab",
            "q05",
            "--endpoint-url",
            emulator.endpoint_url,
            "--json",
            timeout=60,
            env=emulator.env,
        )
        assert result.returncode == 0, result.stderr
        dumped = json.loads(result.stdout)
        dumped_decisions = next(p for p in dumped["panels"] if p["name"] == "decisions")
        assert [(r["cells"][2], r["cells"][5]) for r in dumped_decisions["rows"]] == outcomes

        model = await viewer.step("cleanup")
        assert _ok(model, "queues") == ()
        assert _ok(model, "functions")[0].mappings == ()
        assert _items(model, "labex-q05-orders") == ()
        rows = viewer.panel("Write decisions")[0].rows
        assert [(r.cells[2], r.cells[5]) for r in rows[:4]] == outcomes  # past decisions are kept
        assert sorted((r.cells[2], r.cells[3]) for r in rows[4:]) == [
            ("dedup-order", "DeleteItem"),
            ("other-order", "DeleteItem"),
        ]  # and cleanup's own writes


def test_dump_text_detects_the_lab(awsview, emulator):
    result = awsview("dump", "--endpoint-url", emulator.endpoint_url, timeout=60, env=emulator.env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("AWS View — ")
    assert "== Write decisions" in result.stdout


@pytest.mark.parametrize(
    "key,reason",
    [("EXPIREDKEY", "credentials expired"), ("INVALIDKEY", "credentials not recognised")],
)
def test_dump_with_bad_credentials_is_one_line(awsview, emulator, key, reason):
    env = {**emulator.env, "AWS_ACCESS_KEY_ID": key}
    result = awsview("dump", "--endpoint-url", emulator.endpoint_url, timeout=60, env=env)
    assert (
        result.returncode == 2
    )  # credentials AWS refuses are a configuration error, not an outage
    assert reason in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_dump_unreachable_endpoint_and_unknown_lab():
    result = awsview_here("dump", "--endpoint-url", "http://127.0.0.1:9")
    assert result.returncode == 1 and "connection refused" in result.stderr
    assert "Traceback" not in result.stderr
    result = awsview_here("dump", "--lab", "ev99", "--endpoint-url", "http://127.0.0.1:9")
    assert result.returncode != 0 and "Traceback" not in result.stderr
