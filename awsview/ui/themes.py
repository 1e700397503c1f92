"""Themes are data: one TOML file per theme in ``themes/``, registered as Textual themes.

The user's own themes, in ``$XDG_CONFIG_HOME/awsview/themes/*.toml`` (``~/.config/...`` when
XDG_CONFIG_HOME is not set), come after the built-in ones; one with a built-in theme's name
replaces it."""

from __future__ import annotations

import os
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from textual.app import App
from textual.color import Color, ColorParseError
from textual.theme import Theme

from awsview.model.textfile import BadFile, NotText, read_utf8, shown, toml_error

DEFAULT_THEME = "awsview-dark"
# The colours a theme file may set, each checked to be one when the theme loads.
_COLOURS = (
    "primary",
    "secondary",
    "warning",
    "error",
    "success",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)
_FIELDS = ("name", *_COLOURS, "dark", "luminosity_spread", "text_alpha", "variables")


class ThemeError(BadFile):
    """A theme file that cannot be used; the message names the file and the problem."""


def theme_dir() -> Path:
    """``themes/`` beside the package in a checkout, or the copy shipped inside the wheel."""
    checkout = Path(__file__).resolve().parent.parent.parent / "themes"
    if checkout.is_dir():
        return checkout
    return Path(str(resources.files("awsview") / "_data" / "themes"))


def user_theme_dir() -> Path:
    """Where the user's own themes are looked for (the folder need not exist)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "awsview" / "themes"


def load_file(path: Path) -> Theme:
    """One theme file; ThemeError names the file, the line and what is wrong. Colours are
    checked here: Textual would only fail on one when the theme is first drawn."""
    try:
        text = read_utf8(path)
        data = tomllib.loads(text)
    except NotText as exc:
        raise ThemeError(str(exc)) from None
    except OSError as exc:
        raise ThemeError(f"{path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ThemeError(toml_error(path, exc)) from None
    unknown = sorted(set(data) - set(_FIELDS))
    if unknown:
        raise ThemeError(f"{path}: unknown key(s) {', '.join(unknown)}")
    if not isinstance(data.get("name"), str) or not isinstance(data.get("primary"), str):
        raise ThemeError(f"{path}: 'name' and 'primary' are required strings")
    _check_values(path, text, data)
    return Theme(**data)


def _check_values(path: Path, text: str, data: dict[str, Any]) -> None:
    def where(key: str) -> str:
        pattern = re.compile(rf"^\s*({re.escape(key)}\s*=|\[{re.escape(key)}\])")
        lines = text.splitlines()
        line = next((n for n, line in enumerate(lines, 1) if pattern.match(line)), None)
        return f"{path}:{line}" if line else str(path)

    for key in _COLOURS:
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ThemeError(f'{where(key)}: {key} must be a colour in quotes, like "#4DA3FF"')
        try:
            Color.parse(value)
        except ColorParseError:
            raise ThemeError(
                f'{where(key)}: {key} = "{shown(value)}" is not a colour '
                "(use #RRGGBB, rgb(r, g, b) or a colour name such as red)"
            ) from None
    if "dark" in data and not isinstance(data["dark"], bool):
        raise ThemeError(f"{where('dark')}: dark must be true or false")
    for key in ("luminosity_spread", "text_alpha"):
        value = data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ThemeError(f"{where(key)}: {key} must be a number")
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(
        isinstance(value, str) for value in variables.values()
    ):
        raise ThemeError(f'{where("variables")}: [variables] holds name = "value" strings')


def load_all(directory: Path | None = None) -> list[Theme]:
    """Every theme in the directory, sorted by file name; without one, the built-in themes and
    then the user's, a user theme taking the place of the built-in one of the same name."""
    if directory is not None:
        return [load_file(p) for p in sorted(directory.glob("*.toml"))]
    by_name = {t.name: t for t in load_all(theme_dir())}
    user = user_theme_dir()
    if user.is_dir():
        for loaded in load_all(user):
            by_name[loaded.name] = loaded  # a dict keeps the first place, takes the last value
    return list(by_name.values())


def known_names() -> list[str]:
    """AWS View's themes and Textual's built-in ones."""
    from textual.theme import BUILTIN_THEMES

    return [t.name for t in load_all()] + list(BUILTIN_THEMES)


def check(name: str | None) -> None:
    """Before building an app: ThemeError (one line) for a theme file that cannot be used, or a
    theme neither AWS View's nor Textual's."""
    ours = [t.name for t in load_all()]  # every theme file is read: a broken one is said first
    from textual.theme import BUILTIN_THEMES

    if name and resolve(name, ours + list(BUILTIN_THEMES)) is None:
        listed = ", ".join(shown(n.removeprefix("awsview-")) for n in ours)
        raise ThemeError(f"unknown theme {name!r}; AWS View themes: {listed}")


def resolve(name: str, known: list[str]) -> str | None:
    """The registered name for ``name``: ``dark`` finds ``awsview-dark``; None if unknown."""
    for candidate in (name, f"awsview-{name}"):
        if candidate in known:
            return candidate
    return None


def install(app: App, theme: str | None) -> list[str]:
    """Register AWS View's themes on ``app`` and switch it to ``theme`` (default: dark).

    Returns the AWS View theme names, in order (``t`` cycles through them); raises ThemeError
    naming the known ones when ``theme`` is neither theirs nor a Textual theme.
    """
    names = []
    for loaded in load_all():
        app.register_theme(loaded)
        names.append(loaded.name)
    chosen = resolve(theme or DEFAULT_THEME, list(app.available_themes))
    if chosen is None:
        known = ", ".join(shown(n.removeprefix("awsview-")) for n in names)
        raise ThemeError(f"unknown theme {theme!r}; AWS View themes: {known}")
    app.theme = chosen
    return names


def following(names: list[str], current: str) -> str:
    """The AWS View theme after ``current`` (the first one after a non-AWS View theme)."""
    index = names.index(current) if current in names else -1
    return names[(index + 1) % len(names)]
