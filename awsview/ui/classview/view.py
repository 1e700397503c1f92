"""The class view: one card per learner of a roster, live; enter opens a learner's lab panels.

`ClassMonitor` polls every learner in one worker (bounded concurrency, 1 s rounds); each
learner's new status comes as a `LearnerUpdated` message and updates that learner's card only.
In presenter mode (the class view served to a browser) only navigation keys do anything.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static

from awsview.classroom.monitor import ClassMonitor, Learner, LearnerStatus
from awsview.labspec import LabSpec
from awsview.ui import compat, keytable, themes
from awsview.ui.classview.cards import card_content, columns_for, lab_steps, state, summary
from awsview.ui.classview.learner import LearnerScreen
from awsview.ui.viewer import presenter
from awsview.ui.viewer.cells import alive, plain
from awsview.ui.viewer.commands import ThemeCommands
from awsview.ui.viewer.screens import HelpScreen

CARD_HEIGHT = 6  # four lines and the border


class LearnerUpdated(Message):
    """A learner's new status; an unhandled one for the same learner is replaced."""

    def __init__(self, status: LearnerStatus) -> None:
        super().__init__()
        self.status = status

    def can_replace(self, message: Message) -> bool:
        return (
            isinstance(message, LearnerUpdated)
            and message.status.learner.name == self.status.learner.name
        )


class LearnerCard(Widget, can_focus=True):
    """One learner at a glance: lab and endpoint, step reached, checkpoint marks, freshness."""

    class Chosen(Message):
        def __init__(self, card: LearnerCard) -> None:
            super().__init__()
            self.card = card

    def __init__(self, learner: Learner, clock: Callable[[], float]) -> None:
        super().__init__()
        self.learner = learner
        self.status: LearnerStatus | None = None
        self.steps: tuple[tuple[str, str], ...] = ()
        self._clock = clock
        self.border_title = plain(learner.name)

    def show(self, status: LearnerStatus, profile: LabSpec | None) -> None:
        self.status = status
        if profile is not None:
            self.steps = lab_steps(profile)
        look = state(status)
        for name in ("ok", "warn", "stale", "error"):
            self.set_class(look == name, f"-{name}")
        self.refresh(layout=True)

    def render(self) -> Content:
        return card_content(
            self.learner, self.status, self.steps, self._clock(), self.content_size.width
        )

    @property
    def text(self) -> str:
        """What the card says, as plain text (tests, screen readers of the future)."""
        return self.render().plain

    def on_click(self) -> None:
        self.focus()
        self.post_message(self.Chosen(self))


