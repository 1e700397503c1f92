"""The built-in labs as lab folders: names, steps, their workers and workflow, how a worker is
pointed at the endpoint played on, and the one-line errors of a play that cannot go on."""

from __future__ import annotations

import ast
import json
import re

import pytest

from awsview.labs import BUILTIN, LabError, UnknownLab, get_lab, names
from awsview.labs.player import LabPlayer
from awsview.labspec.folder import builtin_dir
from tests.support.helpers import folder_workflow


def test_labs_and_their_steps():
    assert {"ev04", "ev05", "q05"} <= set(names())
    assert BUILTIN == ("ev04", "ev05", "q05")
    keys = {name: [step.key for step in get_lab(name).steps] for name in BUILTIN}
    assert keys == {
        "ev04": ["authorize", "workflow", "executions", "cleanup"],
        "ev05": ["deploy", "workflow", "executions", "cleanup"],
        "q05": ["connect", "deploy", "repeats", "cleanup"],
    }
    for name in BUILTIN:
        lab = get_lab(name)
        assert all(step.title for step in lab.steps)
        assert lab.step(1) == lab.steps[0] and lab.step("cleanup") == lab.steps[-1]
        assert lab.step("2") == lab.steps[1]  # --until's digits


def test_unknown_lab_names_itself_and_the_known_ones():
    with pytest.raises(UnknownLab) as caught:
        get_lab("ev99")
    assert isinstance(caught.value, ValueError)
    assert "ev99" in str(caught.value)
    for name in ("ev04", "ev05", "q05"):
        assert name in str(caught.value)
    with pytest.raises(UnknownLab):
        LabPlayer("nope")


def test_unknown_step_is_a_lab_error_listing_the_steps():
    with pytest.raises(LabError, match="1=authorize.*4=cleanup"):
        get_lab("ev04").step("deploy")


def test_unreachable_endpoint_is_one_line_lab_error(starts_processes):
    with LabPlayer("ev04", endpoint_url="http://127.0.0.1:9", log=lambda line: None) as player:
        with pytest.raises(LabError) as caught:
            player.play(only="authorize")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("ev04 step 1/4 authorize: `")
    assert 'Could not connect to the endpoint URL: "http://127.0.0.1:9/' in message


def test_workers_are_valid_python():
    sources = sorted(builtin_dir().glob("*/assets/*.py"))
    assert {p.parent.parent.name for p in sources} >= {"ev04", "ev05", "q05"}
    for path in sources:
        ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_the_protected_workers_the_steps_write_make_the_write_conditional():
    """ev05's step 1 edits app.py, q05's step 2 writes it whole: either way the order write is
    conditional on the order id (the plays in test_labs_ev05/q05 show what it does)."""
    q05 = (builtin_dir() / "q05" / "step2.md").read_text(encoding="utf-8")
    protected = q05.split("cat > app.py <<'PY'\n", 1)[1].split("\nPY\n", 1)[0]
    ast.parse(protected)
    assert "attribute_not_exists(id)" in protected
    ev05 = (builtin_dir() / "ev05" / "step1.md").read_text(encoding="utf-8")
    assert 'ConditionExpression="attribute_not_exists(id)"' in ev05
    for lab in ("ev05", "q05"):
        initial = (builtin_dir() / lab / "assets" / "app.py").read_text(encoding="utf-8")
        assert "ConditionExpression" not in initial


def test_workflow_definition_is_the_template_with_the_worker():
    arn = "arn:aws:lambda:us-east-1:123456789012:function:labex-ev04-worker"
    definition = folder_workflow("ev04", arn)
    template = json.loads(
        (builtin_dir() / "ev04" / "assets" / "workflow-template.json").read_text(encoding="utf-8")
    )
    assert definition["States"]["StoreOrder"]["Parameters"]["FunctionName"] == arn
    assert definition["States"]["ReadSummary"]["Parameters"]["FunctionName"] == arn
    template["States"]["StoreOrder"]["Parameters"]["FunctionName"] = arn
    template["States"]["ReadSummary"]["Parameters"]["FunctionName"] = arn
    assert definition == template
    retry = definition["States"]["StoreOrder"]["Retry"]
    assert retry == [
        {
            "ErrorEquals": ["TransientOrderError"],
            "IntervalSeconds": 1,
            "BackoffRate": 2,
            "MaxAttempts": 2,
        }
    ]
    assert definition["States"]["StoreOrder"]["Catch"][0]["ErrorEquals"] == ["InvalidOrder"]


@pytest.mark.parametrize(
    ("endpoint", "expected"),
    [
        ("http://127.0.0.1:5000", 'endpoint_url="http://127.0.0.1:5000"'),
        ("http://127.0.0.1:4566", 'endpoint_url="http://127.0.0.1:4566"'),
        (None, 'endpoint_url="http://127.0.0.1:5000"'),  # AWS itself: the lab's text as it is
    ],
)
def test_q05_worker_is_pointed_at_the_players_endpoint(endpoint, expected, starts_processes):
    original = (builtin_dir() / "q05" / "assets" / "app.py").read_text(encoding="utf-8")
    with LabPlayer("q05", endpoint_url=endpoint, log=lambda line: None) as player:
        placed = (player.workspace.cwd / "app.py").read_text(encoding="utf-8")
    assert expected in placed
    # Only that one line changes.
    pairs = zip(placed.splitlines(), original.splitlines(), strict=True)
    changed = [a for a, b in pairs if a != b]
    assert len(changed) <= 1


@pytest.mark.parametrize("name", ["ev04", "ev05", "q05"])
def test_playing_without_setup_says_which_command_provides_the_resources(name, emulator):
    """A learner who plays before `lab setup` (or after the emulator restarted without its
    state) is told the command, in one line, besides the API's own error. (This module's
    emulator never has a lab set up.)"""
    with LabPlayer(name, endpoint_url=emulator.endpoint_url, log=lambda line: None) as player:
        with pytest.raises(LabError) as caught:
            player.play()
    message = str(caught.value)
    assert "\n" not in message
    assert re.search(r"\((ResourceNotFoundException|NoSuchEntity)\)", message), message
    assert message.endswith(f"`awsview lab setup {name}` creates them")
