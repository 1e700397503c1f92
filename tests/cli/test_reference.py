"""The docs site's generated reference and the README's links: what `make docs` builds from the
code must name every command, option and key, and the README must lead somewhere real."""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path
from types import ModuleType

from awsview.cli.main import build_parser
from awsview.ui.classview.view import GridScreen
from awsview.ui.viewer.app import AWSViewApp
from awsview.ui.viewer.replay import ReplayApp

TOP = Path(__file__).resolve().parents[2]


def _hook() -> ModuleType:
    path = TOP / "docs" / "hooks" / "reference.py"
    spec = importlib.util.spec_from_file_location("docs_reference_hook", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_the_command_reference_names_every_command_and_option() -> None:
    page = _hook().cli_reference()
    for name, command in _commands().items():
        assert f"## awsview {name}\n" in page, name
        for action in command._actions:
            if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
                continue
            for flag in action.option_strings:
                assert re.search(rf"[`\s]{re.escape(flag)}[ ,`]", page), (name, flag)


def test_the_key_reference_names_every_binding() -> None:
    page = _hook().keys_reference()
    for app in (AWSViewApp, ReplayApp, GridScreen):
        for binding in app.BINDINGS:
            assert f"| {binding.description} |" in page, binding  # type: ignore[union-attr]


def test_the_readme_starts_people_and_its_links_lead_somewhere() -> None:
    readme = (TOP / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if "://" not in t]
    assert local
    missing = [t for t in local if not (TOP / t).exists()]
    assert not missing, missing
