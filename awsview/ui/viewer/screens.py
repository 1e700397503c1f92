"""The detail screen (Enter on a row), the help screen (?) and the prefix picker (no known lab on
an account)."""

from __future__ import annotations

import json
from typing import Any

from rich.table import Table as RichTable
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.highlight import highlight
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Markdown, Static

from awsview.core.details import Detail
from awsview.ui.viewer.cells import plain
from awsview.ui.viewer.graphview import GraphView

MAX_SECTION_CHARS = 200_000  # a huge item or payload is cut, not allowed to stall the screen


class DetailScreen(Screen[None]):
    """Everything known about one row's object; Escape goes back to the panels."""

    BINDINGS = [Binding("escape,q,backspace", "close", "Back")]

    def __init__(self, detail: Detail) -> None:
        super().__init__()
        self.detail = detail

    def compose(self) -> ComposeResult:
        yield Static(plain(self.detail.title), classes="detail-title")
        with VerticalScroll(classes="detail-body"):
            if self.detail.fields:
                grid = RichTable.grid(padding=(0, 2))
                grid.add_column(no_wrap=True, style="bold")
                grid.add_column(overflow="fold")
                for name, value in self.detail.fields:
                    grid.add_row(Text(name), Text(value))
                yield Static(grid, classes="detail-fields")
            for section in self.detail.sections:
                yield Static(plain(section.title), classes="section-title")
                if section.kind == "graph":
                    yield GraphView(section.body, classes="section -graph")
                else:
                    yield Static(
                        _section_body(section.body, section.kind),
                        classes=f"section -{section.kind}",
                    )
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)


def _section_body(body: object, kind: str) -> Content:
    if kind == "json":
        text = json.dumps(body, indent=2, ensure_ascii=False, default=str)
        if len(text) > MAX_SECTION_CHARS:
            return Content(
                text[:MAX_SECTION_CHARS] + f"\n… {len(text) - MAX_SECTION_CHARS:,} more characters"
            )
        return highlight(text, language="json")
    text = str(body)
    if len(text) > MAX_SECTION_CHARS:
        text = text[:MAX_SECTION_CHARS] + f"\n… {len(text) - MAX_SECTION_CHARS:,} more characters"
    return Content(text)


HELP = """\
# AWS View

A live, **read-only** view of the lab's real resources. Nothing here can change AWS: every
call the viewer makes is a read, and no key or command writes.

## Panels

Each panel is one kind of resource, most important first. The border shows its name and,
at the bottom right, how fresh it is:

- `0.4 s ago` — the last poll succeeded that long ago.
- `stale 12 s — connection refused` — polls fail now; the rows are the last good ones.
- `error — …` — no poll has succeeded yet: nothing is known, which is *not* the same as empty.
- `absent` — a successful call says the resource does not exist.
- `none yet` — not polled yet.

New rows light up for a few seconds, changed cells too; the changed attributes of an
item stay underlined until it changes again. Long panels show the first (or, for logs and
write decisions, the last) rows and say how many more there are: `/` finds the others.

The checkpoints follow the lab's current run: ✓ done (held at some time in this run, or a later
step's did), ✗ the step the learner is on (or a done step whose work is gone again), · not
reached yet, ? not knowable from here. The status line says which step the learner is on.

## Keys

"""

TEXTUAL_KEYS = """
`tab` / `shift+tab` move between panels, the arrows and page keys within one; `ctrl+p` opens
the command palette (switch lab, theme or panel). The mouse works too: click a panel or a row
(twice: its full content), scroll with the wheel. The ids name the bindings in config.toml's
`[keymap]`, where each can be given other keys.
"""


PRESENTER_NOTE = """
## Presenter screen

This screen is read-only: it follows the newest execution and the newest write decision, and
only the keys that look around work here (`tab`, `]` / `[`, `z`, `enter`, `escape`, arrows,
page up/down, `r`, `?`). Filtering, themes, the command palette and quitting are off.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]

    def __init__(
        self, presenter: bool = False, backend: str | None = None, keys: list[str] | None = None
    ) -> None:
        super().__init__()
        self.presenter = presenter
        self.backend = backend  # what `awsview doctor` said of this endpoint, as Markdown
        self.keys = keys or []  # the key table, from the bindings in force (ui.keytable)

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="help-body"):
            yield Markdown(self.text())
        yield Footer()

    def text(self) -> str:
        """The screen's Markdown."""
        text = PRESENTER_NOTE + HELP if self.presenter else HELP
        text += "\n".join(self.keys) + "\n" + TEXTUAL_KEYS
        return text + ("\n" + self.backend if self.backend else "")

    def action_close(self) -> None:
        self.dismiss(None)


class PrefixScreen(ModalScreen["str | None"]):
    """No known lab on an account: pick the name prefix of the resources to watch (AWS View
    never watches a whole region of a real account). Enter picks, escape leaves it unpicked."""

    BINDINGS = [Binding("escape", "close", "Close")]

    def __init__(self, found: list[tuple[str, int]]) -> None:
        super().__init__()
        self.found = found

    def compose(self) -> ComposeResult:
        from textual.widgets import Input, OptionList
        from textual.widgets.option_list import Option

        with VerticalScroll(classes="prefix-body"):
            yield Static(
                plain(
                    "No known lab here, and on an account AWS View watches only the "
                    "resources whose names start with a prefix. Pick one, or type it:"
                )
            )
            yield OptionList(
                *(
                    Option(plain(f"{prefix}*  ({count} resources)"), id=f"p{i}")
                    for i, (prefix, count) in enumerate(self.found)
                ),
                id="prefixes",
            )
            yield Input(placeholder="a prefix, e.g. myapp-", id="typed")
        yield Footer()

    def on_mount(self) -> None:
        from textual.widgets import Input, OptionList

        options = self.query_one(OptionList)
        if self.found:
            options.highlighted = 0
            options.focus()
        else:
            self.query_one(Input).focus()

    def on_option_list_option_selected(self, event: Any) -> None:
        self.dismiss(self.found[int(event.option.id[1:])][0])

    def on_input_submitted(self, event: Any) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())

    def action_close(self) -> None:
        self.dismiss(None)
