"""docs/write-a-lab.md walks a lab author through a first lab, file by file: its files are
written from the page as it stands and the lab is checked twice, as the page says to."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

PAGE = Path(__file__).parents[2] / "docs" / "write-a-lab.md"
BLOCK = re.compile(
    r'^(?P<fence>`{3,})\w+ title="hello/(?P<name>[^"]+)"\n(?P<body>.*?)^(?P=fence)$', re.M | re.S
)


def write_the_page_lab(folder: Path) -> list[str]:
    names = []
    for block in BLOCK.finditer(PAGE.read_text(encoding="utf-8")):
        (folder / block["name"]).write_text(block["body"], encoding="utf-8")
        names.append(block["name"])
    # "verify2-1.sh and verify3-1.sh are the same with 2 and 3"; intro and finish are any text.
    one = (folder / "verify1-1.sh").read_text(encoding="utf-8")
    for step in (2, 3):
        (folder / f"verify{step}-1.sh").write_text(one.replace("verify 1 ", f"verify {step} "))
    (folder / "intro.md").write_text("# Hello\n")
    (folder / "finish.md").write_text("Done.\n")
    for script in folder.glob("*.sh"):
        script.chmod(0o755)
    return names


def test_the_page_names_every_file_of_its_lab(tmp_path: Path):
    names = write_the_page_lab(tmp_path)
    steps = ["step1.md", "step2.md", "step3.md"]
    files = ["index.json", "setup.sh", *steps, "verify1-1.sh", "awsview.toml"]
    assert sorted(names) == sorted(files)


def test_the_lab_of_the_page_passes_lab_check_twice(tmp_path: Path, awsview):
    folder = tmp_path / "hello"
    folder.mkdir()
    write_the_page_lab(folder)
    done = awsview("lab", "check", str(folder), "--twice", timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "lab check hello: 20 checks passed, 3 steps × 2 runs" in done.stdout
    runs = done.stdout.split("hello run 2")
    # Each run's timeline is its own: the second run's refused create is its only one.
    assert "NOW order-1: 1 rejected; order-1.status = PAID" in runs[0]
    assert "NOW order-1: 1 rejected; order-1.status = PAID" in runs[1], runs[1]
