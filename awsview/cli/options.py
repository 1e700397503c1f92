"""Option types shared by several commands, checked by the parser (argparse ``type=``) so that a
command receives a value it can use and no command checks it again."""

from __future__ import annotations

import argparse


def screen_size(text: str) -> tuple[int, int]:
    """``--size 120x40`` as (columns, rows)."""
    try:
        width, height = (int(n) for n in text.lower().split("x"))
    except ValueError:
        width = height = 0
    if width >= 20 and height >= 10:
        return width, height
    raise argparse.ArgumentTypeError(f"--size must look like 120x40, not {text!r}")


def theme(name: str) -> str:
    """``--theme NAME``: a theme that exists (built in, Textual's, or a file in the theme
    folder). The themes are read only when the option is given: parsing stays quick."""
    from awsview.ui import themes

    try:
        themes.check(name)
    except themes.ThemeError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return name
