"""The key tables of the `?` screens and of the docs' key reference, from the bindings themselves:
one source, so neither can drift from the keys that work. The `?` screens pass the keymap in
force (config.toml's `[keymap]`), so a key of one's own is listed where it now is."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from textual.binding import Binding

from awsview.ui.viewer.presenter import NAVIGATION

_CHARACTERS = {"slash": "/", "plus": "+", "minus": "-"}


def key_label(name: str) -> str:
    """How a key is written for people: ``?`` for question_mark, ``ctrl+q`` as it is."""
    from textual.keys import key_to_character

    name = name.strip()
    character = key_to_character(name) or _CHARACTERS.get(name)
    return character if character and character.isprintable() and character != " " else name


def in_force(bindings: Iterable[Binding], keymap: Mapping[str, str] | None = None) -> list[Binding]:
    """The bindings with the keys a keymap gave them."""
    keymap = keymap or {}
    return [
        dataclasses.replace(b, key=keymap[b.id]) if b.id and b.id in keymap else b for b in bindings
    ]


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(
    bindings: Iterable[Binding],
    keymap: Mapping[str, str] | None = None,
    presented: bool = False,
) -> list[str]:
    """Markdown: a row per binding with its keys, what it does and its id (for `[keymap]`);
    with ``presented``, whether a presenter screen lets it through."""
    head = "| key | does | id |" + (" on a presenter screen |" if presented else "")
    rows = [head, "|" + " --- |" * (head.count("|") - 1)]
    for binding in in_force(bindings, keymap):
        keys = " / ".join(f"`{key_label(k)}`" for k in binding.key.split(","))
        row = (
            f"| {keys} | {_cell(binding.description)} | {f'`{binding.id}`' if binding.id else ''} |"
        )
        if presented:
            row += " yes |" if binding.action.split("(", 1)[0] in NAVIGATION else " off |"
        rows.append(row)
    return rows
