"""The labs of the series shipped as lab folders (labs/dlq, labs/lambda-diagnose): each passes
`awsview lab check --twice` on a fresh embedded emulator, and its verify scripts fail before
their step is done. Everything runs against the real embedded emulator."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest

from awsview.cli.served import SERVED
from awsview.labs.script import Workspace
from awsview.labspec.folder import load_folder
from tests.labs.test_lab_folders import BUILTIN, awsview
from tests.support.emulator import RunningEmulator
from tests.support.helpers import create_function

# Every test here starts the CLI or an emulator in a process of its own (tests/support/tiers.py).
pytestmark = pytest.mark.process


@pytest.mark.parametrize(
    ("lab", "last"),
    [("dlq", "cleanup"), ("lambda-diagnose", "cleanup")],
)
def test_lab_check_of_a_series_lab_passes_twice(tmp_path: Path, lab: str, last: str):
    junit = tmp_path / f"{lab}.xml"
    done = awsview("lab", "check", lab, "--twice", "--junit", str(junit), timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{lab} run 2" in done.stdout
    assert "✗" not in done.stdout
    root = ElementTree.parse(junit).getroot()
    assert not list(root.iter("failure"))
    assert {s.get("name") for s in root.iter("testsuite")} >= {f"{lab}.run2.step5"}


def _verify(lab: str, endpoint_url: str, *scripts: str) -> dict[str, bool]:
    """Each verify script run as `lab check` runs it (the lab's VM, its endpoint, its
    `awsview verify` served), once."""
    folder, _ = load_folder(BUILTIN / lab)
    workspace = Workspace(folder, endpoint_url, "us-east-1", isolated=True, served=SERVED)
    try:
        return {
            name: workspace.run(workspace.script(name), name, 60, strict=False).ok
            for name in scripts
        }
    finally:
        workspace.close()


@pytest.mark.parametrize(
    ("lab", "passes", "fail"),
    [
        ("dlq", "verify1-1.sh", ("verify2-1.sh", "verify3-1.sh", "verify4-1.sh", "verify5-1.sh")),
        ("lambda-diagnose", "verify1-1.sh", ("verify2-1.sh", "verify4-1.sh")),
    ],
)
def test_verify_scripts_fail_before_their_step_is_done(
    emulator: RunningEmulator, lab: str, passes: str, fail: tuple[str, ...]
):
    played = awsview("lab", "play", lab, "--until", "1", "--endpoint-url", emulator.endpoint_url)
    assert played.returncode == 0, played.stdout + played.stderr
    ok = _verify(lab, emulator.endpoint_url, passes, *fail)
    assert ok == {passes: True, **dict.fromkeys(fail, False)}


def test_dump_shows_a_functions_memory_size(spawn_emulator, tmp_path: Path):
    # An emulator of its own: on one where a lab is found, dump shows that lab, not --prefix.
    emulator = spawn_emulator(tmp_path / "emulator")
    try:
        lam = emulator.client("lambda")
        create_function(lam, "labex-mem-fn", "def handler(event, context):\n    return 1\n")
        lam.update_function_configuration(FunctionName="labex-mem-fn", MemorySize=320)
        lam.get_waiter("function_updated_v2").wait(FunctionName="labex-mem-fn")
        done = awsview(
            "dump", "--json", "--prefix", "labex-mem-", "--endpoint-url", emulator.endpoint_url
        )
        assert done.returncode == 0, done.stderr
        (function,) = json.loads(done.stdout)["snapshots"]["functions"]["data"]
        assert function["memory_size"] == 320
    finally:
        emulator.stop()
