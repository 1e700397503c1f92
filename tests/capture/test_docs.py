"""`awsview docs`: a lab played on a fresh in-process emulator, one screenshot per step, the same
bytes on every run — from the command line and from `generate` called twice in one process."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

import pytest

from awsview.labs import get_lab

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

LAB = "q05"  # the quickest of the three to play
# A real-looking account in the environment: the docs run must neither need it nor show it.
FOREIGN = {
    "AWS_PROFILE": "awsview-docs-no-such-profile",
    "AWS_ACCESS_KEY_ID": "AKIADOCSFOREIGNKEY01",
    "AWS_SECRET_ACCESS_KEY": "docs-foreign-secret-never-shown",
    "AWS_SESSION_TOKEN": "docs-foreign-token",
}

IN_PROCESS = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    from awsview.capture.docs import generate

    before = dict(os.environ)
    runs = [[str(p) for p in generate(sys.argv[1], Path(d))] for d in sys.argv[2:]]
    print(json.dumps({"runs": runs, "environment_restored": dict(os.environ) == before}))
""")


@pytest.fixture(scope="module")
def pages(starts_processes, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The lab's pages made three times: by the command line, and twice by `generate` in one
    process (the second emulator in a process must start as fresh as the first). The two
    processes run side by side, which also shows the pages do not depend on the machine's load."""
    base = tmp_path_factory.mktemp("docs")
    dirs = {name: base / name for name in ("cli", "api-1", "api-2")}
    env = {**os.environ, **FOREIGN}
    cli = subprocess.Popen(
        [sys.executable, "-m", "awsview", "docs", LAB, "-o", str(dirs["cli"])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    api = subprocess.Popen(
        [sys.executable, "-c", IN_PROCESS, LAB, str(dirs["api-1"]), str(dirs["api-2"])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    cli_out, cli_err = cli.communicate(timeout=240)
    api_out, api_err = api.communicate(timeout=240)
    assert cli.returncode == 0, cli_err
    assert api.returncode == 0, api_err
    lines = cli_out.splitlines()
    assert re.fullmatch(rf"{LAB}: 6 screenshots in \d+\.\d s", lines[-1]), cli_out
    assert sorted(Path(line) for line in lines[:-1]) == sorted(dirs["cli"].iterdir()), (
        "each file printed"
    )
    report = json.loads(api_out.splitlines()[-1])
    assert report["environment_restored"], "generate() left os.environ changed"
    assert [[Path(p).name for p in run] for run in report["runs"]] == [
        [Path(line).name for line in lines[:-1]]
    ] * 2
    return dirs


def screen_lines(svg: Path) -> list[str]:
    """The text of an exported screen, line by line (the SVG has one <text> per styled run)."""
    lines: dict[float, list[tuple[float, str]]] = defaultdict(list)
    for x, y, text in re.findall(
        r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', svg.read_text()
    ):
        lines[float(y)].append((float(x), html.unescape(text).replace("\xa0", " ")))
    return ["".join(text for _, text in sorted(runs)) for _, runs in sorted(lines.items())]


def test_every_run_writes_the_same_bytes(pages):
    names = sorted(p.name for p in pages["cli"].iterdir())
    for other in ("api-1", "api-2"):
        assert sorted(p.name for p in pages[other].iterdir()) == names
        for name in names:
            if name == "replay.svg":
                continue  # a live recording: its frame count and times are the run's own
            assert (pages[other] / name).read_bytes() == (pages["cli"] / name).read_bytes(), (
                f"{other}/{name} differs"
            )


def test_one_image_per_step_and_an_index_that_lists_them(pages):
    lab = get_lab(LAB)
    images = sorted(p.name for p in pages["cli"].glob("*.svg"))
    assert images == ["00-setup.svg"] + [
        f"{n:02d}-{s.key}.svg" for n, s in enumerate(lab.steps, start=1)
    ] + ["replay.svg"]  # q05 runs no state machine: no graph pages
    index = (pages["cli"] / "index.md").read_text()
    assert index.startswith(f"# {LAB}: {lab.title}\n")
    for number, step in enumerate(lab.steps, start=1):
        assert (
            f"## {number}. {step.title}\n\n![{LAB} {step.key}]({number:02d}-{step.key}.svg)"
            in index
        )


def test_the_last_shot_shows_the_cleanup_done_and_the_decisions_kept(pages):
    screen = "\n".join(screen_lines(pages["cli"] / "04-cleanup.svg"))
    assert re.search(r"✓ +cleanup +no queue, no mapping, no orders; past decisions kept", screen), (
        screen
    )
    assert "no queues" in screen and "no items" in screen  # the queue and both orders are gone
    assert (
        "1 write · 2 duplicates · 0 overwrites · 1 delete ✓" in screen
    )  # what happened stays shown
    # Volatile values are frozen: the emulator's port, clock times, request ids.
    assert "http://127.0.0.1:5000 · us-east-1 · account" in screen
    assert re.search(r"held at 12:03:00", screen), screen


def test_shots_in_between_show_their_own_step(pages):
    screen = "\n".join(screen_lines(pages["cli"] / "03-repeats.svg"))
    assert re.search(r"✓ +repeats +2 duplicates rejected", screen), screen
    assert re.search(r"✗ +cleanup", screen), screen  # the step the learner is on now
    assert "on step 4/4 cleanup" in screen.splitlines()[0]
    assert "1 write · 2 duplicates · 0 overwrites ✓" in screen


def test_a_step_not_reached_yet_is_dim_never_red(pages):
    screen = "\n".join(screen_lines(pages["cli"] / "00-setup.svg"))
    assert "on step 1/4 connect" in screen.splitlines()[0]
    assert re.search(
        r"✗ +connect +empty queue mapped to the worker.* +no queue labex-q05-jobs yet", screen
    ), screen
    for step in ("deploy", "repeats", "cleanup"):
        assert re.search(rf"· +{step} ", screen), step
    assert not re.search(r"✓ +cleanup", screen)  # an empty account does not count as cleaned up
    svg = (pages["cli"] / "01-connect.svg").read_text()
    fills = dict(re.findall(r"\.([\w-]+) \{ fill: (#[0-9a-f]{6})", svg))
    marks = {
        text: fills[cls]
        for cls, text in re.findall(r'<text class="([\w-]+)"[^>]*>(?:&#160;)*([✗·])', svg)
    }
    assert marks["·"] != marks["✗"], marks


def test_a_foreign_account_is_neither_needed_nor_shown(pages):
    for page in pages["cli"].iterdir():
        text = page.read_text()
        assert not any(value in text for value in FOREIGN.values()), page.name


def _docs(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "awsview", "docs", *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.timeout(60)
def test_an_unknown_lab_is_one_line_naming_the_labs(starts_processes, tmp_path):
    result = _docs("q99", "-o", str(tmp_path / "out"))
    assert result.returncode == 2
    known = "dlq, ev04, ev05, lambda-diagnose, q05"  # every lab folder found, built-in ones too
    assert result.stderr == f"awsview: unknown lab 'q99'; known labs: {known}\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.timeout(60)
def test_an_output_that_cannot_be_a_directory_is_one_line(starts_processes, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    for output, reason in ((blocker, "is a file"), (blocker / "sub", "Not a directory")):
        result = _docs(LAB, "-o", str(output))
        assert result.returncode == 1, result.stderr
        assert (
            reason in result.stderr
            and result.stderr.count("\n") == 1
            and "Traceback" not in result.stderr
        )


# -- the docs' graph and replay screenshots: ev04 --------------------------------------------------

EV04_STATES = ("CheckQuantity", "StoreOrder", "ReadSummary", "Rejected")
EV04_MARKS = {  # each execution at a glance, as the graph in the viewer draws it
    "retry-order": [
        "✓ StoreOrder ×2",
        "✓ succeeded on attempt 2 after TransientOrderError",
        "✓ ReadSummary",
        "· Rejected",
    ],
    "permanent-order": [
        "↪ StoreOrder",
        "↪ InvalidOrder caught → Rejected",
        "· ReadSummary",
        "✗ Rejected",
        "✗ the execution failed here",
    ],
    "denied-order": [
        "✗ StoreOrder",
        "✗ failed: Lambda.AWSLambdaException",
        "· ReadSummary",
        "· Rejected",
    ],
}


@pytest.fixture(scope="module")
def ev04_pages(starts_processes, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`make screenshots`: ev04 played on a fresh emulator by the command line."""
    out = tmp_path_factory.mktemp("docs-ev04") / "ev04"
    result = subprocess.run(
        [sys.executable, "-m", "awsview", "docs", "ev04", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=280,
        env={**os.environ, **FOREIGN},
    )
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"ev04: 9 screenshots in \d+\.\d s", result.stdout.splitlines()[-1]), (
        result.stdout
    )
    return out


def test_ev04_docs_have_each_executions_graph_and_the_replay(ev04_pages):
    names = sorted(p.name for p in ev04_pages.iterdir())
    assert names == sorted(
        [
            "00-setup.svg",
            "01-authorize.svg",
            "02-workflow.svg",
            "03-executions.svg",
            "04-cleanup.svg",
            "graph-retry-order.svg",
            "graph-permanent-order.svg",
            "graph-denied-order.svg",
            "replay.svg",
            "index.md",
        ]
    )
    assert all(p.stat().st_size > 10_000 for p in ev04_pages.glob("*.svg"))
    index = (ev04_pages / "index.md").read_text()
    assert "## State machine graphs" in index and "## Replay" in index
    for name in EV04_MARKS:
        assert (
            f"### Execution {name} on its state machine\n\n![ev04 graph-{name}](graph-{name}.svg)"
            in index
        )
    assert "![ev04 replay](replay.svg)" in index


@pytest.mark.parametrize("execution", list(EV04_MARKS))
def test_a_graph_shot_is_the_execution_drawn_on_its_state_machine(ev04_pages, execution):
    screen = "\n".join(screen_lines(ev04_pages / f"graph-{execution}.svg"))
    lines = [line.strip() for line in screen.splitlines() if line.strip()]
    assert lines[:2] == [f"Execution {execution}", "Graph of this execution"], (
        screen
    )  # scrolled to it
    for state in EV04_STATES:
        assert state in screen, f"{state} not in\n{screen}"
    for mark in EV04_MARKS[execution]:
        assert mark in screen, f"{mark!r} not in\n{screen}"
    assert "Traceback" not in screen and "(no such state)" not in screen
    # Muted parts (state types, the legend) are drawn in a colour of their own, not the
    # background's.
    svg = (ev04_pages / f"graph-{execution}.svg").read_text()
    fills = dict(re.findall(r"\.([\w-]+) \{ fill: (#[0-9a-f]{6})", svg))
    legend = re.search(r'<text class="([\w-]+)"[^>]*>[^<]*succeeded', svg)
    assert legend and fills[legend.group(1)] != "#ffffff"  # the docs theme's background


def test_the_replay_shot_shows_the_run_with_its_time_line(ev04_pages):
    screen = screen_lines(ev04_pages / "replay.svg")
    text = "\n".join(screen)
    assert screen[0].startswith("AWS View · replay · ev04.rec · ev04: ")
    assert "http://127.0.0.1:5000" in screen[0]  # the emulator's port frozen, as on the other pages
    head = next(line for line in screen if "frame " in line)
    assert re.search(r"‖ 1×  12:03:00  \+\d\d:\d\d of \d\d:\d\d  frame (\d+)/(\d+)", head), head
    here, total = (int(n) for n in re.search(r"frame (\d+)/(\d+)", head).groups())
    assert 1 < here < total  # after the executions step, the cleanup still to come
    bar = screen[screen.index(head) + 1]
    assert "●" in bar and bar.count("◆") >= 3 and "━" in bar, bar
    for name in EV04_MARKS:
        assert name in text  # the executions panel as it was then
    assert "Traceback" not in text
