"""`awsview replay FILE`: the viewer on a recording, with a time line.

The same app as `awsview watch` (same panels, details, filter, zoom), fed from a recording
instead of pollers: its clock is the recording's, so ages and durations read as they did then.
The time line under the panels says where it is and what is coming: checkpoint changes (◆)
and write decisions (•) along the recording.

Keys: space play / pause · `.` / `,` one frame forward / back · `+` / `-` faster / slower ·
`n` / `N` next / previous checkpoint change or write decision · `g` / `G` start / end.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from textual.binding import Binding
from textual.widgets import Static

from awsview.core.rowref import Where
from awsview.model.state import LabState
from awsview.recording.file import (
    CHECKPOINTS,
    DECISION,
    PROFILE,
    ChannelPlayer,
    Recording,
    RecordingError,
)
from awsview.recording.moments import unshowable
from awsview.ui import compat
from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
from awsview.ui.viewer.cells import alive, plain

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
PLAY_TICK_S = 0.1
JUMPS = CHECKPOINTS | DECISION | PROFILE


def clock_text(moment: float) -> str:
    return datetime.fromtimestamp(moment).strftime("%H:%M:%S")


def span_text(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return (
        f"{hours}:{rest // 60:02d}:{rest % 60:02d}"
        if hours
        else f"{rest // 60:02d}:{rest % 60:02d}"
    )


REPLAY_HELP = """
## Replay

This screen replays a recording: what the viewer showed, frame by frame, on the recording's own
clock (ages and durations read as they did then). Nothing is polled.

