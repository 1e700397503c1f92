"""The viewer driven with Pilot on hand-built models: diffs, cursor, highlights, marks, filter,
details, zoom, help, palette, themes and error panels."""

from __future__ import annotations

import dataclasses
import time

import pytest
from textual.widgets import DataTable

from awsview import labspec
from awsview.model.resources import Execution, Table
from awsview.model.snapshot import Health, Snapshot
from awsview.model.state import LabState
from awsview.ui.themes import ThemeError
from awsview.ui.viewer.app import (
    INPUT_PAUSE_S,
    INPUT_RECENT_S,
    ROUND_WHILE_INPUT_S,
    AWSViewApp,
    ViewerOptions,
    round_wait,
)
from awsview.ui.viewer.screens import DetailScreen, HelpScreen
from tests.support import sample
from tests.support.helpers import palette
from tests.support.probe import body, full_rows, rows, screen_lines, settle, view

pytestmark = pytest.mark.usefixtures("utc")  # times on screen read the same everywhere


def app_for(name: str, **options) -> tuple[AWSViewApp, LabState]:
    profile, model = sample.sample(name)
    options = ViewerOptions(clock=lambda: sample.NOW, **options)
    return AWSViewApp(model=model, profile=profile, options=options), model


def _executions(model: LabState) -> tuple[Execution, ...]:
    return model.data("executions:labex-ev04-orders")


async def test_panels_follow_the_profile_and_show_render_rows():
    app, model = app_for("ev04")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        order = [v.ident.split(":")[0] for v in app.board.ordered]
        wanted = [n for n in app.profile.panels if n in order]
        assert [n for i, n in enumerate(order) if i == 0 or order[i - 1] != n] == wanted
        assert [r[:2] for r in full_rows(app, "executions")] == [
            ("denied-order", "FAILED"),
            ("permanent-order", "FAILED"),
            ("retry-order", "SUCCEEDED"),
        ]
        assert full_rows(app, "tables:labex-ev04-orders") == [
            ("retry-order", "quantity=2, total_cents=600")
        ]
        assert "0.4 s ago" in str(view(app, "executions").border_subtitle)
        assert "reference unchanged" in str(view(app, "tables:labex-ev04-reference").border_title)


async def test_rows_are_diffed_by_key_and_the_cursor_stays_on_its_row(monkeypatch):
    # No freshness tick: a RUNNING execution's TOOK changes every second, and would be lit.
    app, model = app_for("ev04", highlight_seconds=30, tick_seconds=3600)
    async with app.run_test(size=(220, 50)) as pilot:  # wide enough that no column is cut
        await settle(pilot)
        executions = view(app, "executions")
        executions.table.focus()
        executions.table.move_cursor(row=1)  # permanent-order
        assert executions.cursor_key().endswith(":permanent-order")
        cleared = []
        monkeypatch.setattr(DataTable, "clear", lambda self, *a, **k: cleared.append(self))
        runs = _executions(model)
        newest = dataclasses.replace(
            runs[-1],
            name="again-order",
            arn=runs[-1].arn.replace("retry", "again"),
            status="RUNNING",
            started=sample.at(9),
            stopped=None,
        )
        model.apply([sample.ok("executions:labex-ev04-orders", (newest,) + runs)])
        await settle(pilot)
        assert cleared == []  # diffed, never cleared
        assert [r[0] for r in full_rows(app, "executions")] == [
            "again-order",
            "denied-order",
            "permanent-order",
            "retry-order",
        ]
        assert executions.cursor_key().endswith(":permanent-order")  # moved down with its row
        cells = executions.table.get_row(newest.arn)
        assert cells[1].plain == "RUNNING"
        assert executions._lit[newest.arn][1] is None  # a new row is lit as new

        finished = dataclasses.replace(newest, status="SUCCEEDED", stopped=sample.at(10))
        model.apply([sample.ok("executions:labex-ev04-orders", (finished,) + runs)])
        await settle(pilot)
        assert cleared == []
        assert executions.table.get_row(newest.arn)[1].plain == "SUCCEEDED"
        assert 1 in executions._lit[newest.arn][1]  # the changed cell is lit
        assert executions.cursor_key().endswith(":permanent-order")


