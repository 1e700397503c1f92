"""`awsview docs DIR`: a copy of a built-in lab folder (ev05: executions to draw, and a ja/
translation) played twice on fresh emulators by the command line; its screenshots in assets/,
the links in both languages' step texts after the commands, the second run writing the same
texts and files and keeping what the author edited around the links. Bad input: one line, the
right exit status, nothing written."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from awsview.labspec.folder import builtin_dir
from tests.support import processes

LAB = "ev05"
# A real-looking account in the environment: the docs run must neither need it nor show it.
FOREIGN = {
    "AWS_PROFILE": "awsview-docs-no-such-profile",
    "AWS_ACCESS_KEY_ID": "AKIADOCSFOREIGNKEY01",
    "AWS_SECRET_ACCESS_KEY": "docs-foreign-secret-never-shown",
    "AWS_SESSION_TOKEN": "docs-foreign-token",
}
EXECUTIONS = ("after-write-order", "repeated-order", "different-order")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
AUTHOR = "A note the author added after the screenshot.\n"


def _docs(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return processes.awsview("docs", *args, timeout=timeout, env=FOREIGN)


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def played(starts_processes, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The lab folder copied, shot once; then the author edits around two blocks and the folder
    is shot again. What each run printed and what the folder held after each."""
    lab = tmp_path_factory.mktemp("docs") / LAB
    shutil.copytree(builtin_dir() / LAB, lab)
    original = _tree(lab)
    first = _docs(str(lab), timeout=400)
    assert first.returncode == 0, first.stderr
    after_first = _tree(lab)
    for text in (lab / "step3.md", lab / "ja" / "step2.md"):
        body = text.read_text(encoding="utf-8")
        text.write_text("<!-- the author's -->\n" + body + AUTHOR, encoding="utf-8")
    edited = _tree(lab)
    (lab / "assets" / "awsview-graph-gone.svg").write_text("<svg/>")  # an older run's
    second = _docs(str(lab), timeout=400)
    assert second.returncode == 0, second.stderr
    return {
        "lab": lab,
        "original": original,
        "first": first,
        "after_first": after_first,
        "edited": edited,
        "after_second": _tree(lab),
    }


def screen_lines(svg: Path) -> list[str]:
    """The text of an exported screen, line by line (the SVG has one <text> per styled run)."""
    lines: dict[float, list[tuple[float, str]]] = defaultdict(list)
    for x, y, text in re.findall(
        r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', svg.read_text()
    ):
        lines[float(y)].append((float(x), html.unescape(text).replace("\xa0", " ")))
    return ["".join(text for _, text in sorted(runs)) for _, runs in sorted(lines.items())]


def test_the_screenshots_are_in_the_labs_assets(played):
    lab = played["lab"]
    shots = sorted(p.name for p in (lab / "assets").glob("awsview-*"))
    assert shots == sorted(
        [f"awsview-step{n}.svg" for n in range(5)]
        + [f"awsview-graph-{name}.svg" for name in EXECUTIONS]
        + ["awsview-replay.svg"]
    )
    out = played["first"].stdout.splitlines()
    assert re.fullmatch(rf"{re.escape(str(lab))}: 9 screenshots in \d+\.\d s", out[-1]), out
    written = sorted(Path(line) for line in out[:-1])
    assert written == sorted(
        [lab / "assets" / name for name in shots]
        + [lab / f"step{n}.md" for n in range(1, 5)]
        + [lab / "ja" / f"step{n}.md" for n in range(1, 5)]
    )
    # Only the shots and the step texts changed; nothing else of the folder was touched.
    changed = {k for k, v in played["after_first"].items() if played["original"].get(k) != v}
    assert changed == {str(p.relative_to(lab)) for p in written}


