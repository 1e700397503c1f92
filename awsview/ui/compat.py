"""Every place AWS View reaches into Textual's, Rich's or textual-serve's private parts, in one
module.

Each function names the private member it uses and why no public one does; a Textual, Rich or
textual-serve upgrade that breaks one breaks it here (the tests that use each are named). The
tested versions are pinned in pyproject.toml. Like `awsview.emulator.moto_patches` for moto.

textual-serve: `awsview.cli.serve.make_server` subclasses its `AppService` and `Server`, overriding
their private `_make_app` and using `_task`, `_process` and `_process_messages` — the only way to
stop a stuck session with a deadline and to add the guard middleware (tests/cli/test_serve.py).
"""

from __future__ import annotations

from typing import Any


def alive(widget: object) -> bool:
    """Mounted and not being torn down. Widget.mount itself checks ``_closing`` and ``_pruning``
    (no public flag says it); is_attached alone stays true while the app closes, and an update
    then would meet half-removed children."""
    return bool(
        getattr(widget, "is_attached", False)
        and not getattr(widget, "_closing", False)
        and not getattr(widget, "_pruning", False)
    )


def action_name(app: Any, action: Any, default_namespace: Any, namespaces: Any) -> str:
    """The name of the action ``App.run_action`` is about to run: Textual parses an action string
    (``"app.quit"``, ``"focus('x')"``) only in its private ``_parse_action``, and a presenter screen
    must refuse before the action runs, whichever key, click or footer link sent it
    (tests/ui/test_ui_presenter.py)."""
    _, name, _ = app._parse_action(
        action, app if default_namespace is None else default_namespace, namespaces
    )
    return str(name)


def screen_update(app: Any) -> Any:
    """The whole current screen as one renderable (with the screens under it, for a modal), for a
    recording console: Textual's export_screenshot does this internally through the screen's
    private ``_compositor`` and the app's ``_background_screens`` (tests/capture)."""
    return app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)


def screen_strips(app: Any) -> list[Any]:
    """The current screen's lines as Textual's compositor draws them (``_compositor``), for tests
    and benchmarks that read the screen back as text."""
    return list(app.screen._compositor.render_strips())


def recorded_segments(console: Any) -> list[Any]:
    """What a recording Rich console printed, as segments: Rich keeps them in the private
    ``_record_buffer`` and offers only text, HTML and SVG exports of it (the PNG screenshot
    draws cell by cell, tests/capture/test_screenshot.py)."""
    return list(console._record_buffer)
