"""Keys of one's own: config.toml's [keymap] rebinds by binding id, a bad entry is one line
naming the file and its line, and the `?` screen lists the bindings in force, from the same
source as the docs' key reference."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

import pytest

from awsview.ui import keymap, keytable, preferences
from awsview.ui.viewer.app import AWSViewApp, ViewerOptions, viewer_bindings
from awsview.ui.viewer.screens import HelpScreen
from tests.support import sample
from tests.support.helpers import until
from tests.support.probe import settle, view

pytestmark = pytest.mark.usefixtures("utc")


@pytest.fixture
def config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    path = tmp_path / "awsview" / "config.toml"
    path.parent.mkdir(parents=True)
    return path


def _app(keys: dict[str, str]) -> AWSViewApp:
    profile, model = sample.sample("ev04")
    return AWSViewApp(
        model=model,
        profile=profile,
        options=ViewerOptions(clock=lambda: sample.NOW, keymap=keys),
    )


async def test_a_keymap_rebinds_and_the_help_screen_says_so(config):
    config.write_text('theme = "awsview-dark"\n\n[keymap]\ncopy = "c"\nzoom = "ctrl+z"\n')
    keys, left_out = keymap.load()
    assert keys == {"copy": "c", "zoom": "ctrl+z"} and left_out is None
    app = _app(keys)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        panel = view(app, "executions")
        panel.table.focus()
        await pilot.press("y")  # no longer copy's key
        await settle(pilot)
        assert app.clipboard == ""
        await pilot.press("c")
        await until(pilot, lambda: app.clipboard == panel.cursor_key(), what="c copies")
        await pilot.press("ctrl+z")
        await until(pilot, lambda: app.board.zoomed is panel, what="ctrl+z zooms")
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help screen")
        text = app.screen.text()
        assert "| `c` | Copy row | `copy` |" in text
        assert "| `ctrl+z` | Zoom | `zoom` |" in text
        assert "| `y` |" not in text


def test_bad_entries_are_one_line_each_naming_the_file_and_line_and_the_rest_apply(config):
    config.write_text(
        '[keymap]\ncopy = "c"\ncpy = "x"\nzoom = 3\nquit = "ctrl+nosuchkey"\nhelp = "q"\n'
    )
    keys, left_out = keymap.load()
    assert keys == {"copy": "c"}
    assert left_out is not None and "\n" not in left_out
    assert left_out.startswith(f"{config}:3: keymap: no binding 'cpy' (ids: ")
    assert left_out.endswith("(and 3 more); left out")
    _, problems = keymap.check(
        tomllib.loads(config.read_text())["keymap"],
        config,
        config.read_text(),
        keymap.every_binding(),
    )
    assert [p.split(": keymap")[0] for p in problems] == [f"{config}:{n}" for n in (3, 4, 5, 6)]
    assert problems[3].endswith("that key is quit's (rebind quit too)")


def test_a_saved_preference_keeps_the_keymap(config):
    config.write_text('[keymap]\ncopy = "c"\n"next-panel" = "l"\n')
    assert preferences.save(theme="awsview-light") is None
    saved = tomllib.loads(config.read_text())
    assert saved == {"theme": "awsview-light", "keymap": {"copy": "c", "next-panel": "l"}}


def _docs_reference() -> list[str]:
    hook = Path(__file__).resolve().parents[2] / "docs" / "hooks" / "reference.py"
    spec = importlib.util.spec_from_file_location("docs_reference", hook)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.keys_reference().splitlines()


async def test_the_help_screen_and_the_docs_key_table_come_from_the_same_bindings():
    app = _app({})
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help screen")
        shown = app.screen.keys
    assert shown == keytable.table(viewer_bindings())
    docs = _docs_reference()
    rows = shown[2:]
    assert len(rows) == len(viewer_bindings()) and any("`copy`" in r for r in rows)
    for row in rows:  # the docs' row is the same, with whether a presenter screen takes it
        assert any(line.startswith(row) for line in docs), row
