"""Each lab played step by step on the real emulator, the viewer open beside it: after every step
the panels show what the lab text says AWS View shows."""

from __future__ import annotations

import pytest

from awsview.ui.viewer.app import AWSViewApp
from tests.support.helpers import LabViewer
from tests.support.probe import body, full_rows, rows, screen_lines, settle, view

pytestmark = pytest.mark.slow


class LabRun(LabViewer):
    """The shared lab viewer; after a step the app settles before the panels are read."""

    async def step(self, pilot, name: str) -> None:
        await self.advance(name, rounds=2)  # the timeline and checkpoints read the first round
        await settle(pilot)


def column(app, ident: str, index: int) -> list[str]:
    return [r[index] for r in full_rows(app, ident)]


async def test_ev04_in_the_viewer(emulator):
    async with LabRun(emulator.endpoint_url, "ev04") as lab:
        app = AWSViewApp(model=lab.model, profile=lab.profile)
        async with app.run_test(size=(160, 60)) as pilot:
            await lab.step(pilot, "setup")
            assert body(app, "state_machines") == "no state machines"
            assert body(app, "tables:labex-ev04-orders") == "no items"
            assert full_rows(app, "tables:labex-ev04-reference") == [
                ("reference", "note=keep unchanged")
            ]
            assert column(app, "functions", 0) == ["labex-ev04-worker"]

            await lab.step(pilot, "authorize")
            roles = full_rows(app, "roles")
            assert ("labex-ev04-workflow-role", "states.amazonaws.com", "", "") in roles
            assert any(
                r[2] == "Allow lambda:InvokeFunction" and r[3].endswith(":labex-ev04-worker")
                for r in roles
            )

            await lab.step(pilot, "workflow")
            (machine,) = full_rows(app, "state_machines")
            assert machine[:3] == ("labex-ev04-orders", "STANDARD", "labex-ev04-workflow-role")
            assert "Retry TransientOrderError every 1s ×2, max 2" in machine[3]
            assert "Catch InvalidOrder → Rejected ($.failure)" in machine[3]
            assert body(app, "executions") == "no executions"
            assert body(app, "tables:labex-ev04-orders") == "no items"

            await lab.step(pilot, "executions")
            runs = {r[0]: r for r in full_rows(app, "executions")}
            assert (
                runs["retry-order"][1] == "SUCCEEDED"
                and '"total_cents":600' in runs["retry-order"][4]
            )
            assert '"quantity":2' in runs["retry-order"][4]
            assert runs["permanent-order"][1] == "FAILED" and runs["permanent-order"][4].startswith(
                "OrderRejected"
            )
            assert runs["denied-order"][1] == "FAILED"
            assert full_rows(app, "tables:labex-ev04-orders") == [
                ("retry-order", "quantity=2, total_cents=600")
            ]
            history = full_rows(app, "history:retry-order")
            assert [r[5] for r in history if r[2] == "TaskFailed"] == ["TransientOrderError"]
            assert [r[2] for r in history].count("TaskSucceeded") == 2
            assert "reference unchanged" in str(
                view(app, "tables:labex-ev04-reference").border_title
            )
            shown = "\n".join(screen_lines(app))
            assert "retry-order" in shown and "SUCCEEDED" in shown

            await lab.step(pilot, "cleanup")
            assert body(app, "state_machines") == "no state machines"
            assert full_rows(app, "executions") == []
            assert body(app, "tables:labex-ev04-orders") == "no items"
            assert full_rows(app, "tables:labex-ev04-reference") == [
                ("reference", "note=keep unchanged")
            ]
            assert "reference unchanged" in str(
                view(app, "tables:labex-ev04-reference").border_title
            )


