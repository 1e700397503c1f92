"""The labs AWS View plays: lab folders (the built-in ones under ``labs/``, or any found on the
search path, see awsview.labspec.folder), and a player that performs their steps."""

from __future__ import annotations

from pathlib import Path

from awsview.labs.definition import Lab, LabError, Step, UnknownLab

BUILTIN = ("ev04", "ev05", "q05")  # what `awsview demo` plays, in order


def get_lab(name: str | Path, lang: str | None = None) -> Lab:
    """The lab folder ``name`` names (a path, or a name on the search path); UnknownLab names
    the known ones. A malformed folder raises SpecError (file:line: what is wrong)."""
    from awsview.labspec.folder import discover, is_folder_reference
    from awsview.labspec.folder import load_folder as read

    text = str(name)
    if isinstance(name, Path) or is_folder_reference(text) or Path(text, "index.json").is_file():
        path = Path(name)
    else:
        found = discover().get(text)
        if found is None:
            raise UnknownLab(text, names())
        path = found[0]
    folder, _ = read(path, lang)
    return Lab(folder)


def names() -> list[str]:
    """The names of every lab found on the search path."""
    from awsview.labspec.folder import discover

    return sorted(discover())


__all__ = ["BUILTIN", "Lab", "LabError", "Step", "UnknownLab", "get_lab", "names"]
