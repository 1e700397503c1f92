"""What the viewer remembers between runs, in ``$XDG_CONFIG_HOME/awsview/config.toml``
(``~/.config/awsview/config.toml`` when XDG_CONFIG_HOME is not set)::

    theme = "awsview-light"  # the theme last picked with t or the palette (--theme wins)
    usage = true             # the status line shows the API calls and read units used (u)

    [keymap]                 # keys of one's own, by binding id (awsview.ui.keymap)
    copy = "c"

Only the viewer started from the command line reads and writes it. A file that cannot be read
or has an unknown key or a value of the wrong type is ignored with a one-line notice, never an
error: it must not stop anyone from watching a lab.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

from awsview.model.textfile import NotText, read_utf8

KEYS: dict[str, type] = {"theme": str, "usage": bool, "keymap": dict}


def path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "awsview" / "config.toml"


def load() -> tuple[dict[str, Any], str | None]:
    """(preferences, a one-line problem or None). Missing file: no preferences, no problem."""
    file = path()
    try:
        data = tomllib.loads(read_utf8(file))
    except FileNotFoundError:
        return {}, None
    except NotText as exc:
        return {}, f"{exc} (ignored)"
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return {}, f"{file}: {exc} (ignored)"
    kept = {k: v for k, v in data.items() if k in KEYS and isinstance(v, KEYS[k])}
    wrong = sorted(set(data) - set(kept))
    return kept, (
        f'{file}: ignored {", ".join(wrong)} (known: theme = "…", usage = true|false, [keymap])'
        if wrong
        else None
    )


def save(**changes: Any) -> str | None:
    """Merge ``changes`` into the file (written whole, atomically); a one-line problem or None."""
    current, _ = load()
    current.update({k: v for k, v in changes.items() if k in KEYS and isinstance(v, KEYS[k])})
    file = path()
    lines = ["# AWS View preferences, written by the viewer (see the docs: Files)"]
    # JSON strings are TOML strings; a table (the keymap) goes last, as TOML wants.
    lines += [
        f"{k} = {json.dumps(v)}" for k, v in sorted(current.items()) if not isinstance(v, dict)
    ]
    for table, entries in sorted((k, v) for k, v in current.items() if isinstance(v, dict)):
        lines += ["", f"[{table}]"]
        lines += [
            f"{json.dumps(str(k))} = {json.dumps(v)}"
            for k, v in entries.items()
            if isinstance(v, str)
        ]
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        scratch = file.with_suffix(".toml.tmp")
        scratch.write_text("\n".join(lines) + "\n", encoding="utf-8")
        scratch.replace(file)
    except OSError as exc:
        return f"{file}: cannot save preferences: {exc.strerror or exc}"
    return None
