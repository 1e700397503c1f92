"""Command palette providers: switch lab, theme or panel. None of them can change AWS."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from awsview import profiles
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


class LabCommands(_Commands):
    def commands(self) -> list[tuple[str, str, object]]:
        found = []
        for name in profiles.available():
            try:
                title = profiles.load(name).title
            except (profiles.ProfileError, profiles.UnknownProfile):
                continue
            found.append((f"Lab: {name}", title, partial(self.app.switch_lab, name)))
        return found


class ThemeCommands(_Commands):
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
