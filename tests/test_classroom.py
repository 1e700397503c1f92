"""Class view core: the roster file, and a monitor that follows several learners at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from awsview.checkpoints import CheckResult
from awsview.classroom import ClassMonitor, Learner, RosterError, current_step, load_roster
from awsview.labs.player import LabPlayer
from awsview.profiles import Checkpoint


def _results(*marks):
    steps = ["a", "a", "b", "c"]
    return tuple(CheckResult(Checkpoint(step, f"t{i}"), mark, "") for i, (step, mark) in enumerate(zip(steps, marks)))


def test_current_step_is_the_last_step_passed_in_order():
    assert current_step(_results(False, False, False, True)) is None
    assert current_step(_results(True, False, False, True)) is None
    assert current_step(_results(True, True, False, True)) == "a"
    assert current_step(_results(True, True, True, None)) == "b"
    assert current_step(_results(True, True, True, True)) == "c"


@pytest.mark.parametrize("text,problem", [
    ("", "expected one or more [[learner]] tables"),
    ("[[learner]]\nendpoint_url = 'http://x:1'\n", "learner 1 needs a name"),
    ("[[learner]]\nname = 'a'\nendpoint_url = 'ftp://x'\n", "endpoint_url must be an http(s) URL"),
    ("[[learner]]\nname = 'a'\n[[learner]]\nname = 'a'\n", "listed twice"),
    ("[[learner]]\nname = 'a'\nlab = 'ev99'\n", "unknown lab 'ev99'"),
    ("[[learner\n", "line 1"),
])
def test_malformed_roster(tmp_path: Path, text: str, problem: str):
    path = tmp_path / "class.toml"
    path.write_text(text)
    with pytest.raises(RosterError, match="class.toml") as error:
        load_roster(path)
    assert problem in str(error.value)


async def test_monitor_follows_learners_and_a_dead_one_shows_its_error(emulator):
    player = LabPlayer("q05", endpoint_url=emulator.endpoint_url, log=lambda line: None)
    player.setup()
    player.play(until="deploy")
    learners = (Learner("ada", emulator.endpoint_url), Learner("bob", emulator.endpoint_url, "q05"),
                Learner("cy", "http://127.0.0.1:9"))
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
