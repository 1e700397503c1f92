"""The AWS View app: the lab's panels, live, beside the learner's shell.

Two ways to feed it: a `Target` (the app connects, preflights, detects the lab and polls in a
worker) or a ready `LabState` and profile (tests, benchmarks, screenshots). Either way the model's
listener posts `ModelChanged`; the app renders the panels and diffs them into the board.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from awsview import labspec
from awsview.core.changes import ItemChanges
from awsview.core.feed import DEFAULT_CAP, PanelFeed
from awsview.core.rowref import Where
from awsview.model import keys
from awsview.model.snapshot import Health
from awsview.model.state import LabState
from awsview.ui import compat, keytable, themes
from awsview.ui.compat import action_name
from awsview.ui.viewer import rowkeys
from awsview.ui.viewer.board import PanelBoard
from awsview.ui.viewer.cells import alive, plain
from awsview.ui.viewer.commands import PanelCommands, switch_commands
from awsview.ui.viewer.panel import HIGHLIGHT_S, PanelTable, PanelView
from awsview.ui.viewer.presenter import Presenter, allows

if TYPE_CHECKING:  # the session (and botocore's exceptions) only once a target is polled
    from awsview.aws.session import Target

FILTER_DELAY_S = 0.15
FULL_GC_EVERY_S = 60.0  # a full collection about once a minute, in a quiet moment …
FULL_GC_QUIET_S = 5.0  # … (nothing changed for this long, so no change waits behind it)
FULL_GC_AT_LEAST_S = 600.0  # … and at least every ten minutes, quiet or not
DIAGNOSE_RETRY_S = 15.0  # the doctor's probe waits for an endpoint that does not answer yet
# A change round (render the model, diff the panels, then Textual's frame) costs ~20 ms of CPU
# with the big model, and a key that lands behind one waits for all of it. While keys or the
# mouse are in use (an input in the last INPUT_RECENT_S), rounds come at most this often, so few
# keys wait; what changed meanwhile is shown by the next round, within a second. Otherwise a
# change is shown at once (spacing rounds apart saves no CPU while a lab plays).
ROUND_WHILE_INPUT_S = 1.0
INPUT_RECENT_S = 0.5
# … and a round due while keys come waits for a pause this long after the last one (its answer
# is on the screen by then, and the round fits before a next key), unless what it shows has
# waited ROUND_WHILE_INPUT_S already: a round that started just before a key was what a slow
# key waited for.
INPUT_PAUSE_S = 0.04
INPUT = (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)


def round_wait(now: float, last_round: float, input_at: float, waiting_since: float) -> float:
    """Seconds until a change round (0: now), for a change waiting since ``waiting_since``: at
    once when no key or mouse event came in the last INPUT_RECENT_S; else ROUND_WHILE_INPUT_S
    after the last round and INPUT_PAUSE_S after the last input, unless the change has waited
    ROUND_WHILE_INPUT_S already."""
    if now - input_at >= INPUT_RECENT_S or now - waiting_since >= ROUND_WHILE_INPUT_S:
        return 0.0
    return max(0.0, last_round + ROUND_WHILE_INPUT_S - now, input_at + INPUT_PAUSE_S - now)


def _step_text(model: LabState | None) -> str:
    """``on step 2/4 deploy`` (and the lab run, once there is more than one)."""
    from awsview.core.checkpoints import progress
    from awsview.core.render import several_runs

    results = model.data(keys.CHECKPOINTS, ()) if model is not None else ()
    text = progress(tuple(results)).text if results else ""
    built = model.data(keys.TIMELINE) if model is not None else None
    if text and several_runs(built):
        text += f" · {built.run.label()}"
    return text


class ModelChanged(Message):
    """Some snapshots changed; consecutive ones collapse into one refresh."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ModelChanged)


