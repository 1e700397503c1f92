"""Every private Textual, Rich or textual-serve member AWS View uses goes through
`awsview.ui.compat`.

Found, not listed: for each class of the UI, the capture and the commands built on a Textual,
Rich or textual-serve class, the private names its foreign bases define (their class attributes
and the ``self._x`` their code assigns) that the class's own code reads, assigns or overrides;
and, anywhere, a private attribute read off an object of a name AWS View defines nowhere. The
textual-serve subclasses of `awsview.cli.serve` are the one exception `compat`'s docstring names.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import textwrap
from functools import cache
from pathlib import Path

import pytest
from rich.text import Text

from awsview.ui.compat import screen_strips
from tests.support.probe import one_panel_table

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "awsview"
FOREIGN = ("textual", "rich", "textual_serve")
LAYERS = ("ui", "capture", "cli")
COMPAT = PACKAGE / "ui" / "compat.py"
# awsview.cli.serve subclasses textual-serve's AppService and Server (compat's docstring says why).
SERVE = {"_make_app", "_task", "_process", "_process_messages"}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _modules() -> list[Path]:
    return [
        path
        for layer in LAYERS
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        if path != COMPAT
    ]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _foreign_private(base: type) -> frozenset[str]:
    """The private names a Textual, Rich or textual-serve class defines or assigns on self."""
    names = {name for name in vars(base) if _private(name)}
    try:
        source = textwrap.dedent(inspect.getsource(base))
    except (OSError, TypeError):
        return frozenset(names)
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and _private(node.attr)
        ):
            names.add(node.attr)
    return frozenset(names)


def _is_foreign(cls: type) -> bool:
    return cls.__module__.split(".")[0] in FOREIGN


def _class_findings(path: Path, module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    tree = ast.parse(path.read_text())
    findings = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(module, node.name, None)
        if not isinstance(cls, type) or not any(_is_foreign(b) for b in cls.__mro__[1:]):
            continue  # a nested class, or one of our own
        theirs = frozenset().union(*(_foreign_private(b) for b in cls.__mro__ if _is_foreign(b)))
        for inner in ast.walk(node):
            if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)) and inner.name in theirs:
                findings.append(f"{path.name}:{inner.lineno} {node.name} overrides {inner.name}")
            elif (
                isinstance(inner, ast.Attribute)
                and isinstance(inner.value, ast.Name)
                and inner.value.id == "self"
                and inner.attr in theirs
            ):
                findings.append(f"{path.name}:{inner.lineno} {node.name} uses self.{inner.attr}")
    return findings


@cache
def _ours() -> frozenset[str]:
    """Every private name AWS View defines: functions, methods, class and instance attributes."""
    names = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return frozenset(name for name in names if _private(name))


def _other_findings(path: Path, ours: frozenset[str]) -> list[str]:
    """Private attributes read off anything but self, cls or a module, that AWS View never
    defines: someone else's private member."""
    tree = ast.parse(path.read_text())
    modules = {
        alias.asname or alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    findings = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)) or node.attr in ours:
            continue
        if isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"} | modules:
            continue
        findings.append(f"{path.name}:{node.lineno} reads .{node.attr}")
    return findings


# On one worker: each worker that runs one of them parses the whole package once (`_ours`).
@pytest.mark.xdist_group("compat-private-access")
@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_private_textual_and_rich_access_is_in_compat(path: Path):
    found = _class_findings(path, _module_name(path)) + _other_findings(path, _ours())
    if path.name == "serve.py":
        found = [f for f in found if f.rsplit(".", 1)[-1].split()[-1] not in SERVE]
    assert found == [], "use or add a function in awsview/ui/compat.py"


