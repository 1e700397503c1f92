"""The state machine graph on screen: `awsview.core.graph`'s lines, drawn at the widget's own width.

The lines are plain text from the pure drawing; this widget only colours their spans with the
theme (component classes, no hard-coded colours) and redraws when its width changes. Text goes
in as `rich.text.Text`, never as markup, so a state named `[/bold]` stays a name.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from awsview.core.graph import Drawing, GraphLine

KINDS = ("succeeded", "failed", "caught", "entered", "taken", "muted", "name")


class GraphView(Widget):
    """One state machine, or one execution drawn on its state machine."""

    DEFAULT_CSS = """
    GraphView {
        height: auto;
        & > .graph--succeeded { color: $success; text-style: bold; }
        & > .graph--failed { color: $error; text-style: bold; }
        & > .graph--caught { color: $warning; text-style: bold; }
        & > .graph--entered { color: $accent; text-style: bold; }
        & > .graph--taken { color: $success; }
        & > .graph--muted { color: $foreground-muted; }
        & > .graph--name { text-style: bold; }
    }
    """
    COMPONENT_CLASSES = {f"graph--{kind}" for kind in KINDS}

    def __init__(self, drawing: Drawing, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.drawing = drawing
        self._drawn: tuple[int, tuple[GraphLine, ...]] | None = None

    def lines(self, width: int) -> tuple[GraphLine, ...]:
        """The drawing at `width` columns, kept until the width changes."""
        width = max(width, 1)
        if self._drawn is None or self._drawn[0] != width:
            self._drawn = (width, self.drawing.lines(width))
        return self._drawn[1]

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return max(len(self.lines(width)), 1)

    def _style(self, kind: str) -> Style:
        """A component's style with a translucent colour blended onto this widget's background: a
        partial Rich style drops the alpha, so `$foreground-muted` would print as the foreground.
        (`$text-muted` is worse here: `auto 60%` resolves to white 60 %, unreadable on a light
        theme and not muted on a dark one.)"""
        styles = self.get_component_styles(f"graph--{kind}")
        style = styles.partial_rich_style
        color = styles.color
        if styles.has_rule("color") and color.a < 1:
            style += Style(color=(self.background_colors[1] + color).rich_color)
        return style

    def render(self) -> Text:
        lines = self.lines(self.content_region.width or self.size.width)
        text = Text(no_wrap=True, overflow="crop", end="")
        styles = {kind: self._style(kind) for kind in KINDS}
        for n, line in enumerate(lines):
            start = len(text)
            text.append(line.text)
            for span in line.spans:
                style = styles.get(span.kind)
                if style is not None:
                    text.stylize(style, start + span.start, start + span.end)
            if n < len(lines) - 1:
                text.append("\n")
        return text
