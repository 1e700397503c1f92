"""A step check (`awsview verify`, `lab check`) reads only what the step's checkpoints look at,
and answers as a check that read everything would. Against the embedded emulator."""

from __future__ import annotations

import asyncio

from awsview import labspec
from awsview.aws.session import Target
from awsview.labs.player import LabPlayer
from awsview.polling.stepcheck import StepChecker
from tests.support.helpers import operations_sent


class _Everything(StepChecker):
    """The check as it was: one read of every kind before each answer."""

    async def _read_for(self, checkpoints):
        assert self._scheduler is not None
        return await self._scheduler.run_once()


async def test_a_step_check_reads_only_what_its_checkpoints_look_at(
    starts_processes, emulator, monkeypatch
):
    sent = operations_sent(monkeypatch)
    profile = labspec.load("q05")
    player = LabPlayer("q05", endpoint_url=emulator.endpoint_url, log=lambda line: None)
    target = Target(endpoint_url=emulator.endpoint_url, region="us-east-1")

    async def answered(checker: StepChecker, step: str):
        start = len(sent)
        results = await checker.settle(step, 30)
        calls = sent[start:]
        return [(r.checkpoint.text, r.passed, r.now) for r in results], calls, len(calls)

    try:
        await asyncio.to_thread(player.setup)
        async with StepChecker(target, profile) as some, _Everything(target, profile) as every:
            await some.look()
            await every.look()
            for step in player.lab.folder.steps:
                await asyncio.to_thread(player.play, only=step.key)
                mine, calls, count = await answered(some, step.key)
                theirs, _, full = await answered(every, step.key)
                assert mine == theirs, step.key
                assert all(passed for _, passed, _ in mine), mine
                assert count <= full, step.key
                if step.key == "connect":  # a queue and its mapping: SQS and Lambda alone
                    assert {service for service, _ in calls} == {"sqs", "lambda"}, calls
                    assert count < full / 2, (count, full)
    finally:
        player.close()


def test_the_pollers_of_a_key_come_with_those_they_derive_from_in_order():
    from awsview.polling.scheduler import Scheduler

    scheduler = Scheduler(None, labspec.load("ev04"))  # type: ignore[arg-type]

    def kinds(*keys: str) -> list[str]:
        return [poller.kind for poller in scheduler.writers(keys)]

    assert kinds("queues") == ["queues"]
    assert kinds("history:arn:aws:states:x") == ["state_machines", "executions", "history"]
    assert kinds("table:") == kinds("tables") == ["table"]  # a prefix, and a listing's key
    assert kinds("log_groups") == ["logs"]
    # The timeline's run numbers come with every input of the timeline.
    assert kinds("runs") == [
        *("state_machines", "executions", "history", "table", "logs", "journal", "stream"),
        "timeline",
    ]
    assert kinds("") == [poller.kind for poller in scheduler.pollers]
    assert kinds("no-such-kind") == []