async def test_highlights_fade_and_changed_item_attributes_stay_marked():
    clock = [1000.0]
    app, model = app_for("q05", highlight_seconds=3, monotonic=lambda: clock[0])
    async with app.run_test(size=(120, 50)) as pilot:
        await settle(pilot)
        table = model.data("table:labex-q05-orders")
        changed = ({**table.items[0], "quantity": 5, "total_cents": 1350}, table.items[1])
        model.apply(
            [sample.ok("table:labex-q05-orders", dataclasses.replace(table, items=changed))]
        )
        await settle(pilot)
        orders = view(app, "tables:labex-q05-orders")
        assert orders._lit["dedup-order"][1] == frozenset({1})

        def marked() -> set[str]:
            attributes = orders.table.get_row("dedup-order")[1]
            return {
                attributes.plain[s.start : s.end]
                for s in attributes.spans
                if "underline" in str(s.style)
            }

        def lit() -> bool:
            attributes = orders.table.get_row("dedup-order")[1]
            return any(s.style.bgcolor is not None for s in attributes.spans)

        assert marked() == {"quantity=5", "total_cents=1350"} and lit()
        clock[0] += 5
        orders._fade()
        assert "dedup-order" not in orders._lit and not lit()  # faded
        assert marked() == {"quantity=5", "total_cents=1350"}  # still marked until it changes again


async def test_filter_narrows_every_panel_and_escape_clears_it():
    app, _ = app_for("ev04")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"permanent", "enter")
        await pilot.pause(0.3)
        await settle(pilot)
        assert [r[0] for r in full_rows(app, "executions")] == ["permanent-order"]
        assert full_rows(app, "tables:labex-ev04-orders") == []
        assert "no rows match" in body(app, "tables:labex-ev04-orders")
        assert any("filter “permanent”" in line for line in screen_lines(app))
        await pilot.press("escape")
        await settle(pilot)
        assert len(full_rows(app, "executions")) == 3


async def test_enter_opens_the_row_and_escape_goes_back():
    app, _ = app_for("ev04")
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        executions = view(app, "executions")
        executions.table.focus()
        executions.table.move_cursor(row=2)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        text = "\n".join(screen_lines(app))
        assert "Execution retry-order" in text and '"total_cents": 600' in text
        assert "StoreOrder" in text  # attempts per state
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, DetailScreen)
        assert executions.cursor_key().endswith(":retry-order")


@pytest.mark.parametrize(
    "ident,row,expected",
    [
        ("state_machines", 0, ["Retry TransientOrderError", '"StartAt": "CheckQuantity"']),
        ("history:retry-order", 3, ["TaskFailed", "TransientOrderError"]),
        ("tables:labex-ev04-orders", 0, ['"total_cents": 600', "Write decisions for this key"]),
        ("logs", 2, ["[ERROR] TransientOrderError"]),
        ("decisions", 0, ["no previous item", "After the write", '"total_cents": 600']),
    ],
)
async def test_details_of_each_kind(ident, row, expected):
    app, _ = app_for("ev04")
    async with app.run_test(size=(120, 60)) as pilot:
        await settle(pilot)
        panel = view(app, ident)
        panel.table.focus()
        panel.table.move_cursor(row=row)
        await pilot.press("enter")
        await settle(pilot)
        text = "\n".join(screen_lines(app))
        for fragment in expected:
            assert fragment in text


async def test_zoom_cycle_help_and_quit():
    app, _ = app_for("q05")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("right_square_bracket", "right_square_bracket")
        current = app.board.focused_view()
        assert current is app.board.ordered[1]
        await pilot.press("z")
        await settle(pilot)
        assert app.board.zoomed is current
        assert [v for v in app.board.ordered if v.display and v.region.height] == [current]
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert app.board.zoomed is app.board.ordered[2]
        await pilot.press("escape")
        assert app.board.zoomed is None
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("q")
        await settle(pilot)
    assert app.return_code in (0, None)


async def test_palette_switches_lab_and_theme():
    app, _ = app_for("ev04")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.theme == "awsview-dark"
        await pilot.press("t")
        assert app.theme != "awsview-dark" and app.theme in app.awsview_themes
        await palette(pilot, app, "Switch lab…", "q05")
        await settle(pilot)
        assert app.profile.name == "q05"
        assert "queues" in app.board.views


