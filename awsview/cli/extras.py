"""Optional parts and what they need. The viewer itself needs only Textual, rich and
aiobotocore (and boto3 for `awsview lab`); the embedded emulator, the browser presenter screen
and PNG output are extras, so that watching AWS does not install a whole moto server.

A command whose extra is missing says which one to install, in one line (exit 2).
"""

from __future__ import annotations

import importlib.util

from awsview.model.errors import UserError

# extra -> the modules it provides (checked without importing them)
EXTRAS: dict[str, tuple[str, ...]] = {
    "emulator": ("moto", "werkzeug", "flask"),
    "serve": ("textual_serve",),
    "png": ("PIL",),
}


class MissingExtra(UserError):
    """A command needs an extra that is not installed (one line)."""


def missing(extra: str) -> bool:
    return any(importlib.util.find_spec(module) is None for module in EXTRAS[extra])


def require(extra: str, what: str) -> None:
    """Raise MissingExtra unless ``extra`` is installed; ``what`` names what needs it."""
    if missing(extra):
        raise MissingExtra(
            f"{what} needs the {extra} extra, which is not installed: "
            f"pipx install 'awsview[{extra}]' (or pip install 'awsview[{extra}]', "
            f"uv tool install 'awsview[{extra}]')"
        )
