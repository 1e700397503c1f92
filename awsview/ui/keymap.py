"""Keys of one's own: the ``[keymap]`` table of config.toml gives a binding, by its id, other keys.

    [keymap]
    copy = "c"              # y copies the focused row: now c does
    quit = "ctrl+q"
    next-panel = "l,right_square_bracket"

The ids are the bindings' (`Binding(id=…)`, listed by `?` and in the key reference), applied
with Textual's `App.set_keymap`. An entry that cannot be used (an unknown id, a key Textual has
no name for, a key another binding keeps) is left out and said in one line naming the file and
its line; the others apply. Like the rest of config.toml, it never stops the viewer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual.binding import Binding
from textual.keys import Keys, _character_to_key

from awsview.model.textfile import read_utf8, shown

MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})
_NAMED = frozenset(k.value for k in Keys) | frozenset(
    {"space", "question_mark", "slash", "full_stop", "comma", "minus", "plus", "equals_sign"}
)


def valid_key(key: str) -> bool:
    """A key Textual can name: ``y``, ``Y``, ``f5``, ``ctrl+q``, ``question_mark``, ``?``…"""
    *modifiers, base = key.strip().split("+") if key.strip() != "+" else ["+"]
    if not base or not set(modifiers) <= MODIFIERS:
        return False
    if len(base) == 1:
        return base.isprintable()
    return base in _NAMED or _character_to_key(base) != base


def normalized(keys: str) -> list[str]:
    """Each key of a comma-separated list in Textual's long form (``?`` → ``question_mark``)."""
    return [
        _character_to_key(k) if len(k) == 1 else k for k in (k.strip() for k in keys.split(","))
    ]


def ids(bindings: Iterable[Binding]) -> dict[str, Binding]:
    return {b.id: b for b in bindings if b.id}


def check(
    entries: Any, path: Path, text: str, bindings: Iterable[Binding]
) -> tuple[dict[str, str], list[str]]:
    """(the usable entries, a line for each unusable one). ``bindings``: every binding the
    entries may name, to check the ids and which keys stay taken."""
    known = ids(bindings)
    if not isinstance(entries, dict):
        return {}, [f'{path}:{_line(text, "keymap") or 1}: [keymap] holds id = "key" lines']
    kept: dict[str, str] = {}
    problems: list[str] = []
    for name, keys in entries.items():
        where = f"{path}:{_line(text, name) or 1}: keymap"
        if name not in known:
            listed = ", ".join(sorted(known))
            problems.append(f"{where}: no binding {shown(name)!r} (ids: {listed})")
        elif not isinstance(keys, str) or not keys.strip():
            problems.append(f'{where}: {shown(name)} takes a key in quotes, like "ctrl+q"')
        elif bad := [k for k in keys.split(",") if not valid_key(k)]:
            problems.append(f"{where}: {shown(name)} = {shown(keys)!r}: no key {shown(bad[0])!r}")
        else:
            kept[name] = ",".join(normalized(keys))
    # A key still bound to something else (not rebound away from it) would serve two actions.
    taken = {
        key: other
        for other, binding in known.items()
        if other not in kept
        for key in normalized(binding.key)
    }
    for name, keys in list(kept.items()):
        clash = next((taken[k] for k in normalized(keys) if taken.get(k) not in (None, name)), None)
        if clash is not None:
            del kept[name]
            problems.append(
                f"{path}:{_line(text, name) or 1}: keymap: {shown(name)} = {shown(keys)!r}: "
                f"that key is {clash}'s (rebind {clash} too)"
            )
    return kept, problems


def _line(text: str, name: str) -> int | None:
    """The line that sets ``name`` in the [keymap] table (or the table's own line)."""
    pattern = re.compile(rf"^\s*(\[\s*{re.escape(name)}\s*\]|[\"']?{re.escape(name)}[\"']?\s*=)")
    section = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.replace(" ", "") == "[keymap]"
            if section and name == "keymap":
                return number
            continue
        if section and pattern.match(line):
            return number
    return None


def every_binding() -> list[Binding]:
    """The bindings a keymap may name: the viewer's, the replay's and the class view's."""
    from awsview.ui.classview.learner import LearnerScreen
    from awsview.ui.classview.view import ClassApp, GridScreen
    from awsview.ui.viewer.app import AWSViewApp
    from awsview.ui.viewer.replay import ReplayApp

    found: list[Binding] = []
    for source in (AWSViewApp, ReplayApp, ClassApp, GridScreen, LearnerScreen):
        found += [b for b in source.BINDINGS if isinstance(b, Binding)]
    return found


def load() -> tuple[dict[str, str], str | None]:
    """The keymap of config.toml, and one line for what of it was left out (None: nothing)."""
    from awsview.ui import preferences

    saved, _ = preferences.load()
    if "keymap" not in saved:
        return {}, None
    path = preferences.path()
    try:
        text = read_utf8(path)
    except (OSError, ValueError):  # NotText: said by preferences.load already
        text = ""
    kept, problems = check(saved["keymap"], path, text, every_binding())
    if not problems:
        return kept, None
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return kept, f"{problems[0]}{more}; left out"