def test_themes_load_and_an_unknown_one_is_refused():
    from awsview.ui.themes import load_all, theme_dir

    names = {t.name for t in load_all()}
    assert {"awsview-dark", "awsview-light", "awsview-high-contrast", "awsview-docs"} <= names
    assert len(list(theme_dir().glob("*.toml"))) == len(names)
    with pytest.raises(ThemeError):
        AWSViewApp(
            model=LabState(),
            profile=labspec.load("q05"),
            options=ViewerOptions(theme="no-such-theme"),
        )
    assert (
        AWSViewApp(
            model=LabState(), profile=labspec.load("q05"), options=ViewerOptions(theme="docs")
        ).theme
        == "awsview-docs"
    )


def test_tcss_uses_theme_variables_only():
    import re
    from pathlib import Path

    import awsview.ui

    ui = Path(awsview.ui.__file__).parent
    for path in [*ui.rglob("*.tcss"), *ui.rglob("*.py")]:
        text = path.read_text()
        css = (
            text
            if path.suffix == ".tcss"
            else "\n".join(re.findall(r'DEFAULT_CSS = """(.*?)"""', text, re.S))
        )
        assert not re.search(r"#[0-9a-fA-F]{3,8}\b", css), f"hard-coded colour in {path.name}"


async def test_errors_read_as_errors_never_as_empty():
    profile = labspec.load("q05")
    model = LabState()
    now = time.time()
    model.apply(
        [
            Snapshot(
                "queues",
                "queues",
                Health.ERROR,
                None,
                attempted_at=now,
                error="connection refused",
                error_since=now - 3,
            ),
            Snapshot(
                "table",
                "table:labex-q05-orders",
                Health.STALE,
                Table(
                    "labex-q05-orders", "ACTIVE", ("id",), ({"id": "dedup-order", "quantity": 4},)
                ),
                fetched_at=now - 12,
                attempted_at=now,
                error="connection refused",
                error_since=now - 12,
            ),
        ]
    )
    app = AWSViewApp(model=model, profile=profile, options=ViewerOptions(clock=lambda: now))
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        queues = view(app, "queues")
        assert queues.has_class("-error")
        assert body(app, "queues") == "error — connection refused"
        orders = view(app, "tables:labex-q05-orders")
        assert orders.has_class("-stale") and "stale 12 s — connection refused" in str(
            orders.border_subtitle
        )
        assert rows(app, "tables:labex-q05-orders") == [
            ("dedup-order", "quantity=4")
        ]  # last good data kept
        assert "no queues" not in "\n".join(screen_lines(app))


@pytest.mark.parametrize(
    "name,facts",
    [
        ("ev04", ["retry-order", "SUCCEEDED", "FAILED"]),
        (
            "q05",
            [
                "labex-q05-jobs",
                "dedup-order",
                "Accepted",
                "Rejected: ConditionalCheckFailedException",
            ],
        ),
    ],
)
async def test_at_60_by_20_nothing_breaks_and_the_key_facts_show(name, facts):
    app, _ = app_for(name)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        seen = set()
        for _ in range(len(app.board.ordered) + 1):
            seen.add("\n".join(screen_lines(app)))
            await pilot.press("right_square_bracket")
            await settle(pilot)
        text = "\n".join(seen)
        for fact in facts:
            assert fact in text, fact
        assert app.board.has_class("-compact")


async def test_panels_hidden_by_zoom_catch_up_when_unzoomed():
    app, model = app_for("q05")
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        app.board.visit(view(app, "queues"))
        await pilot.press("z")
        table = model.data("table:labex-q05-orders")
        model.apply(
            [sample.ok("table:labex-q05-orders", dataclasses.replace(table, items=table.items[:1]))]
        )
        await settle(pilot)
        assert len(full_rows(app, "tables:labex-q05-orders")) == 2  # not drawn while hidden
        await pilot.press("escape")
        await settle(pilot)
        assert full_rows(app, "tables:labex-q05-orders") == [
            ("dedup-order", "quantity=4, total_cents=1100")
        ]


