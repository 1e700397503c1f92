"""The class view driven with Pilot against real emulators: one learner halfway through q05, one
who has done nothing, one whose endpoint does not answer; presenter mode; the command line."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.command import CommandPalette

from awsview.classroom.monitor import Learner, LearnerStatus
from awsview.core.checkpoints import CheckResult
from awsview.labs.player import LabPlayer
from awsview.labspec import Checkpoint
from awsview.ui.classview.cards import card_content, columns_for, summary
from awsview.ui.classview.learner import LearnerScreen
from awsview.ui.classview.view import ClassApp, ClassHelpScreen, GridScreen, LearnerCard
from awsview.ui.themes import ThemeError
from awsview.ui.viewer.screens import DetailScreen
from tests.support.probe import rows, screen_lines, settle, view

pytestmark = pytest.mark.timeout(120)
DEAD = "http://127.0.0.1:9"


@pytest.fixture(scope="module")
def halfway(played_lab):
    """An emulator with q05 played up to its deploy step (connect and deploy done), its order
    written: shared with the other tests that only read it."""
    return played_lab("q05", "deploy")


@pytest.fixture(scope="module")
def untouched(spawn_emulator, tmp_path_factory):
    """A second learner's emulator: q05's fresh VM (its provided resources), no step done."""
    running = spawn_emulator(tmp_path_factory.mktemp("untouched"))
    LabPlayer("q05", endpoint_url=running.endpoint_url, log=lambda line: None).setup()
    yield running
    running.stop()


def class_of(halfway, untouched) -> tuple[Learner, ...]:
    return (
        Learner("Ada", halfway.endpoint_url),  # lab detected
        Learner("Bob [/bold]", untouched.endpoint_url, "q05"),
        Learner("Cy", DEAD, "q05"),
    )


def cards(app: ClassApp) -> dict[str, LearnerCard]:
    return app.grid.cards


async def until(pilot, predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("the class view did not get there in time")
        await pilot.pause(0.1)


def everyone_read(app: ClassApp) -> bool:
    return all(
        card.status is not None and (card.status.checkpoints or card.status.error)
        for card in cards(app).values()
    )


async def test_cards_show_step_marks_and_an_error_never_as_empty(halfway, untouched):
    app = ClassApp(class_of(halfway, untouched))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: everyone_read(app))
        await settle(pilot)
        ada, bob, cy = (cards(app)[n].text.splitlines() for n in ("Ada", "Bob [/bold]", "Cy"))
        assert ada[0] == f"q05 · {halfway.endpoint_url}"
        assert ada[1].startswith("step 2/4 deploy · Deploy Atomic Protection")
        assert ada[2] == "✓ ✓ ✗ · ·  2/5"  # on repeats; the cleanup is not reached yet
        assert ada[3].startswith("updated ")
        assert bob[1].startswith("no step done yet · next: Connect an Empty Queue")
        assert bob[2] == "✗ · · · ·  0/5"  # on the first step; nothing else is wrong yet
        assert cy[1] == "no checkpoints read yet"
        assert "error — connection refused" in " ".join(cy[2:])
        assert "✗" not in cards(app)["Cy"].text and "empty" not in cards(app)["Cy"].text
        assert cards(app)["Cy"].has_class("-error") and cards(app)["Ada"].has_class("-ok")
        lines = screen_lines(app)
        assert (
            lines[0]
            .strip()
            .startswith(
                "AWS View · class · 3 learners · 1 at deploy · 1 not started · 1 with errors"
            )
        )
        assert any(
            "Bob [/bold]" in line for line in lines
        )  # a name is shown as written, never as markup
        top = [line for line in lines if "╭" in line][
            0
        ]  # roster order, three side by side at 120 columns
        assert top.index("Ada") < top.index("Bob") < top.index("Cy")


async def test_enter_opens_the_learners_panels_and_escape_comes_back(halfway, untouched):
    app = ClassApp(class_of(halfway, untouched))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: everyone_read(app))
        assert app.focused is cards(app)["Ada"]
        await pilot.press("right")
        assert app.focused is cards(app)["Bob [/bold]"]
        await pilot.press("end")
        assert app.focused is cards(app)["Cy"]
        await pilot.press("home", "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LearnerScreen) and screen.learner.name == "Ada"
        await until(pilot, lambda: rows(screen, "checkpoints"))
        checkpoints = rows(screen, "checkpoints")
        assert [r[0] for r in checkpoints] == ["✓", "✓", "✗", "·", "·"]
        assert ("dedup-order", "quantity=4, total_cents=1100") in rows(
            screen, "tables:labex-q05-orders"
        )
        assert "Ada · q05: An idempotent SQS consumer" in screen_lines(app)[0]
        assert app.focused is view(screen, "checkpoints").table  # arrows move in the first panel
        await pilot.press("enter")  # a row's whole content, as in the viewer
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, GridScreen) and app.focused is cards(app)["Ada"]
        await pilot.click(LearnerCard, offset=(2, 2))  # a click on a card opens it too
        await settle(pilot)
        assert isinstance(app.screen, LearnerScreen)
        await pilot.press("escape")

        await pilot.press("end", "enter")  # a learner never reached: the panels' screen says why
        await settle(pilot)
        lines = screen_lines(app)
        assert isinstance(app.screen, LearnerScreen) and "error — connection refused" in lines[0]
        assert any(f"Nothing read from {DEAD} yet: connection refused" in line for line in lines)
        assert not any("waiting for the first poll" in line for line in lines)
        await pilot.press("escape", "question_mark")
        await settle(pilot)
        assert isinstance(app.screen, ClassHelpScreen)
        await pilot.press("escape", "q")
        await settle(pilot)
    assert app.return_code in (0, None)


async def test_a_learner_who_stops_answering_keeps_the_last_known_marks_as_stale(
    spawn_emulator, tmp_path
):
    running = spawn_emulator(tmp_path)
    try:
        app = ClassApp((Learner("Dee", running.endpoint_url, "q05"),))
        async with app.run_test(size=(70, 20)) as pilot:  # under 80 columns: one column
            card = cards(app)["Dee"]
            await until(pilot, lambda: card.status is not None and card.status.checkpoints)
            assert app.grid.columns == 1
            assert card.text.splitlines()[2] == "✗ · · · ·  0/5"  # nothing provided, nothing done
            read = card.status
            await until(
                pilot, lambda: card.status is not read
            )  # just after a round: stop between two
            running.stop()
            await until(pilot, lambda: card.status.stale)
            await until(
                pilot, lambda: card.text.splitlines()[3].startswith("stale ")
            )  # a freshness tick
            lines = card.text.splitlines()
            # The last known marks (a round cut short by the stop may have turned some to ?), never
            # cleared.
            kept = card.status.checkpoints
            assert len(kept) == 5
            assert (
                lines[2] == f"{' '.join(r.mark for r in kept)}  {card.status.passed}/5 · last known"
            )
            assert lines[3].startswith("stale ") and "connection refused" in lines[3]
            assert card.has_class("-stale") and "1 with errors" in screen_lines(app)[0]
    finally:
        running.stop()


async def test_presenter_mode_only_navigates(halfway):
    app = ClassApp(
        (Learner("Ada", halfway.endpoint_url, "q05"), Learner("Cy", DEAD, "q05")), presenter=True
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: everyone_read(app))
        theme = app.theme
        assert not app.use_command_palette
        for key in ("q", "ctrl+q", "ctrl+c", "ctrl+p", "t"):
            await pilot.press(key)
            await settle(pilot)
            assert app.is_running and isinstance(app.screen, GridScreen), key
            assert not isinstance(app.screen, CommandPalette) and app.theme == theme, key
        footer = screen_lines(app)[-1]
        assert "Quit" not in footer and "palette" not in footer
        await pilot.press(
            "question_mark"
        )  # help is looking, not touching: as on the viewer's presenter screen
        await settle(pilot)
        assert not isinstance(app.screen, GridScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, GridScreen)
        await pilot.press("right")
        assert app.focused is cards(app)["Cy"]
        await pilot.press("shift+tab", "enter")
        await settle(pilot)
        assert isinstance(app.screen, LearnerScreen)
        for key in ("q", "ctrl+q", "ctrl+p", "t"):
            await pilot.press(key)
            await settle(pilot)
            assert app.is_running and isinstance(app.screen, LearnerScreen), key
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, GridScreen) and app.is_running


def status(name: str, marks: tuple, step: str | None = None, **kwargs) -> LearnerStatus:
    steps = ["connect", "deploy", "repeats", "cleanup", "cleanup"]
    results = tuple(CheckResult(Checkpoint(s, s), m, "") for s, m in zip(steps, marks))
    return LearnerStatus(Learner(name, DEAD, "q05"), "q05", step, results, **kwargs)


def test_card_text_and_summary_without_a_screen():
    q05 = (
        ("connect", "Connect"),
        ("deploy", "Deploy"),
        ("repeats", "Repeats"),
        ("cleanup", "Clean up"),
    )
    done = status("a", (True,) * 5, "cleanup", updated_at=100.0)
    assert card_content(done.learner, done, q05, 103.0).plain.splitlines()[1:] == [
        "✓ all 4 steps done · Clean up",
        "✓ ✓ ✓ ✓ ✓  5/5",
        "updated 3 s ago",
    ]
    hostile = status(
        "[/bold]", (True, None), "connect", updated_at=100.0, error="[link=x]no[/link]"
    )
    text = card_content(hostile.learner, hostile, q05, 100.0).plain
    assert "? " in text and "updated 0 s ago · [link=x]no[/link]" in text
    never = LearnerStatus(
        Learner("c", DEAD), error="cannot use http://127.0.0.1:9 (us-east-1): connection refused"
    )
    assert card_content(never.learner, never, (), 0.0, width=30).plain.split("\n") == [
        f"lab ? · {DEAD}",
        "no checkpoints read yet",
        "error — connection refused",
        "",
    ]
    statuses = {
        "a": done,
        "b": status("b", (True, True, False), "deploy", updated_at=1.0),
        "c": never,
        "d": status("d", (False,), updated_at=1.0),
    }
    learners = tuple(Learner(n, DEAD) for n in "abcde")
    assert summary(learners, statuses, {n: q05 for n in "abd"}) == (
        "AWS View · class · 5 learners · 1 done · 1 at "
        "deploy · 1 not started · 1 connecting · 1 with errors"
    )
    assert [columns_for(w) for w in (60, 79, 80, 120, 200, 400)] == [1, 1, 2, 3, 5, 6]


def test_themes_are_awsview_s():
    assert ClassApp((Learner("a", DEAD),), theme="docs").theme == "awsview-docs"
    assert ClassApp((Learner("a", DEAD),)).theme == "awsview-dark"
    with pytest.raises(ThemeError):
        ClassApp((Learner("a", DEAD),), theme="no-such-theme")


@pytest.mark.parametrize(
    "text,problem",
    [
        ("[[learner\n", "class.toml"),
        (
            "[[learner]]\nname = 'a'\nendpoint_url = 'ftp://x'\n",
            "'learner[1].endpoint_url': ftp://x: unsupported scheme \"ftp\" (use http:// or https://)",
        ),
    ],
)
def test_a_malformed_roster_is_one_line_and_exit_2(
    awsview, tmp_path: Path, text: str, problem: str
):
    roster = tmp_path / "class.toml"
    roster.write_text(text)
    result = awsview("class", str(roster))
    assert result.returncode == 2
    assert problem in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_bad_theme_or_no_terminal_is_one_line_and_exit_2(awsview, tmp_path: Path):
    roster = tmp_path / "class.toml"
    roster.write_text(f"[[learner]]\nname = 'a'\nendpoint_url = '{DEAD}'\n")
    for args, problem in ((["--theme", "nope"], "unknown theme 'nope'"), ([], "needs a terminal")):
        result = awsview("class", str(roster), *args)
        assert result.returncode == 2 and problem in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
