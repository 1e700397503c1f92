"""The labs as data: names, steps, worker sources, and how q05's worker is pointed."""

from __future__ import annotations

import ast
import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from awsview.labs.context import LabContext
from awsview.labs.provision import worker_source, zip_app
from awsview.labs.q05 import worker_for
from awsview.labs.workflow import workflow_definition, workflow_template

from awsview.labs import LABS, LabError, UnknownLab, get_lab
from awsview.labs.player import LabPlayer

# sha256 of the handler printed in seed 000 (ev05), between `cat > app.py <<'PYTHON'` and PYTHON.
EV05_PROTECTED_SHA256 = "5c8a325d0f126b80c05cee1dbc962bf9e35df81bf6912650c21ad0437940a5e4"


def _seed(name: str) -> str | None:
    here = Path(__file__).resolve().parents[2]
    for shared in (here.parent / "shared", here / "shared"):
        path = shared / "seeds" / name
        if path.exists():
            return path.read_text(encoding="utf-8")
    return None


def test_labs_and_their_steps():
    assert sorted(LABS) == ["ev04", "ev05", "q05"]
    keys = {name: [step.key for step in lab.steps] for name, lab in LABS.items()}
    assert keys == {
        "ev04": ["authorize", "workflow", "executions", "cleanup"],
        "ev05": ["deploy", "workflow", "executions", "cleanup"],
        "q05": ["connect", "deploy", "repeats", "cleanup"],
    }
    for lab in LABS.values():
        assert all(step.title for step in lab.steps)
        assert lab.step(1) is lab.steps[0] and lab.step("cleanup") is lab.steps[-1]


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


def test_unreachable_endpoint_is_one_line_lab_error():
    player = LabPlayer("ev04", endpoint_url="http://127.0.0.1:9", log=lambda line: None)
    with pytest.raises(LabError) as caught:
        player.play(only="authorize")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("ev04 1/4 authorize: cannot reach http://127.0.0.1:9")


def test_workers_are_valid_python():
    for name in (
        "ev04_worker.py",
        "ev05_initial.py",
        "ev05_protected.py",
        "q05_initial.py",
        "q05_protected.py",
    ):
        ast.parse(worker_source(name), filename=name)


def test_ev05_protected_worker_is_the_lab_text_byte_for_byte():
    source = worker_source("ev05_protected.py")
    assert hashlib.sha256(source.encode()).hexdigest() == EV05_PROTECTED_SHA256
    seed = _seed("000_e6f04f0cbe250192.txt")
    if seed is not None:
        assert "cat > app.py <<'PYTHON'\n" + source + "PYTHON\n" in seed


def test_q05_protected_worker_is_the_lab_text_reindented():
    source = worker_source("q05_protected.py")
    stripped = "".join(line.lstrip(" ") + "\n" for line in source.splitlines())
    assert "ConditionExpression='attribute_not_exists(id)'" in source
    seed = _seed("002_70b7cb8b13170c87.txt")
    if seed is not None:
        assert "cat > app.py <<'PY'\n" + stripped + "PY\n" in seed


def test_workflow_definition_is_the_template_with_the_worker_name():
    definition = json.loads(workflow_definition("labex-ev04-worker"))
    template = json.loads(workflow_template())
    assert definition["States"]["StoreOrder"]["Parameters"]["FunctionName"] == "labex-ev04-worker"
    assert definition["States"]["ReadSummary"]["Parameters"]["FunctionName"] == "labex-ev04-worker"
    template["States"]["StoreOrder"]["Parameters"]["FunctionName"] = "labex-ev04-worker"
    template["States"]["ReadSummary"]["Parameters"]["FunctionName"] = "labex-ev04-worker"
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


def test_zip_has_app_py_at_its_root_and_a_stable_hash():
    archive = zipfile.ZipFile(io.BytesIO(zip_app("print(1)\n")))
    assert archive.namelist() == ["app.py"]
    assert archive.read("app.py") == b"print(1)\n"
    assert zip_app("print(1)\n") == zip_app("print(1)\n")


@pytest.mark.parametrize(
    ("endpoint", "region", "expected"),
    [
        (
            "http://127.0.0.1:5000",
            "us-east-1",
            "boto3.client('dynamodb',endpoint_url='http://127.0.0.1:5000',region_name='us-east-1')",
        ),
        (
            "http://127.0.0.1:4566",
            "us-east-1",
            "boto3.client('dynamodb',endpoint_url='http://127.0.0.1:4566',region_name='us-east-1')",
        ),
        (None, "us-east-1", "boto3.client('dynamodb',region_name='us-east-1')"),
        (None, "eu-central-1", "boto3.client('dynamodb',region_name='eu-central-1')"),
    ],
)
def test_q05_worker_is_pointed_at_the_players_endpoint(endpoint, region, expected):
    context = LabContext(endpoint, region, log=lambda line: None)
    for name in ("q05_initial.py", "q05_protected.py"):
        source = worker_for(context, name)
        assert expected in source
        original = worker_source(name)
        # Only that one line changes.
        pairs = zip(source.splitlines(), original.splitlines(), strict=True)
        changed = [a for a, b in pairs if a != b]
        assert len(changed) <= 1


@pytest.mark.parametrize("name", ["ev04", "ev05", "q05"])
def test_playing_without_setup_says_which_command_provides_the_resources(name, emulator):
    """A learner who plays before `lab setup` (or after the emulator restarted without its
    state) is told the command, in one line, besides the API's own error. (This module's
    emulator never has a lab set up.)"""
    player = LabPlayer(name, endpoint_url=emulator.endpoint_url, log=lambda line: None)
    with pytest.raises(LabError) as caught:
        player.play()
    message = str(caught.value)
    assert "\n" not in message
    assert "failed: ResourceNotFoundException" in message
    assert message.endswith(f"`awsview lab setup {name}` creates them")