def test_the_check_can_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A DataTable subclass reading its private row locations is found, and so is a private
    member read off another object."""
    path = tmp_path / "leaky_table.py"
    path.write_text(
        "from textual.widgets import DataTable\n"
        "class Leaky(DataTable):\n"
        "    def where(self, key):\n"
        "        return self._row_locations.get(key)\n"
        "def screen_of(app):\n"
        "    return app._background_screens\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _class_findings(path, "leaky_table") == [
        "leaky_table.py:4 Leaky uses self._row_locations"
    ]
    assert _other_findings(path, _ours()) == ["leaky_table.py:6 reads ._background_screens"]


async def test_the_panel_table_draws_through_compat():
    """PanelTable's caches read DataTable through compat: a changed cell is drawn anew, the
    unchanged ones as before, the cursor row and the header too (a Textual that renamed what
    compat reads fails here, not in front of a learner)."""

    async with one_panel_table((40, 6)) as (pilot, table):
        app = pilot.app

        def screen() -> list[str]:
            return [strip.text.rstrip() for strip in screen_strips(app)]

        before = screen()
        assert [line.split() for line in before[:4]] == [
            ["NAME", "QTY"],
            ["alpha", "1"],
            ["beta", "1"],
            ["gamma", "1"],
        ]
        table.update_cell("beta", "qty", Text("7"))
        await pilot.pause()
        after = screen()
        assert after[2].split() == ["beta", "7"]
        assert after[:2] + after[3:] == before[:2] + before[3:]
        assert table._lines and table._drawn  # the caches were used


async def test_a_text_cell_is_drawn_as_datatable_draws_it_without_rich_s_passes():
    """A one-line `Text` cell (every panel cell and header label) is drawn without Rich's
    ``render_lines`` (its padding and styling passes cost three times the drawing itself), to
    the very segments DataTable draws: cut, padded, wide characters at the edge, styled spans,
    the cursor's and the hover's styles, the header."""
    from rich.console import Console
    from rich.style import Style
    from textual.widgets import DataTable

    from awsview.ui.compat import CellDrawingTable

    values = [
        Text("SUCCEEDED", style="bold green"),
        Text("数据表数据表数据表", no_wrap=True, end=""),
        Text("😀 ok [bold]not markup[/]"),
        Text(""),
        Text("  spaced  "),
        Text("quantity=3, status=done", spans=[]),
    ]
    values[5].stylize("underline", 0, 10)
    values[4].truncate(6, overflow="ellipsis")
    async with one_panel_table((60, 12)) as (pilot, table):
        for i, value in enumerate(values):
            table.add_row(Text(f"row {i}"), value, key=f"v{i}")
        table.hover_coordinate = table.cursor_coordinate
        await pilot.pause()
        calls = 0
        render_lines = Console.render_lines

        def counted(self, *args, **kwargs):
            nonlocal calls
            calls += 1
            return render_lines(self, *args, **kwargs)

        base = Style(color="white", bgcolor="black")
        for row in range(-1, table.row_count):
            for column in (0, 1):
                for width in (1, 3, 4, 7, 12, 30):
                    for cursor, hover in ((False, False), (True, False), (False, True)):
                        if width > 2:  # room for the text inside the padding
                            Console.render_lines = counted  # type: ignore[method-assign]
                        try:
                            drawn = CellDrawingTable.draw_cell(
                                table, row, column, base, width, cursor, hover
                            )
                        finally:
                            Console.render_lines = render_lines  # type: ignore[method-assign]
                        table._cell_render_cache.clear()  # keyed without the width
                        expected = DataTable._render_cell(
                            table, row, column, base, width, cursor, hover
                        )
                        assert drawn == expected, (row, column, width, cursor, hover)
        assert calls == 0


async def test_a_partial_update_draws_only_its_lines_and_the_same_chops():
    """The viewer's screen draws a partial update from the lines it shows only: the same chops
    as Textual's compositor for every changed line, from fewer lines asked of the widgets."""
    from textual._compositor import Compositor
    from textual.geometry import Region

    from awsview.ui.compat import CroppingCompositor
    from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
    from tests.support import sample

    profile, model = sample.ev04()
    app = AWSViewApp(model=model, profile=profile, options=ViewerOptions(clock=lambda: sample.NOW))
    async with app.run_test(size=(160, 50)) as pilot:
        for _ in range(3):
            await pilot.pause()
        compositor = app.screen._compositor
        assert isinstance(compositor, CroppingCompositor)
        table = next(v.table for v in app.board.views.values() if v.table.row_count > 3)
        table.focus()
        for _ in range(3):
            await pilot.press("down")
        await pilot.pause()
        x, y, width, height = table.region
        updates = [
            [Region(x, y + 2, width, 1), Region(x, y + 3, width, 1)],  # a cursor's two rows
            [table.region],  # a scrolled table
            [Region(0, 0, 160, 1), Region(x + 3, y + height - 1, 5, 1)],  # far apart
            [app.screen.region],
        ]
        asked: list[int] = []  # the heights of the lines asked of the widgets

        def counting(widget):
            def render_lines(crop):
                asked.append(crop.height)
                return type(widget).render_lines(widget, crop)

            return render_lines

        for regions in updates:
            crop = Region.from_union(regions).intersection(app.screen.region)
            lines = {y for region in regions for y in region.line_range}
            asked.clear()
            for widget in compositor.visible_widgets:
                widget.render_lines = counting(widget)  # type: ignore[method-assign]
            try:
                cropped = compositor._render_chops(crop, lines.__contains__)
                cropped_asked = sum(asked)
                asked.clear()
                compositor.__class__ = Compositor  # Textual's own, on the same map
                whole = compositor._render_chops(crop, lines.__contains__)
                whole_asked = sum(asked)
            finally:
                compositor.__class__ = CroppingCompositor
                for widget in compositor.visible_widgets:
                    del widget.render_lines
            for line in lines:
                assert cropped[line] == whole[line], (regions, line)
            if regions[0] is not app.screen.region:
                assert cropped_asked < whole_asked / 2, (regions, cropped_asked, whole_asked)


def test_a_closed_app_leaves_no_widget_s_rendered_lines_behind():
    """Textual's StylesCache.get_inner_outer kept every widget's StylesCache (and each line it
    rendered) in an lru_cache after the widget was gone; compat mends it. The app runs on a loop
    of its own, closed before the count: a running loop still holds the app's timers."""
    import asyncio
    import gc
    import weakref

    from textual.app import App, ComposeResult
    from textual.widgets import Label

    import awsview.ui.compat  # noqa: F401  (mends on import, as the viewer imports it)

    class Cards(App):
        CSS = "Label { background: $panel; padding: 0 1; }"

        def compose(self) -> ComposeResult:
            for number in range(12):
                yield Label(f"card {number}")

    async def run() -> list[weakref.ref]:
        app = Cards()
        async with app.run_test(size=(40, 20)) as pilot:
            await pilot.pause()
            return [weakref.ref(label._styles_cache) for label in app.query(Label)]

    caches = asyncio.run(run())
    gc.collect()
    assert len(caches) == 12
    assert [ref for ref in caches if ref() is not None] == []