async def test_changes_while_keys_come_are_all_shown_by_a_later_round():
    app, model = app_for("q05")
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        app.board.visit(view(app, "tables:labex-q05-orders"))
        table = model.data("table:labex-q05-orders")
        for n in range(4):  # keys and changes interleaved: rounds wait while keys come
            await pilot.press("down" if n % 2 == 0 else "up")
            items = [{**item, "quantity": 10 + n} for item in table.items]
            model.apply(
                [
                    sample.ok(
                        "table:labex-q05-orders", dataclasses.replace(table, items=tuple(items))
                    )
                ]
            )
        await settle(pilot)
        assert not app.round_pending
        shown = full_rows(app, "tables:labex-q05-orders")
        assert shown and all("quantity=13" in cells[1] for cells in shown)  # the last change


def test_a_round_waits_for_a_pause_in_the_keys():
    """While keys come, a round due now waits until INPUT_PAUSE_S after the last key (a round
    that started just as a key came made that key wait for all of it), at most until the change
    has waited ROUND_WHILE_INPUT_S; with no key lately it runs at once."""
    last_round, key = 100.0, 200.0
    assert round_wait(key + 0.001, last_round, key, key + 0.001) == pytest.approx(
        INPUT_PAUSE_S - 0.001
    )
    assert round_wait(key + INPUT_PAUSE_S, last_round, key, key) == 0.0
    # Rounds stay ROUND_WHILE_INPUT_S apart while keys come …
    assert round_wait(key + 0.1, key, key, key + 0.05) == pytest.approx(ROUND_WHILE_INPUT_S - 0.1)
    # … a change waits no longer than that, keys or not …
    assert round_wait(key + 0.01, last_round, key, key + 0.01 - ROUND_WHILE_INPUT_S) == 0.0
    # … and with no key for INPUT_RECENT_S, a change is shown at once.
    assert round_wait(key + INPUT_RECENT_S, key, key, key + INPUT_RECENT_S) == 0.0


async def test_rows_seen_at_start_are_not_lit_but_later_ones_are():
    clock = [0.0]
    profile, model = sample.sample("q05")
    logs = model.snapshots.pop("logs:/aws/lambda/labex-q05-worker")
    model.apply(
        [
            Snapshot(
                "logs", logs.key, Health.ABSENT, None, fetched_at=sample.NOW, note="no group yet"
            )
        ]
    )
    app = AWSViewApp(
        model=model,
        profile=profile,
        options=ViewerOptions(clock=lambda: sample.NOW, monotonic=lambda: clock[0]),
    )
    async with app.run_test(size=(120, 50)) as pilot:
        await settle(pilot)
        assert view(app, "queues")._lit == {}  # the first sight is not news
        model.apply([logs])  # the learner's worker logs for the first time
        await settle(pilot)
        lines = view(app, "logs")
        assert lines._lit and all(cells is None for _, cells in lines._lit.values())


async def test_the_execution_graph_colours_each_state_by_what_happened():
    app, _ = app_for("ev04")
    async with app.run_test(size=(80, 120)) as pilot:
        await settle(pilot)
        executions = view(app, "executions")
        executions.table.focus()
        executions.table.move_cursor(
            row=[k.rsplit(":", 1)[-1] for k in executions.keys].index("permanent-order")
        )
        await pilot.press("enter")
        await settle(pilot)
        colours = {}
        for text, style in screen_lines_styles(app):
            for name in ("↪ StoreOrder", "✗ Rejected", "· ReadSummary"):
                if text.startswith(name):
                    colours[name] = style.color
        theme = app.current_theme
        assert near(colours["↪ StoreOrder"], theme.warning) and near(
            colours["✗ Rejected"], theme.error
        )
        assert not any(
            near(colours["· ReadSummary"], c) for c in (theme.error, theme.warning, theme.success)
        )


def near(color, hex_colour: str) -> bool:
    """The same theme colour, give or take the rounding of blending."""
    wanted = tuple(int(hex_colour.lstrip("#")[i : i + 2], 16) for i in (0, 2, 4))
    return all(abs(a - b) <= 2 for a, b in zip(color.triplet, wanted))


def screen_lines_styles(app):
    from tests.support.probe import screen_styles

    return [
        (text.strip(), style)
        for text, style in screen_styles(app)
        if text.strip() and style is not None
    ]