@dataclass(frozen=True)
class ViewerOptions:
    """How the viewer looks and keeps time; the defaults are `awsview watch`'s. The docs capture
    and the tests pass fixed clocks and slow ticks so a screen reads the same on every run."""

    theme: str | None = None  # AWS View's or Textual's; ThemeError names the others
    cap: int = DEFAULT_CAP  # rows a panel shows before "… more"
    highlight_seconds: float = HIGHLIGHT_S  # how long a new row or changed cell stays lit
    tick_seconds: float = 1.0  # how often what the clock changes ("12 s ago") is redrawn
    poll_speed: float = 1.0  # multiplies the pollers' intervals (< 1 polls faster: tests)
    clock: Callable[[], float] = time.time  # the time ages are counted to
    monotonic: Callable[[], float] = time.monotonic  # when highlights fade
    remember: bool = False  # the theme and usage line picked are saved in config.toml
    show_usage: bool = False  # the status line counts the API calls and read units made
    notice: str | None = None  # one line to show once started (e.g. preferences ignored)
    keymap: Mapping[str, str] = field(default_factory=dict)  # binding id → keys (config.toml)


def viewer_bindings() -> list[Binding]:
    """The viewer's keys, as `?` and the key reference list them: the app's and a panel's."""
    return [*AWSViewApp.BINDINGS, *PanelTable.BINDINGS]