On the time line, ◆ marks a checkpoint change and • a write decision.
"""


class TimeLine(Static):
    """Two lines: where the replay is, and the recording as a bar with its marks."""

    DEFAULT_CSS = """
    TimeLine {
        width: 100%;
        height: 2;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        background: $panel;
        color: $foreground;
    }
    """


class ReplayApp(AWSViewApp):
    """The viewer over one channel of a recording."""

    SWITCHES = False  # a recording shows what it recorded: no lab, profile or region to switch

    BINDINGS = [
        Binding("space", "replay_toggle", "Play/pause", id="replay-play"),
        Binding("full_stop", "replay_step(1)", "Step", id="replay-step"),
        Binding("comma", "replay_step(-1)", "Back", show=False, id="replay-step-back"),
        Binding("plus,equals_sign", "replay_speed(1)", "Faster", id="replay-faster"),
        Binding("minus", "replay_speed(-1)", "Slower", show=False, id="replay-slower"),
        Binding("n", "replay_jump(1)", "Next mark", id="replay-next-mark"),
        Binding("N", "replay_jump(-1)", "Previous mark", show=False, id="replay-previous-mark"),
        Binding("g", "replay_edge(0)", "Start", show=False, id="replay-start"),
        Binding("G", "replay_edge(1)", "End", show=False, id="replay-end"),
    ]

    def __init__(
        self,
        player: ChannelPlayer,
        *,
        start: int = 0,
        moment: float | None = None,
        options: ViewerOptions | None = None,
        deterministic: Any = None,
    ):
        self.player = player
        self.index = max(0, min(start, player.last))
        self.moment = player.marks[self.index].time if moment is None else moment
        self.playing = False
        self.speed = 1.0
        self.broken: str | None = None  # why the replay stopped: a frame of the file is malformed
        self._played_at = time.monotonic()
        state = player.state(self.index)
        super().__init__(
            model=LabState(snapshots=state.snapshots),
            profile=state.profile,
            # Ages are counted to the moment shown, not to now.
            options=replace(options or ViewerOptions(), clock=lambda: self.moment),
            deterministic=deterministic,  # the docs capture: the same screen on every run
        )
        self.status = state.status
        self._recorded_profile = state.profile

    # -- layout ----------------------------------------------------------------------------

    def compose(self):
        for widget in super().compose():
            yield widget
            if widget is self.board:
                yield TimeLine(id="timeline")  # under the panels, above the (docked) footer

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(PLAY_TICK_S, self._play)
        self._show_time()

    @property
    def recording(self) -> Recording:
        return self.player.recording

    # -- moving ----------------------------------------------------------------------------

    def go(self, index: int, moment: float | None = None) -> None:
        """Show the recording right after frame ``index`` (at ``moment``, default its time)."""
        index = max(0, min(index, self.player.last))
        try:
            state = self.player.state(index)
        except RecordingError as exc:
            # Said once the screen is gone (awsview.cli.replay), as every other bad file is.
            self.broken = str(exc)
            self.playing = False
            self.exit(return_code=1)
            return
        self.index = index
        self.moment = state.time if moment is None else moment
        if state.profile != self._recorded_profile:
            self._recorded_profile = state.profile
            self._attach_model(state.profile, LabState(snapshots=state.snapshots))
        else:
            self.model.snapshots = state.snapshots
        self.status = state.status
        self._show_status()
        self.refresh_panels()
        self._show_time()

    def refresh_panels(self) -> None:
        # The reader checks each value's type, not which kind of data a snapshot holds: a
        # recorded snapshot no poller could make ends the replay with one line, like a
        # malformed frame, instead of a traceback from its renderer.
        try:
            super().refresh_panels()
        except Exception as exc:
            if self.broken is None:
                self.broken = str(unshowable(self.player, self.index, exc))
            self.playing = False
            self.exit(return_code=1)

    def _play(self) -> None:
        now = time.monotonic()
        elapsed, self._played_at = now - self._played_at, now
        if not self.playing:
            return
        self.moment += elapsed * self.speed
        marks = self.player.marks
        target = self.index
        while target < self.player.last and marks[target + 1].time <= self.moment:
            target += 1
        if target >= self.player.last and self.moment >= marks[self.player.last].time:
            self.playing = False  # the end: stay on the last frame
            self.moment = marks[self.player.last].time
        if target != self.index:
            self.go(target, self.moment)
        else:
            self.refresh_panels()  # ages move on with the replay's clock
            self._show_time()

    def action_replay_toggle(self) -> None:
        if not self.playing and self.index >= self.player.last:
            self.go(0)  # at the end, play starts over
        self.playing = not self.playing
        self._played_at = time.monotonic()
        self._show_time()

    def action_replay_step(self, step: int) -> None:
        self.playing = False
        self.go(self.index + step)

    def action_replay_speed(self, step: int) -> None:
        position = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - self.speed))
        self.speed = SPEEDS[max(0, min(len(SPEEDS) - 1, position + step))]
        self._show_time()

    def action_replay_jump(self, step: int) -> None:
        """The next (or previous) frame that changed a checkpoint mark or added a decision."""
        marks = self.player.marks
        found = None
        if step > 0:
            found = next(
                (m.index for m in marks[self.index + 1 : self.player.last + 1] if m.flags & JUMPS),
                None,
            )
        else:
            found = next((m.index for m in reversed(marks[: self.index]) if m.flags & JUMPS), None)
        if found is None:
            self.notify(
                "no further checkpoint change or write decision"
                if step > 0
                else "no earlier checkpoint change or write decision",
                timeout=2,
            )
            return
        self.playing = False
        self.go(found)

    def action_replay_edge(self, end: int) -> None:
        self.playing = False
        self.go(self.player.last if end else 0)

    def where(self) -> Where:
        """Where the recording was made: `Y` and `o` point there."""
        info = self.player.info
        return Where(
            info.get("region") or info.get("target_region"),
            info.get("endpoint_url"),
            info.get("profile"),
        )

    def action_help(self) -> None:
        from awsview.ui import keytable
        from awsview.ui.viewer.app import viewer_bindings
        from awsview.ui.viewer.screens import HelpScreen

        replay_keys = "\n".join(keytable.table(ReplayApp.BINDINGS, compat.keymap_in_force(self)))
        self.push_screen(
            HelpScreen(
                backend=REPLAY_HELP + "\n" + replay_keys + "\n",
                keys=keytable.table(viewer_bindings(), compat.keymap_in_force(self)),
            )
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action.startswith("replay_") and self.screen is not self.screen_stack[0]:
            return False  # a detail or help screen is on top
        return super().check_action(action, parameters)

    # -- what it says ----------------------------------------------------------------------

    def _show_status(self) -> None:
        if not alive(self.board):
            return
        level, text = self.status
        lab = f"{self.profile.name}: {self.profile.title}" if self.profile else "no lab yet"
        parts = ["AWS View · replay", self.recording.path.name, lab, text]
        if self.needle:
            parts.append(f"filter “{self.needle}”")
        line = " · ".join(p for p in parts if p)
        # `awsview docs`: the emulator's port, as on its other pages
        if self.deterministic is not None:
            line = self.deterministic.text(line)
        status = self.query_one("#status", Static)
        status.update(plain(line))
        status.set_class(level == "error", "-error")

    def _show_time(self) -> None:
        if not alive(self.board):
            return
        line = self.query_one(TimeLine)
        marks = self.player.marks
        first, last = marks[0].time, marks[self.player.last].time
        state = "▶" if self.playing else "‖"
        head = (
            f"{state} {self.speed:g}×  {clock_text(self.moment)}  "
            f"+{span_text(self.moment - first)} of "
            f"{span_text(last - first)}  frame {self.index + 1}/{self.player.last + 1}"
        )
        if (
            self.deterministic is not None
        ):  # its clock as the panels' (12:<step>:00); spans and frames stay
            head = self.deterministic.text(head)
        keys = "space play · , . step · - + speed · n N marks · g G ends"
        width = max(10, self.size.width - 3)
        top = head if cell_len(head) + 3 + cell_len(keys) > width else f"{head}   {keys}"
        line.update(plain(top + "\n" + bar(self.player, self.index, width), keep_newlines=True))


def bar(player: ChannelPlayer, index: int, width: int) -> str:
    """The recording in ``width`` cells: ◆ checkpoint changes, • write decisions, ● here."""
    marks = player.marks[: player.last + 1]
    first, last = marks[0].time, marks[-1].time
    span = max(last - first, 1e-9)

    def cell(moment: float) -> int:
        return min(width - 1, int((moment - first) / span * (width - 1)))

    cells = ["─"] * width
    for mark in marks:
        if mark.flags & DECISION and cells[cell(mark.time)] == "─":
            cells[cell(mark.time)] = "•"
    for mark in marks:
        if mark.flags & (CHECKPOINTS | PROFILE):
            cells[cell(mark.time)] = "◆"
    here = cell(marks[index].time)
    for i in range(here):
        if cells[i] == "─":
            cells[i] = "━"
    cells[here] = "●"
    return "".join(cells)


def open_player(path: Path, learner: str | None = None) -> ChannelPlayer:
    """The channel to replay: the only one, or the named learner's (class recordings)."""
    recording = Recording(path)
    player = recording.player(recording.channel_named(learner))
    player.state(player.last)  # a malformed end is one line now, not a stop in mid-replay
    return player