class GridScreen(Screen[None]):
    """The summary line and a grid of cards, in roster order; reflows with the terminal width."""

    BINDINGS = [
        Binding("left", "move(-1)", "Previous", show=False, id="class-left"),
        Binding("right", "move(1)", "Next", show=False, id="class-right"),
        Binding("up", "move('up')", "Up", show=False, id="class-up"),
        Binding("down", "move('down')", "Down", show=False, id="class-down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="class-page-up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="class-page-down"),
        Binding("home", "edge(0)", "First", show=False, id="class-first"),
        Binding("end", "edge(-1)", "Last", show=False, id="class-last"),
        Binding("enter", "open", "Open learner", id="open-learner"),
    ]

    def __init__(self, learners: tuple[Learner, ...], clock: Callable[[], float]) -> None:
        super().__init__()
        self.learners = learners
        self.cards = {learner.name: LearnerCard(learner, clock) for learner in learners}
        self.columns = 1

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        with VerticalScroll(id="cards", can_focus=False):
            yield from self.cards.values()
        yield Footer()

    def on_mount(self) -> None:
        self.reflow(self.app.size.width)
        self.show_summary({}, {})
        self._go(0)

    def on_resize(self) -> None:
        self.reflow(self.size.width)

    def reflow(self, width: int) -> None:
        self.columns = columns_for(width)
        grid = self.query_one("#cards")
        if grid.styles.grid_size_columns != self.columns:
            grid.styles.grid_size_columns = self.columns

    def show_summary(self, statuses: dict[str, LearnerStatus], steps: dict) -> None:
        self.query_one("#status", Static).update(plain(summary(self.learners, statuses, steps)))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return presenter.allows(self.app, action)

    # -- moving between cards ------------------------------------------------------------

    def _focused_index(self) -> int | None:
        cards = list(self.cards.values())
        return cards.index(self.focused) if self.focused in cards else None

    def _go(self, index: int) -> None:
        cards = list(self.cards.values())
        if cards:
            cards[max(0, min(len(cards) - 1, index))].focus()

    def action_move(self, step: int | str) -> None:
        here = self._focused_index()
        if here is None:
            self._go(0)
            return
        if step in ("up", "down"):
            step = self.columns if step == "down" else -self.columns
            if not 0 <= here + step < len(self.cards):
                return  # no card above or below: stay (left and right wrap to the next row)
        self._go(here + int(step))

    def action_page(self, direction: int) -> None:
        rows = max(1, self.query_one("#cards").size.height // CARD_HEIGHT)
        self._go((self._focused_index() or 0) + direction * rows * self.columns)

    def action_edge(self, end: int) -> None:
        self._go(0 if end == 0 else len(self.cards) - 1)

    def action_open(self) -> None:
        if isinstance(self.focused, LearnerCard):
            self.post_message(LearnerCard.Chosen(self.focused))


HELP = """\
# AWS View · class

Every learner of the roster, live and **read-only**: one card each, in roster order.

- The first line: the lab and the learner's endpoint.
- The step reached: the last step done in this lab run (its checkpoints held at some time in
  the run, or a later step's did).
- The checkpoints: ✓ done, ✗ the step the learner is on (or a done one now broken),
  · not reached yet, ? not knowable from here; then how many are done.
- Freshness: `updated 1 s ago`; `error — …` when the endpoint never answered;
  `stale 12 s — …` when it stopped answering (the marks are then the last known ones).

The line on top counts the learners per step, those done and those with errors.

## Keys

"""


CLASS_KEYS = """
Arrows, `tab` / `shift+tab` move between cards too. A learner's lab panels have the viewer's
keys for looking around: `]` / `[`, `z`, `enter`, `y`, `Y`, `o`; `escape` comes back.
"""


class ClassHelpScreen(HelpScreen):
    def text(self) -> str:
        return HELP + "\n".join(self.keys) + "\n" + CLASS_KEYS


class ClassApp(App[int]):
    CSS_PATH = ["../viewer/app.tcss", "classview.tcss"]
    TITLE = "AWS View · class"
    COMMANDS = App.COMMANDS | {ThemeCommands}
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark", "help", "Help", id="help"),
        Binding("t", "next_theme", "Theme", show=False, id="theme"),
    ]

    def __init__(
        self,
        learners: tuple[Learner, ...],
        *,
        theme: str | None = None,
        presenter: bool = False,
        refresh: float = 1.0,
        concurrency: int = 16,
        clock: Callable[[], float] = time.time,
        recording: Any = None,
        keymap: Mapping[str, str] | None = None,
        notice: str | None = None,
    ) -> None:
        # Before App.__init__, which adds the palette's key when this is true.
        self.ENABLE_COMMAND_PALETTE = not presenter
        super().__init__()
        self.awsview_themes = themes.install(self, theme)
        if keymap:
            self.set_keymap(dict(keymap))
        self.notice = notice  # one line to show once started (a keymap entry left out)
        self.learners = learners
        self.presenter = presenter
        self.clock = clock
        self.statuses: dict[str, LearnerStatus] = {}
        self.steps: dict[str, tuple[tuple[str, str], ...]] = {}
        self.recording = (
            recording  # awsview.recording.follow.ClassRecorder: every learner's model, recorded
        )

        def update(status: LearnerStatus) -> None:
            if recording is not None:
                recording.status(status)
            self.post_message(LearnerUpdated(status))

        self.monitor = ClassMonitor(
            learners,
            refresh=refresh,
            concurrency=concurrency,
            on_update=update,
            on_model=recording.model if recording is not None else None,
        )
        self.grid = GridScreen(learners, clock)
        self._follow_worker = None

    def get_default_screen(self) -> Screen:
        return self.grid

    def on_mount(self) -> None:
        if self.notice:
            self.notify(self.notice, severity="warning", timeout=8, markup=False)
        self._follow_worker = self._follow()
        self.set_interval(1.0, self._tick)

    async def on_unmount(self) -> None:
        if self._follow_worker is not None:
            self._follow_worker.cancel()
            with suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._follow_worker.wait(), 2.0)
        await self.monitor.close()

    @work(exclusive=True, group="class", exit_on_error=False)
    async def _follow(self) -> None:
        try:
            await self.monitor.run()
        except Exception as exc:  # the cards keep what they had; say plainly that following stopped
            self.grid.query_one("#status", Static).update(
                plain(f"AWS View · class · stopped: {exc}")
            )
            raise

    def on_learner_updated(self, message: LearnerUpdated) -> None:
        status = message.status
        name = status.learner.name
        lab = self.monitor.lab(name)
        self.statuses[name] = status
        if lab is not None:
            self.steps[name] = lab_steps(lab[0])
        card = self.grid.cards.get(name)
        if card is not None and alive(card):
            card.show(status, lab[0] if lab else None)
        if alive(self.grid):
            self.grid.show_summary(self.statuses, self.steps)
        if isinstance(self.screen, LearnerScreen) and self.screen.learner.name == name:
            self.screen.refresh_panels(status)

    def _tick(self) -> None:
        """Freshness moves on between polls ("updated 3 s ago"), and a dead endpoint's too."""
        for card in self.grid.cards.values():
            card.refresh()
        if isinstance(self.screen, LearnerScreen):
            self.screen.refresh_panels()  # one under a detail screen catches up when shown again

    def on_learner_card_chosen(self, message: LearnerCard.Chosen) -> None:
        learner = message.card.learner
        screen = LearnerScreen(learner, self.monitor, self.clock)
        screen.status = self.statuses.get(learner.name)
        self.push_screen(screen)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return presenter.allows(self, action)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            bindings = [*GridScreen.BINDINGS, *LearnerScreen.BINDINGS, *ClassApp.BINDINGS]
            self.push_screen(
                ClassHelpScreen(keys=keytable.table(bindings, compat.keymap_in_force(self)))
            )

    def action_next_theme(self) -> None:
        self.theme = themes.following(self.awsview_themes, self.theme)
        self.notify(f"theme {self.theme}", timeout=2)
