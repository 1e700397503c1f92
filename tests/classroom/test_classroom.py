"""Class view core: the roster file, and a monitor that follows several learners at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from awsview.classroom.monitor import ClassMonitor, Learner, RosterError, current_step, load_roster
from awsview.core.checkpoints import CheckResult
from awsview.labspec import Checkpoint


def _results(*marks):
    steps = ["a", "a", "b", "c"]
    return tuple(
        CheckResult(Checkpoint(step, f"t{i}"), mark, "")
        for i, (step, mark) in enumerate(zip(steps, marks))
    )


def test_current_step_is_the_last_step_passed_in_order():
    assert current_step(_results(False, False, False, True)) is None
    assert current_step(_results(True, False, False, True)) is None
    assert current_step(_results(True, True, False, True)) == "a"
    assert current_step(_results(True, True, True, None)) == "b"
    assert current_step(_results(True, True, True, True)) == "c"


@pytest.mark.parametrize(
    "text,problem",
    [
        ("", "expected one or more [[learner]] tables"),
        ("[[learner]]\nendpoint_url = 'http://x:1'\n", "'learner[1]' needs 'name'"),
        (
            "[[learner]]\nname = 'a'\nendpoint_url = 'ftp://x'\n",
            "class.toml:3: 'learner[1].endpoint_url': ftp://x: "
            'unsupported scheme "ftp" (use http:// or https://)',
        ),
        ("[[learner]]\nname = 'a'\n[[learner]]\nname = 'a'\n", "listed twice"),
        ("[[learner]]\nname = 'a'\nlab = 'ev99'\n", "unknown lab 'ev99'"),
        ("[[learner\n", "class.toml:1: "),
        ("[[learner]]\nname = 'a'\nedpoint_url = 'http://x:1'\n", "class.toml:3: unknown key"),
    ],
)
def test_malformed_roster(tmp_path: Path, text: str, problem: str):
    path = tmp_path / "class.toml"
    path.write_text(text)
    with pytest.raises(RosterError, match="class.toml") as error:
        load_roster(path)
    assert problem in str(error.value)


async def test_monitor_follows_learners_and_a_dead_one_shows_its_error(played_lab):
    emulator = played_lab("q05", "deploy")
    learners = (
        Learner("ada", emulator.endpoint_url),
        Learner("bob", emulator.endpoint_url, "q05"),
        Learner("cy", "http://127.0.0.1:9"),
    )
    monitor = ClassMonitor(learners, concurrency=2)
    try:
        statuses = {s.learner.name: s for s in await monitor.round()}
    finally:
        await monitor.close()
    for name in ("ada", "bob"):
        assert statuses[name].lab == "q05" and statuses[name].error is None
        assert statuses[name].step == "deploy"
        assert statuses[name].passed >= 2
    assert statuses["cy"].lab is None and "connection refused" in statuses["cy"].error


async def test_a_slow_learner_delays_only_its_own_card():
    """run() follows each learner on its own clock: one endpoint that does not answer at all
    must not hold the others to its pace (nothing timed: the fast learner's rounds go on while
    the slow one's first poll never returns)."""
    import asyncio
    import time

    from awsview.classroom.monitor import ClassMonitor, Learner, LearnerStatus

    monitor = ClassMonitor((Learner("fast", None), Learner("slow", None)), refresh=0.1)
    seen: dict[str, int] = {"fast": 0, "slow": 0}
    never = asyncio.Event()

    async def fake_poll(follow):
        if follow.learner.name == "slow":
            await never.wait()
        seen[follow.learner.name] += 1
        return LearnerStatus(follow.learner, updated_at=time.time())

    monitor._poll = fake_poll
    task = asyncio.create_task(monitor.run())
    deadline = time.monotonic() + 60
    while seen["fast"] < 8 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert seen["fast"] >= 8 and seen["slow"] == 0


async def test_a_learner_joined_late_is_credited_with_the_steps_a_later_one_proves(played_lab):
    """ev05 played to its third step before the class view looks: the deployed code and "no
    executions yet" can no longer be seen, but the executions prove both steps were done."""
    emulator = played_lab("ev05", "executions")
    monitor = ClassMonitor((Learner("dee", emulator.endpoint_url, "ev05"),))
    try:
        (status,) = await monitor.round()
    finally:
        await monitor.close()
    assert status.step == "executions" and status.error is None
    assert [r.mark for r in status.checkpoints] == [
        "✓",
        "✓",
        "✓",
        "✓",
        "✗",
        "✓",
    ] and status.passed == 5
