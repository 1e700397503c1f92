"""The built-in labs ev05 and q05 as lab folders: each is played twice on a fresh embedded
emulator (`awsview lab check --twice`, which starts its own) and every step's verify scripts and
checkpoints hold in both runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BUILTIN = Path(__file__).parents[2] / "labs"


@pytest.mark.parametrize("lab", ["ev05", "q05"])
def test_lab_check_of_a_built_in_lab_folder_passes_twice(lab: str):
    done = subprocess.run(
        [sys.executable, "-m", "awsview", "lab", "check", str(BUILTIN / lab), "--twice"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{lab} run 2" in done.stdout
    assert f"lab check {lab}: " in done.stdout and " passed, 4 steps × 2 runs" in done.stdout