def test_every_languages_step_texts_link_their_shot_after_the_commands(played):
    lab = played["lab"]
    index = json.loads((lab / "index.json").read_text())
    ja = index["i18n"][0]["details"]["steps"]
    for number, step in enumerate(index["details"]["steps"], start=1):
        for path, title, assets in (
            (lab / f"step{number}.md", step["title"], "assets"),
            (lab / "ja" / f"step{number}.md", ja[number - 1]["title"], "../assets"),
        ):
            text = played["after_first"][str(path.relative_to(lab))].decode()
            before = played["original"][str(path.relative_to(lab))].decode()
            link = f"![AWS View after step {number}: {title}]({assets}/awsview-step{number}.svg)"
            assert text.count("<!-- awsview:shot") == 1 and link in text, path
            block = text[text.index(f"<!-- awsview:shot step={number} -->") :]
            assert block.index("<!-- /awsview:shot -->") > block.index(link)
            last_fence = before.rindex("```bash")
            closing = before.index("```", last_fence + 3) + 3
            assert text.startswith(before[:closing]), path  # after the commands, which stay
    step3 = played["after_first"]["step3.md"].decode()
    for name in EXECUTIONS:  # the executions' graphs come with the step that ran them
        assert f"(assets/awsview-graph-{name}.svg)" in step3


def test_a_second_run_keeps_the_texts_and_the_authors_edits(played):
    after, edited = played["after_second"], played["edited"]
    # The same files: the older run's image it did not write again is gone.
    assert sorted(after) == sorted(edited) == sorted(played["after_first"])
    for name, data in edited.items():
        if name.endswith(".md"):
            assert after[name] == data, name  # byte for byte, the author's edits included
    assert after["step3.md"].decode().endswith(AUTHOR)
    assert after["ja/step2.md"].decode().startswith("<!-- the author's -->\n")
    # What the lab provides and the steps before its executions draw the same bytes; a shot
    # taken while workflow retries happen may show them at another attempt.
    for number in range(3):
        name = f"assets/awsview-step{number}.svg"
        assert after[name] == played["after_first"][name], f"{name} differs between two runs"


def test_the_last_shot_shows_the_cleanup_with_the_frozen_endpoint(played):
    screen = "\n".join(screen_lines(played["lab"] / "assets" / "awsview-step4.svg"))
    assert "http://127.0.0.1:5000" in screen  # what the lab hard-codes, not the emulator's port
    assert not re.search(r"127\.0\.0\.1:(?!5000\b)\d+", screen), screen
    assert re.search(r"✓ +cleanup", screen), screen
    assert "Traceback" not in screen
    # Read as the emulator's change feed named what moved: live, as a learner's viewer shows it.
    assert re.search(r"─ live ─╯", screen) and "just now" not in screen, screen


@pytest.mark.timeout(180)
def test_on_an_endpoint_without_a_change_feed_each_step_is_polled(stock_moto_url, tmp_path):
    """Stock moto has no change feed: a step is shot once every panel answered after it."""
    lab = _tiny_lab(tmp_path, "aws sqs create-queue --queue-name tiny-jobs --output text")
    done = _docs(str(lab), "--endpoint-url", stock_moto_url, timeout=150)
    assert done.returncode == 0, done.stderr
    assert "still changed" not in done.stderr, done.stderr  # each step settled in time
    before = "\n".join(screen_lines(lab / "assets" / "awsview-step0.svg"))
    after = "\n".join(screen_lines(lab / "assets" / "awsview-step1.svg"))
    assert "tiny-jobs" not in before and "tiny-jobs" in after, after
    assert "just now" in after and not re.search(r"─ live ─╯", after), after  # polled, not live


@pytest.mark.parametrize("execution", EXECUTIONS)
def test_a_graph_shot_is_the_execution_drawn_on_its_state_machine(played, execution):
    screen = screen_lines(played["lab"] / "assets" / f"awsview-graph-{execution}.svg")
    lines = [line.strip() for line in screen if line.strip()]
    assert lines[:2] == [f"Execution {execution}", "Graph of this execution"], screen
    assert "StoreOrder" in "\n".join(screen) and "(no such state)" not in "\n".join(screen)


