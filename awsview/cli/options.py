"""Option types shared by several commands, checked by the parser (argparse ``type=``) so that a
command receives a value it can use and no command checks it again."""

from __future__ import annotations

import argparse

from awsview.model.errors import UserError


class ThemeFileError(UserError):
    """A theme file in the theme folder that cannot be used: the configuration's trouble, said
    as the file's own line (argparse would turn a ValueError into "invalid value")."""


def screen_size(text: str) -> tuple[int, int]:
    """``--size 120x40`` as (columns, rows)."""
    try:
        width, height = (int(n) for n in text.lower().split("x"))
    except ValueError:
        width = height = 0
    if width >= 20 and height >= 10:
        return width, height
    raise argparse.ArgumentTypeError(f"--size must look like 120x40, not {text!r}")


SETTLE = 30.0  # lab check: seconds a step's resources get to settle before its checks count


def seconds(text: str) -> float:
    """A positive number of seconds, at most a day (``--settle 5``)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if 0 < value <= 86_400:  # NaN and inf fail both
        return value
    raise argparse.ArgumentTypeError(f"expected seconds between 0 and 86400, not {text!r}")


def theme(name: str) -> str:
    """``--theme NAME``: a theme that exists (built in, Textual's, or a file in the theme
    folder). The themes are read only when the option is given: parsing stays quick."""
    check_themes(name)
    return name


def check_themes(name: str | None) -> None:
    """Every theme file can be read, and ``name`` (if any) is a theme: an unknown name is the
    command line's mistake, a broken file the configuration's (ThemeFileError)."""
    from awsview.ui import themes

    try:
        themes.known_names()  # reads every theme file
    except themes.ThemeError as exc:
        raise ThemeFileError(str(exc)) from None
    try:
        themes.check(name)
    except themes.ThemeError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
