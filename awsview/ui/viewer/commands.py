"""Command palette: switch lab, AWS profile, region or theme, go to a panel. None of them can
change AWS: a switch only reads elsewhere."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from textual.app import SystemCommand
from textual.command import CommandPalette, DiscoveryHit, Hit, Hits, Provider

from awsview import labspec
from awsview.model import untrusted
from awsview.ui.viewer.cells import plain


class _Commands(Provider):
    """A fixed list of (name, help, callback) that the palette can search."""

    def commands(self) -> list[tuple[str, str, object]]:
        raise NotImplementedError

    async def discover(self) -> Hits:
        for name, help_text, callback in self.commands():
            yield DiscoveryHit(plain(name), callback, text=name, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self.commands():
            score = matcher.match(name)
            if score > 0:
                # Content(name), not matcher.highlight(name): that parses the name as markup.
                yield Hit(score, plain(name), callback, text=name, help=help_text)


class Choices(_Commands):
    """One list to pick from (a "Switch …" command's second palette); see `pick`."""

    choices: list[tuple[str, str, object]] = []

    def commands(self) -> list[tuple[str, str, object]]:
        return self.choices


def pick(app: Any, choices: list[tuple[str, str, object]], placeholder: str) -> None:
    """A palette of ``choices`` only. The palette makes its providers from classes (it passes
    the screen), so the list travels in a class of its own."""
    provider = type("Choices", (Choices,), {"choices": choices})
    app.push_screen(CommandPalette(providers=[provider], placeholder=placeholder))


def lab_choices(app: Any) -> list[tuple[str, str, object]]:
    """The labs `awsview lab list` finds, then "no lab"."""
    found = []
    for name in labspec.available():
        try:
            title = labspec.load(name).title
        except (labspec.SpecError, labspec.UnknownLabSpec):
            continue
        found.append((name, untrusted.line(title, limit=80), partial(app.switch_lab, name)))
    prefix = app.prefix or "every resource"
    found.append(("no lab / prefix only", f"{prefix}", partial(app.switch_lab, "")))
    return found


def profile_choices(app: Any) -> list[tuple[str, str, object]]:
    from awsview.aws import session  # botocore's config: only when the palette lists them

    current = app.target.profile if app.target else None
    return [
        (
            name,
            "current" if name == current else "AWS profile",
            partial(app.switch_target, profile=name),
        )
        for name in session.profile_names()
    ]


def region_choices(app: Any) -> list[tuple[str, str, object]]:
    from awsview.aws import session

    current = app.current_region()
    return [
        (name, "current" if name == current else "region", partial(app.switch_target, region=name))
        for name in session.partition_regions(current)
    ]


def theme_choices(app: Any) -> list[tuple[str, str, object]]:
    return [
        (name, "colours of the viewer", partial(app.pick_theme, name))
        for name in app.awsview_themes
    ]


def switch_commands(app: Any) -> Iterator[SystemCommand]:
    """The palette's "Switch …" commands: none in a presenter screen or a replay (the app says
    with ``switchable``); profile and region only while polling a live endpoint."""
    if not app.switchable:
        return
    yield SystemCommand(
        "Switch lab…", "show another lab's panels", lambda: pick(app, lab_choices(app), "Lab…")
    )
    if app.target is not None:
        yield SystemCommand(
            "Switch AWS profile…",
            "poll through another profile of the AWS configuration",
            lambda: pick(app, profile_choices(app), "AWS profile…"),
        )
        yield SystemCommand(
            "Switch region…",
            "poll another region",
            lambda: pick(app, region_choices(app), "Region…"),
        )
    yield SystemCommand(
        "Switch theme…", "colours of the viewer", lambda: pick(app, theme_choices(app), "Theme…")
    )


class ThemeCommands(_Commands):
    """The class view's themes (the viewer offers them under "Switch theme…")."""

    def commands(self) -> list[tuple[str, str, object]]:
        pick = getattr(self.app, "pick_theme", None) or partial(setattr, self.app, "theme")
        return [
            (f"Theme: {name}", "colours of the viewer", partial(pick, name))
            for name in self.app.awsview_themes
        ]


class PanelCommands(_Commands):
    def commands(self) -> list[tuple[str, str, object]]:
        board = self.app.board
        return [
            (
                f"Panel: {view.shown.panel.title if view.shown else view.ident}",
                "go to this panel",
                partial(board.visit, view),
            )
            for view in board.ordered
        ]
