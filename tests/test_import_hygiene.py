"""The polling core, the model, the renderers and the emulator never import a UI library."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CORE_MODULES = [
    "awsview.aws.session", "awsview.aws.readonly", "awsview.aws.errors", "awsview.aws.ratelimit",
    "awsview.model.snapshot", "awsview.model.resources", "awsview.model.asl", "awsview.model.history",
    "awsview.model.loglines", "awsview.model.items", "awsview.polling.scheduler", "awsview.profiles",
    "awsview.core.render", "awsview.cli.dump", "awsview.emulator.server", "awsview.labs.player",
    "awsview.polling.classroom", "awsview.core.checkpoints", "awsview.core.timeline", "awsview.core.explain", "awsview.polling.store",
    "awsview.capture.docs", "awsview.core.freeze", "awsview.core.graph", "awsview.core.stateruns", "awsview.core.textgrid",
    "awsview.model.codec", "awsview.model.patch", "awsview.polling.recording",
    "awsview.polling.recorder", "awsview.polling.recorded", "awsview.polling.doctor", "awsview.core.runs", "awsview.polling.runs",
    "awsview.capture.docs", "awsview.core.freeze", "awsview.aws.policy", "awsview.aws.log", "awsview.ui.preferences",
    "awsview.cli.extras",
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