def test_the_replay_shot_shows_the_run_with_its_time_line(played):
    screen = screen_lines(played["lab"] / "assets" / "awsview-replay.svg")
    assert screen[0].startswith(f"AWS View · replay · {LAB}.rec · {LAB}: ")
    assert any(re.search(r"frame (\d+)/(\d+)", line) for line in screen)


def test_a_foreign_account_is_neither_needed_nor_shown(played):
    for shot in (played["lab"] / "assets").glob("awsview-*"):
        text = shot.read_text()
        assert not any(value in text for value in FOREIGN.values()), shot.name


# -- bad input: one line, its exit status, nothing written ---------------------------------------


def _tiny_lab(root: Path, commands: str = "aws sqs list-queues") -> Path:
    """A lab folder of one step, no setup: quick to play."""
    lab = root / "tiny"
    (lab / "assets").mkdir(parents=True)
    (lab / "index.json").write_text(
        json.dumps(
            {
                "title": "Tiny",
                "details": {"steps": [{"title": "List", "text": "step1.md"}]},
                "i18n": [
                    {"lang": "ja", "details": {"steps": [{"title": "一覧", "text": "ja/step1.md"}]}}
                ],
            }
        )
    )
    (lab / "awsview.toml").write_text('prefix = "tiny-"\n[[steps]]\nkey = "list"\n')
    (lab / "step1.md").write_text(f"# List\n\n```bash\n{commands}\n```\n")
    (lab / "ja").mkdir()
    (lab / "ja" / "step1.md").write_text(f"# 一覧\n\n```bash\n{commands}\n```\n")
    return lab


def _refused(result: subprocess.CompletedProcess, status: int, words: str) -> None:
    assert result.returncode == status, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("awsview: "), result.stderr
    assert words in result.stderr and "Traceback" not in result.stderr, result.stderr


@pytest.mark.timeout(120)
def test_bad_folders_are_refused_before_anything_is_played(starts_processes, tmp_path):
    lab = _tiny_lab(tmp_path)
    outside = tmp_path / "outside.md"
    outside.write_text("# someone else's\n")
    before = _tree(lab)

    _refused(_docs(str(tmp_path)), 2, "has no index.json")
    _refused(_docs(LAB), 2, "is a built-in lab")

    (lab / "ja" / "step1.md").unlink()
    (lab / "ja" / "step1.md").symlink_to(outside)
    _refused(_docs(str(lab)), 2, "is a symbolic link")
    assert outside.read_text() == "# someone else's\n"
    (lab / "ja" / "step1.md").unlink()
    (lab / "ja" / "step1.md").write_bytes(before["ja/step1.md"])

    (lab / "step1.md").write_text("# List\n" + "x" * 2_000_000)
    _refused(_docs(str(lab)), 2, "far more than such a file holds")
    (lab / "step1.md").write_bytes(before["step1.md"])

    shutil.rmtree(lab / "assets")
    (lab / "assets").write_text("not a folder")
    _refused(_docs(str(lab)), 2, "assets: not a directory")
    (lab / "assets").unlink()
    (lab / "assets").mkdir()

    _refused(
        _docs(str(lab), "--endpoint-url", "https://sqs.us-east-1.amazonaws.com"),
        2,
        "not a local endpoint",
    )
    assert _tree(lab) == before


@pytest.mark.timeout(120)
def test_a_step_that_fails_is_one_line_and_writes_nothing(starts_processes, tmp_path):
    lab = _tiny_lab(tmp_path, "aws sqs get-queue-url --queue-name tiny-missing")
    before = _tree(lab)
    _refused(_docs(str(lab), timeout=110), 1, "tiny step 1/1 list: `aws sqs get-queue-url")
    assert _tree(lab) == before


@pytest.mark.timeout(60)
@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into any directory")
def test_an_assets_folder_that_cannot_be_written_is_one_line(starts_processes, tmp_path):
    lab = _tiny_lab(tmp_path)
    (lab / "assets").chmod(0o500)
    try:
        _refused(_docs(str(lab)), 1, "cannot write into")
    finally:
        (lab / "assets").chmod(0o700)
