"""The polling core, the model, the renderers and the emulator never import a UI library."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CORE_MODULES = [
    "awsview.aws.session", "awsview.aws.readonly", "awsview.aws.errors", "awsview.aws.ratelimit",
    "awsview.model.snapshot", "awsview.model.resources", "awsview.model.asl", "awsview.model.history",
    "awsview.model.loglines", "awsview.model.items", "awsview.pollers.scheduler", "awsview.profiles",
    "awsview.render", "awsview.dump", "awsview.emulator.server", "awsview.labs.player",
    "awsview.classroom", "awsview.checkpoints", "awsview.timeline", "awsview.explain", "awsview.store",
    "awsview.docs", "awsview.freeze", "awsview.graph", "awsview.stateruns", "awsview.textgrid",
    "awsview.model.codec", "awsview.model.patch", "awsview.recording",
    "awsview.recorder", "awsview.recorded", "awsview.doctor", "awsview.runs", "awsview.pollers.runs",
    "awsview.docs", "awsview.freeze", "awsview.aws.policy", "awsview.log", "awsview.preferences",
    "awsview.extras",
]
FORBIDDEN = ("textual", "rich")


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_does_not_import_ui_libraries(module):
    code = (f"import sys, json, {module}\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {'textual', 'rich'})))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [], f"{module} pulled in a UI library"


def test_the_check_can_fail():
    code = "import sys, textual.app; print(sorted(m for m in sys.modules if m.startswith('textual'))[:1])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "textual" in result.stdout
