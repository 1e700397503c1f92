"""Markup injection: AWS strings that look like Rich markup or carry terminal escapes are shown as
written (control characters stripped), never interpreted — in cells, titles, details and logs."""

from __future__ import annotations

import dataclasses

import pytest

from awsview.model.loglines import classify
from awsview.model.resources import LogEntry, LogFeed
from awsview.model.snapshot import Health, Snapshot
from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
from awsview.ui.viewer.screens import DetailScreen
from tests.support import sample
from tests.support.probe import full_rows, rows, screen_lines, screen_styles, settle, view

# (what an attacker or a clumsy worker writes, what the learner must see)
HOSTILE = [
    ("[/bold]", "[/bold]"),
    ("[link=https://evil.example]click[/link]", "[link=https://evil.example]click[/link]"),
    ("[bold red]loud[/]", "[bold red]loud[/]"),
    ("\x1b[31mred\x1b[0m", "red"),
    ("\x1b]8;;https://evil.example\x07osc\x1b]8;;\x07", "osc"),
    ("@click=app.quit :smile:", "@click=app.quit :smile:"),
]


def hostile_model():
    profile, model = sample.q05()
    table = model.data("table:labex-q05-orders")
    items = tuple({"id": f"evil-{n}", "note": raw} for n, (raw, _) in enumerate(HOSTILE))
    group = "/aws/lambda/labex-q05-worker"
    feed = model.data(f"logs:{group}")
    lines = tuple(
        LogEntry(feed.lines[-1].timestamp_ms, "s", f"evil-{n}", classify(f"RESULT {raw}"))
        for n, (raw, _) in enumerate(HOSTILE)
    )
    model.apply(
        [
            sample.ok(
                "table:labex-q05-orders", dataclasses.replace(table, items=table.items + items)
            ),
            sample.ok(
                f"logs:{group}", LogFeed(group, feed.lines + lines, len(feed.lines) + len(lines))
            ),
            Snapshot(
                "queues",
                "queues",
                Health.ERROR,
                None,
                attempted_at=sample.NOW,
                error="[/bold] \x1b[31m[link=https://evil.example]denied[/link]\x07",
                error_since=sample.NOW,
            ),
        ]
    )
    return profile, model


@pytest.fixture
async def running():
    profile, model = hostile_model()
    app = AWSViewApp(model=model, profile=profile, options=ViewerOptions(clock=lambda: sample.NOW))
    async with app.run_test(size=(200, 80)) as pilot:
        await settle(pilot)
        yield app, pilot


async def test_item_cells_show_the_literal_text(running):
    app, _ = running
    notes = {r[0]: r[1] for r in full_rows(app, "tables:labex-q05-orders")}
    shown = {
        r[0]: r[1] for r in rows(app, "tables:labex-q05-orders")
    }  # rows() insists on Text cells
    for n, (_, literal) in enumerate(HOSTILE):
        assert notes[f"evil-{n}"] == f"note={literal}"
        assert shown[f"evil-{n}"] == f"note={literal}"


async def test_log_lines_show_the_literal_text(running):
    app, _ = running
    lines = [r[2] for r in rows(app, "logs")]
    for _, literal in HOSTILE:
        assert f"RESULT {literal}" in lines


async def test_the_screen_has_no_link_no_escape_and_no_injected_style(running):
    app, _ = running
    text = "\n".join(screen_lines(app))
    for literal in (
        "[/bold]",
        "[link=https://evil.example]click[/link]",
        "[bold red]loud[/]",
        ":smile:",
    ):
        assert literal in text
    assert "\x1b" not in text and "\x07" not in text
    styles = screen_styles(app)
    assert not [t for t, style in styles if style is not None and style.link], "a link was injected"
    assert not [
        t for t, style in styles if style is not None and style.meta and "@click" in style.meta
    ]
    loud = [style for t, style in styles if "loud" in t]
    assert loud and not any(
        style is not None and style.bold and style.color and style.color.name == "red"
        for style in loud
    )


async def test_error_text_in_the_border_is_literal(running):
    app, _ = running
    queues = view(app, "queues")
    assert queues.has_class("-error")
    text = "\n".join(screen_lines(app))
    assert "error — [/bold] [link=https://evil.example]denied[/link]" in text


async def test_the_detail_screen_shows_the_literal_json(running):
    app, pilot = running
    orders = view(app, "tables:labex-q05-orders")
    orders.table.focus()
    orders.table.move_cursor(row=orders.keys.index("evil-1"))
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(app.screen, DetailScreen)
    text = "\n".join(screen_lines(app))
    assert '"note": "[link=https://evil.example]click[/link]"' in text
    assert not [t for t, style in screen_styles(app) if style is not None and style.link]


async def test_state_names_in_the_graph_show_the_literal_text():
    """The state machine detail draws the graph from untrusted names: as written, no link, no
    escape."""
    import json

    from awsview.model.asl import parse_definition

    profile, model = sample.ev04()
    machine = model.data("state_machines")[0]
    names = [raw for raw, _ in HOSTILE]
    states = {
        raw: {"Type": "Pass", **({"Next": names[n + 1]} if n + 1 < len(names) else {"End": True})}
        for n, raw in enumerate(names)
    }
    text = json.dumps({"StartAt": names[0], "States": states})
    hostile = dataclasses.replace(machine, definition=parse_definition(text), definition_text=text)
    model.apply([sample.ok("state_machines", (hostile,))])
    app = AWSViewApp(model=model, profile=profile, options=ViewerOptions(clock=lambda: sample.NOW))
    async with app.run_test(size=(120, 80)) as pilot:
        await settle(pilot)
        machines = view(app, "state_machines")
        machines.table.focus()
        machines.table.move_cursor(row=0)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        shown = "\n".join(screen_lines(app))
        for _, literal in HOSTILE:
            assert f"│ {literal} " in shown  # a box title, as written
        assert "\x1b" not in shown and "\x07" not in shown
        assert not [t for t, style in screen_styles(app) if style is not None and style.link]