async def test_ev05_in_the_viewer(emulator):
    async with LabRun(emulator.endpoint_url, "ev05") as lab:
        app = AWSViewApp(model=lab.model, profile=lab.profile)
        async with app.run_test(size=(160, 60)) as pilot:
            await lab.step(pilot, "setup")
            (initial,) = full_rows(app, "functions")
            await lab.step(pilot, "deploy")
            (deployed,) = full_rows(app, "functions")
            assert deployed[4] != initial[4]  # CODE: a new CodeSha256

            await lab.step(pilot, "workflow")
            assert column(app, "state_machines", 0) == ["labex-ev05-orders"]
            assert body(app, "executions") == "no executions"

            await lab.step(pilot, "executions")
            runs = {r[0]: r for r in full_rows(app, "executions")}
            assert {n: r[1] for n, r in runs.items()} == {
                "after-write-order": "SUCCEEDED",
                "repeated-order": "SUCCEEDED",
                "different-order": "SUCCEEDED",
            }
            assert '"total_cents":1100' in runs["after-write-order"][4]
            assert '"total_cents":1100' in runs["repeated-order"][4]
            assert '"total_cents":350' in runs["different-order"][4]
            assert full_rows(app, "tables:labex-ev05-orders") == [
                ("different-order", "quantity=1, total_cents=350"),
                ("protected-order", "quantity=4, total_cents=1100"),
            ]
            outcomes = sorted((r[2], r[5]) for r in full_rows(app, "decisions"))
            assert outcomes == [
                ("different-order", "Accepted"),
                ("protected-order", "Accepted"),
                ("protected-order", "Rejected: ConditionalCheckFailedException"),
                ("protected-order", "Rejected: ConditionalCheckFailedException"),
            ]

            await lab.step(pilot, "cleanup")
            assert body(app, "tables:labex-ev05-orders") == "no items"
            assert body(app, "state_machines") == "no state machines"
            assert full_rows(app, "tables:labex-ev05-reference") == [
                ("reference", "note=keep unchanged")
            ]


async def test_q05_in_the_viewer(emulator):
    async with LabRun(emulator.endpoint_url, "q05") as lab:
        app = AWSViewApp(model=lab.model, profile=lab.profile)
        async with app.run_test(size=(160, 60)) as pilot:
            await lab.step(pilot, "setup")
            await lab.step(pilot, "connect")
            assert [r[:3] + r[4:] for r in full_rows(app, "queues")] == [
                ("labex-q05-jobs", "0", "0", "0", "", "—")  # no oldest message: empty
            ]
            functions = full_rows(app, "functions")
            assert ("↳ labex-q05-jobs", "SQS", "batch 1", "Enabled", "", "") in functions
            assert body(app, "tables:labex-q05-orders") == "no items"
            assert body(app, "decisions") == "no write decisions"

            await lab.step(pilot, "deploy")
            (decision,) = full_rows(app, "decisions")
            assert decision[2:6] == (
                "dedup-order",
                "PutItem",
                "attribute_not_exists(id)",
                "Accepted",
            )
            assert decision[7] == "none → id=dedup-order, quantity=4, total_cents=1100"
            assert full_rows(app, "tables:labex-q05-orders") == [
                ("dedup-order", "quantity=4, total_cents=1100")
            ]
            assert any(
                '"processed": true' in r[2] for r in full_rows(app, "logs") if r[1] == "RESULT"
            )

            await lab.step(pilot, "repeats")
            assert [r[:3] + r[4:] for r in full_rows(app, "queues")] == [
                ("labex-q05-jobs", "0", "0", "0", "", "—")  # no oldest message: empty
            ]
            outcomes = sorted((r[2], r[5]) for r in full_rows(app, "decisions"))
            assert outcomes == [
                ("dedup-order", "Accepted"),
                ("dedup-order", "Rejected: ConditionalCheckFailedException"),
                ("dedup-order", "Rejected: ConditionalCheckFailedException"),
                ("other-order", "Accepted"),
            ]
            assert [r[7] for r in full_rows(app, "decisions") if r[5].startswith("Rejected")] == [
                "unchanged"
            ] * 2
            results = [r[2] for r in full_rows(app, "logs") if r[1] == "RESULT"]
            assert sum('"duplicate": true' in line for line in results) == 2
            assert not any(
                "AQEB" in r[2] for r in full_rows(app, "logs")
            )  # receipt handles redacted
            assert all(
                cell for r in rows(app, "decisions") for cell in r[:1]
            )  # Text cells on screen

            await lab.step(pilot, "cleanup")
            assert body(app, "queues") == "no queues"
            assert body(app, "tables:labex-q05-orders") == "no items"
            kept = sorted((r[2], r[3], r[5]) for r in full_rows(app, "decisions"))
            assert ("dedup-order", "PutItem", "Accepted") in kept  # the past write decisions stay
            assert (
                kept.count(("dedup-order", "PutItem", "Rejected: ConditionalCheckFailedException"))
                == 2
            )
            assert full_rows(app, "tables:labex-q05-reference") == [
                ("reference", "note=keep unchanged")
            ]