class AWSViewApp(App[int]):
    """The viewer. What it shows: a live endpoint (``target``, ``lab``, ``prefix``) or a model
    already built (``model``, ``profile``); how: ``options``; and its modes, each an object or
    None: ``presenter`` (a read-only screen), ``demo`` (a lab driver), ``deterministic`` (the same
    screen on every run), ``recorder`` (every model change into a recording)."""

    CSS_PATH = "app.tcss"
    TITLE = "AWS View"
    AUTO_FOCUS = None  # keys go to the app until the learner picks a panel (tab, ], click)
    COMMANDS = App.COMMANDS | {PanelCommands}
    SWITCHES = True  # the palette may switch lab, profile, region and theme (not in a replay)
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark", "help", "Help", id="help"),
        Binding("slash", "filter", "Filter", id="filter"),
        Binding("z", "zoom", "Zoom", id="zoom"),
        Binding("right_square_bracket", "cycle(1)", "Next panel", show=False, id="next-panel"),
        Binding(
            "left_square_bracket", "cycle(-1)", "Previous panel", show=False, id="previous-panel"
        ),
        Binding("t", "next_theme", "Theme", show=False, id="theme"),
        Binding("r", "earlier_runs", "Earlier runs", id="earlier-runs"),
        Binding("u", "usage", "Usage", show=False, id="usage"),
        *rowkeys.BINDINGS,
        Binding("escape", "back", "Back", show=False, id="back"),
        Binding("space", "demo_pause", "Pause/resume", id="demo-pause"),
        Binding("n", "demo_next", "Next step", id="demo-next"),
    ]

    def __init__(
        self,
        *,
        target: Target | None = None,
        lab: str | None = None,
        prefix: str = "",
        model: LabState | None = None,
        profile: labspec.LabSpec | None = None,
        options: ViewerOptions | None = None,
        presenter: Presenter | None = None,
        demo: Any = None,
        deterministic: Any = None,
        recorder: Any = None,
    ):
        super().__init__()
        options = options if options is not None else ViewerOptions()
        self.remember = options.remember
        self.notice = options.notice
        self.awsview_themes = themes.install(self, options.theme)
        if options.keymap:
            self.set_keymap(dict(options.keymap))
        self.target = target
        self.lab = lab
        self.prefix = prefix
        self.model = model
        self.profile = profile
        self.clock = options.clock
        self.demo = demo
        self.tick_seconds = options.tick_seconds
        self.poll_speed = options.poll_speed
        self.highlight_seconds = options.highlight_seconds
        self.monotonic = options.monotonic
        # awsview.core.determinism.Deterministic: what is shown is the same every run
        self.deterministic = deterministic
        self.presenter = presenter  # the read-only mode, or None
        self.recorder = recorder  # awsview.recording.follow.Recorder: every model change, recorded
        # awsview.doctor.diagnosis.Diagnosis: what this endpoint can tell
        self.diagnosis: Any = None
        self.feed = PanelFeed(options.cap)
        self.changes = ItemChanges()
        self.needle = ""
        self.all_runs = (
            False  # r: the write decisions and verdicts of every lab run, not just this one
        )
        self.step_text = ""  # which step the learner is on, for the status line
        self._earlier_runs = False  # the timeline has runs before the current one (r is offered)
        self.show_usage = options.show_usage
        self.status = ("ok", f"connecting to {target.describe()}…" if target else "")
        self.live = None
        self._filter_timer = None
        self._last_full_gc = time.monotonic()
        self._last_round = 0.0  # when the panels were last brought up to date (monotonic)
        self._round_timer: Any = None  # a round put off to keep rounds apart
        self._waiting_since: float | None = None  # since when a change waits for its round
        self._input_at = -INPUT_RECENT_S  # when the last key or mouse event came
        self._board = PanelBoard(self.highlight_seconds, self.monotonic, id="board")
        self._collector_paused = False  # the garbage collector, off until the first paint

    # -- layout ----------------------------------------------------------------------------

    def get_default_screen(self) -> Screen:
        # A key that moves a table's cursor changes two lines: they are drawn, not every
        # line of the fifteen panels beside them.
        return compat.crop_partial_updates(super().get_default_screen())

    def compose(self) -> ComposeResult:
        with Vertical(id="top"):
            yield Static(id="status")
            yield Static(id="banner")
        yield self._board
        yield Input(
            placeholder="filter every panel's rows (enter keeps it, escape clears it)", id="filter"
        )
        yield Footer()

    @property
    def board(self) -> PanelBoard:
        return self._board

    def on_mount(self) -> None:
        self.query_one("#banner").display = self.demo is not None
        self._show_filter(False)
        self.board.set_layout(self.size.width)
        if self.model is not None and self.profile is not None:
            self._attach_model(self.profile, self.model)
        if self.target is not None:
            self._poll()
            self._diagnose()
        if self.demo is not None:
            self.demo.attach(self)
            self._play_demo()
        self.set_interval(self.tick_seconds, self._tick)
        self.set_interval(1.0, self._age_memory)
        self._show_status()
        if self.notice:
            self.notify(self.notice, severity="warning", timeout=8, markup=False)

    def on_load(self) -> None:
        # No garbage collection until the first paint: building fifteen panels and their styles
        # makes many young collections, each walking what was just built, a good share of the
        # time to the first paint; the few cycles made meanwhile wait for its return.
        self._collector_paused = gc.isenabled()
        gc.disable()

    def on_ready(self) -> None:
        self.call_after_refresh(self._resume_collector)  # after the first full paint

    def _resume_collector(self) -> None:
        if self._collector_paused:
            self._collector_paused = False
            gc.enable()

    def on_resize(self) -> None:
        if alive(self._board):
            self.board.set_layout(self.size.width)

    def on_unmount(self) -> None:
        if self.recorder is not None:
            self.recorder.close()
        self._resume_collector()
        gc.unfreeze()  # leave the process's collector as it was (tests run many apps in one)

    # -- the model -------------------------------------------------------------------------

    # Not `_attach`: Textual's MessagePump has a private one of that name.
    def _attach_model(self, profile: labspec.LabSpec, model: LabState) -> None:
        if self.model is not None and self._on_model_change in self.model.listeners:
            self.model.listeners.remove(self._on_model_change)
        if self.profile is not None and profile.name != self.profile.name and alive(self._board):
            self.board.clear_panels()
            self.changes = ItemChanges()
        self.profile, self.model = profile, model
        if self.recorder is not None:
            self.recorder.attach(profile, model)
        model.listeners.append(self._on_model_change)
        self._show_status()
        self.refresh_panels()

    def _tick(self) -> None:
        """Once a second: render again only if the screen shows something the clock changes."""
        if self._reads_clock():
            self._round()

    def _reads_clock(self) -> bool:
        """An age ("3 s ago", "stale 12 s — …"), a running execution's duration, or a panel
        that still has to learn what its first sight is. A live model with nothing running
        shows the same screen from one second to the next: rendering it again was most of
        the viewer's idle CPU."""
        if self.model is None or not alive(self._board):
            return False
        for snapshot in self.model.snapshots.values():
            if snapshot.health is Health.STALE or (
                snapshot.health is Health.OK and not snapshot.live
            ):
                return True
        if any(not view.seeded for view in self.board.views.values()):
            return True
        return any(
            e.running
            for s in self.model.with_prefix(keys.EXECUTIONS_PREFIX)
            for e in (s.data or ())
        )

    def _on_model_change(self, changed: list[Any]) -> None:
        self.post_message(ModelChanged())

    def on_model_changed(self, message: ModelChanged) -> None:
        self._round()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, INPUT):  # a mouse that only moves over the screen is not input
            self._input_at = time.monotonic()
        await super().on_event(event)

    def _round(self) -> None:
        """Bring the panels up to date now, or, while keys come, once a round is far enough
        behind."""
        now = time.monotonic()
        if self._waiting_since is None:
            self._waiting_since = now
        wait = round_wait(now, self._last_round, self._input_at, self._waiting_since)
        if wait <= 0:
            self.refresh_panels()
        elif self._round_timer is None:
            self._round_timer = self.set_timer(wait, self._round_due)

    @property
    def round_pending(self) -> bool:
        """A change waits for its round (put off to keep rounds apart)."""
        return self._round_timer is not None

    def _round_due(self) -> None:
        self._round_timer = None
        self._round()

    def refresh_panels(self) -> None:
        """Render the model and bring every panel up to date (also ticks the freshness).

        On the event loop, on purpose: windows keep a render to a few tens of milliseconds even
        with 100,000 log lines, and a render thread would make every key wait for the GIL.
        """
        if self.model is None or self.profile is None or not alive(self._board):
            return  # not composed yet, or closing
        self._last_round = time.monotonic()
        self._waiting_since = None
        if self._round_timer is not None:  # this round shows what it was waiting for
            self._round_timer.stop()
            self._round_timer = None
        self.changes.update(self.model)
        step = _step_text(self.model)
        if step != self.step_text:
            self.step_text = step
            self._show_status()
        built = self.model.data(keys.TIMELINE)
        earlier = bool(built is not None and built.earlier)
        if earlier != self._earlier_runs:
            self._earlier_runs = earlier
            self.refresh_bindings()
        shown = self.feed.panels(self.model, self.profile, self.clock(), self.needle, self.all_runs)
        if self.deterministic is not None:
            shown = [replace(s, panel=self.deterministic.panel(s.panel)) for s in shown]
        with self.batch_update():
            if self.show_usage:
                self._show_status()
            self.board.sync(
                shown, self.changes.for_panel, self.needle, waiting=not self.model.snapshots
            )
            if self.presenter:
                self.presenter.follow_newest(self)

    @work(exclusive=True, group="poll", exit_on_error=False)
    async def _poll(self) -> None:
        from awsview.polling.live import LivePolling

        self.live = LivePolling(
            self.target,
            self.lab,
            self.prefix,
            self._attach_model,
            self.set_status,
            speed=self.poll_speed,
            on_choose=self._choose_prefix,
        )
        try:
            await self.live.run()
        except Exception as exc:  # the panels keep what they had; say plainly that polling stopped
            self.set_status("error", f"polling stopped: {type(exc).__name__}: {exc}")
            raise

    @work(exclusive=True, group="doctor", exit_on_error=False)
    async def _diagnose(self) -> None:
        """`awsview doctor`'s probe, once the endpoint answers: a line in the status bar, the
        per-panel table in the help screen. Read calls only, a dozen, through its own connection."""
        import asyncio

        from awsview.doctor.diagnosis import diagnose
        from awsview.polling.bootstrap import PreflightError

        while True:
            try:
                self.diagnosis = await diagnose(self.target, self.lab, self.prefix)
            except PreflightError:
                await asyncio.sleep(DIAGNOSE_RETRY_S)  # the status line says why already
                continue
            except Exception:  # a probe that breaks must not break the viewer
                return
            self._show_status()
            return

    def _choose_prefix(self, found: list[tuple[str, int]]) -> None:
        """No known lab on an account: ask which resources to watch (a presenter screen cannot
        ask; its status line says to start it with --prefix)."""
        if not self.presenter:
            from awsview.ui.viewer.screens import PrefixScreen

            self.push_screen(PrefixScreen(found), self._prefix_chosen)

    def _prefix_chosen(self, prefix: str | None) -> None:
        if prefix and self.live is not None:
            self.prefix = prefix
            self.live.use_prefix(prefix)

    # -- switching (the command palette) ---------------------------------------------------

    @property
    def switchable(self) -> bool:
        """The palette offers its "Switch …" commands: never to a presenter screen or a replay."""
        return self.SWITCHES and not self.presenter

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            if command.title != "Theme":  # Textual's own: "Switch theme…" offers the viewer's
                yield command
        yield from switch_commands(self)

    def switch_lab(self, lab: str) -> None:
        """Show another lab's panels ("" for none: the prefix's resources); same endpoint."""
        self.lab = lab or None
        if self.live is not None:
            self.live.switch(lab)
        elif self.model is not None:
            self._attach_model(
                labspec.load(lab) if lab else labspec.generic_spec(self.prefix), self.model
            )

    def current_region(self) -> str | None:
        """The region polled, as the connection resolved it (else as asked)."""
        if self.live is not None and self.live.region:
            return self.live.region
        return self.target.region if self.target else None

    def switch_target(self, profile: str | None = None, region: str | None = None) -> None:
        """Poll through another AWS profile or in another region (the endpoint given on the
        command line stays). Checked as `awsview watch` checks at start; refused in one line
        when that check fails, the old target then polled on."""
        if self.target is None or not self.switchable:
            return
        from awsview.ui.viewer import switching  # the AWS session: not before a switch

        target = switching.retargeted(self.target, profile, region)
        if target != self.target:
            self._retarget(target)

    @work(exclusive=True, group="switch", exit_on_error=False)
    async def _retarget(self, target: Target) -> None:
        from awsview.ui.viewer import switching

        problem, announcement = await switching.check(target)
        if problem is not None:
            self.notify(f"cannot switch: {problem}", severity="error", timeout=10, markup=False)
            return
        await self.stop_polling()
        self.target = target
        if self.model is not None and self._on_model_change in self.model.listeners:
            self.model.listeners.remove(self._on_model_change)
        self.model = None
        self.profile = None  # the lab is detected (or loaded) again on the new target
        self.diagnosis = None
        self.changes = ItemChanges()
        self.feed = PanelFeed(self.feed.cap)
        if alive(self._board):
            self.board.clear_panels()
        self.status = ("ok", f"connecting to {target.describe()}…")
        self._show_status()
        if announcement:
            self.notify(announcement, severity="warning", timeout=10, markup=False)
        self._poll()
        self._diagnose()

    async def stop_polling(self) -> None:
        """Stop the pollers, their connection and the doctor's probe, and wait until they have
        (their clients closed, every task ended)."""
        from awsview.ui.viewer import switching

        await switching.stop_workers([w for w in self.workers if w.group in ("poll", "doctor")])
        self.live = None

    def _age_memory(self) -> None:
        """Keep Python's full garbage collections short.

        A big model (100,000 log lines, 10,000 items) makes each full collection take hundreds
        of milliseconds, and the pollers' fresh tuples trigger one every few seconds: a visible
        stall. Freezing
        moves what exists now out of the collector's sight (refcounting still frees replaced
        snapshots); a full collection once a minute picks up any cyclic garbage frozen
        meanwhile. Collecting the young generations before each freeze keeps what is frozen to
        what is alive: otherwise a minute of polls freezes its garbage too, and the next full
        collection takes far longer. The full collection waits for a quiet
        moment, so it never delays a change the learner is waiting to see.
        """
        now = time.monotonic()
        due = now - self._last_full_gc > FULL_GC_EVERY_S
        busy = self.model is not None and self.model.recently_changed(window=FULL_GC_QUIET_S)
        if due and (not busy or now - self._last_full_gc > FULL_GC_AT_LEAST_S):
            self._last_full_gc = now
            gc.unfreeze()
            gc.collect()
        else:
            gc.collect(1)  # the last second's cyclic garbage, before it is frozen (a few ms)
        gc.freeze()

    # -- status and banner -----------------------------------------------------------------

    def set_status(self, level: str, text: str) -> None:
        self.status = (level, text)
        if self.recorder is not None:
            if self.live is not None:  # first: the status line names the account
                self.recorder.meta(account=self.live.account, region=self.live.region)
            self.recorder.status(level, text)
        self._show_status()

    def _show_status(self) -> None:
        if not alive(self._board):
            return  # not composed yet, or closing
        level, text = self.status
        lab = f"{self.profile.name}: {self.profile.title}" if self.profile else "detecting the lab…"
        parts = [
            "AWS View" + (" · presenter (read-only)" if self.presenter else ""),
            lab,
            self.step_text,
            text,
        ]
        if self.diagnosis is not None:
            parts.append(self.diagnosis.summary)
        if self.all_runs:
            parts.append("every run (r)")
        if self.needle:
            parts.append(f"filter “{self.needle}”")
        if self.recorder is not None:
            parts.append(
                self.recorder.stopped or f"● recording {self.recorder.channel.writer.path.name}"
            )
        if self.show_usage:
            parts.append(self.usage())
        line = " · ".join(p for p in parts if p)
        if self.deterministic is not None:
            line = self.deterministic.text(line)
        status = self.query_one("#status", Static)
        status.update(plain(line))
        status.set_class(level == "error", "-error")

    def usage(self) -> str:
        """What watching has cost so far: API calls and DynamoDB read units."""
        conn = self.live.conn if self.live is not None else None
        if conn is None:
            return "no calls yet"
        limiter = conn.limiter
        return f"{limiter.total_calls:,} API calls · {limiter.total_read_units:,.1f} read units"

    def set_banner(self, text: str, level: str = "ok") -> None:
        if not alive(self._board):
            return
        banner = self.query_one("#banner", Static)
        banner.update(plain(text, keep_newlines=True))
        for name in ("ok", "paused", "error", "done"):
            banner.set_class(level == name, f"-{name}")

    @work(exclusive=True, group="demo", exit_on_error=False)
    async def _play_demo(self) -> None:
        await self.demo.run()

    # -- actions ---------------------------------------------------------------------------

    async def run_action(
        self, action: Any, default_namespace: Any = None, namespaces: Any = None
    ) -> bool:
        """Every key, click and footer action passes here: a presenter screen only navigates."""
        if self.presenter and not self.presenter.allows(
            action_name(self, action, default_namespace, namespaces)
        ):
            return False
        return await super().run_action(action, default_namespace, namespaces)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not allows(self, action):
            return False  # hidden from the footer too
        if action in ("demo_pause", "demo_next"):
            return self.demo is not None and not self.demo.finished
        if action == "earlier_runs":
            return self._earlier_runs or self.all_runs  # shown once there is an earlier run
        if action in ("filter", "zoom", "cycle") and self.screen is not self.screen_stack[0]:
            return False  # the board is hidden under a detail or help screen
        return True

    def action_help(self) -> None:
        from awsview.ui.viewer.screens import (
            HelpScreen,
        )  # not before the first paint: Markdown, pygments

        self.push_screen(
            HelpScreen(
                bool(self.presenter),
                self.diagnosis.markdown() if self.diagnosis else None,
                keys=keytable.table(
                    viewer_bindings(), compat.keymap_in_force(self), bool(self.presenter)
                ),
            )
        )

    def _show_filter(self, shown: bool) -> None:
        field = self.query_one("#filter", Input)
        field.display = shown
        field.disabled = not shown  # hidden, it must not take keys (q would type, not quit)

    def action_filter(self) -> None:
        self._show_filter(True)
        self.query_one("#filter", Input).focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(FILTER_DELAY_S, lambda: self._set_needle(event.value))

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self._set_needle(event.value)
        self._show_filter(False)
        self._refocus()

    def _set_needle(self, needle: str) -> None:
        needle = needle.strip()
        if needle != self.needle:
            self.needle = needle
            self._show_status()
            self.refresh_panels()

    def action_back(self) -> None:
        field = self.query_one("#filter", Input)
        if field.display:
            field.value = ""
            self._show_filter(False)
            self._set_needle("")
            self._refocus()
        elif self.board.zoomed is not None:
            self.board.zoom(None)
        elif self.needle:
            self._set_needle("")

    def _refocus(self) -> None:
        view = self.board.current or next(iter(self.board.ordered), None)
        if view is not None:
            self.board.visit(view)

    def action_zoom(self) -> None:
        board = self.board
        if board.zoomed is not None:
            board.zoom(None)
            return
        view = board.focused_view() or board.current or next(iter(board.ordered), None)
        if view is not None:
            board.zoom(view)
            board.visit(view)

    def action_cycle(self, step: int) -> None:
        self.board.cycle(step)

    def action_usage(self) -> None:
        self.show_usage = not self.show_usage
        self._show_status()
        self._remember(usage=self.show_usage)

    def action_next_theme(self) -> None:
        self.pick_theme(themes.following(self.awsview_themes, self.theme))
        self.notify(f"theme {self.theme}", timeout=2)

    def action_earlier_runs(self) -> None:
        """Show the write decisions and verdicts of every lab run (again: the current run only)."""
        self.all_runs = not self.all_runs
        self._show_status()
        self.refresh_panels()

    def pick_theme(self, name: str) -> None:
        """A theme the user picked (t, the palette): shown, and remembered for next time."""
        self.theme = name
        self._remember(theme=name)

    def _remember(self, **changes: Any) -> None:
        if self.remember and not self.presenter:
            from awsview.ui import preferences

            problem = preferences.save(**changes)
            if problem:
                self.notify(problem, severity="warning", timeout=5, markup=False)

    def where(self) -> Where:
        """Where the rows were read, for `Y` and `o`: as the connection resolved it once open."""
        target = self.target
        profile = target.profile if target else None
        endpoint = target.endpoint_url if target else None
        conn = self.live.conn if self.live is not None else None
        resolved = conn.resolved if conn is not None else None
        if resolved is None:
            return Where(target.region if target else None, endpoint, profile)
        if endpoint is None and not resolved.reaches_aws and resolved.endpoints:
            endpoint = resolved.endpoints[0][1]  # set in the AWS configuration, not on the line
        return Where(resolved.region, endpoint, profile)

    def action_copy_row(self) -> None:
        rowkeys.copy(self, self.board, self.model, self.where(), command=False)

    def action_copy_command(self) -> None:
        rowkeys.copy(self, self.board, self.model, self.where(), command=True)

    def action_open_row(self) -> None:
        rowkeys.open_row(self, self.board, self.model, self.where())

    def action_demo_pause(self) -> None:
        if self.demo is not None:
            self.demo.toggle_pause()

    def action_demo_next(self) -> None:
        if self.demo is not None:
            self.demo.next_step()

    def on_panel_view_row_chosen(self, event: PanelView.RowChosen) -> None:
        view = event.view
        if self.model is None or view.shown is None:
            return
        from awsview.core.details import describe
        from awsview.ui.viewer.screens import DetailScreen

        self.push_screen(
            DetailScreen(describe(self.model, view.shown.panel, view.ident, event.key))
        )
