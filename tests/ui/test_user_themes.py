"""Themes of the user's own, from ``$XDG_CONFIG_HOME/awsview/themes``, beside the built-in ones."""

from __future__ import annotations

import pytest

from awsview import labspec
from awsview.model.state import LabState
from awsview.ui import themes
from awsview.ui.viewer.app import AWSViewApp, ViewerOptions


@pytest.fixture
def user_themes(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    folder = tmp_path / "awsview" / "themes"
    folder.mkdir(parents=True)
    return folder


def test_a_user_theme_is_listed_and_can_be_picked(user_themes):
    (user_themes / "mine.toml").write_text('name = "mine"\nprimary = "#ff8800"\n')
    assert "mine" in [t.name for t in themes.load_all()]
    themes.check("mine")
    app = AWSViewApp(
        model=LabState(), profile=labspec.load("q05"), options=ViewerOptions(theme="mine")
    )
    assert app.theme == "mine"
    assert "mine" in app.awsview_themes  # `t` and the palette list it


def test_a_user_theme_of_a_built_in_name_wins(user_themes):
    (user_themes / "dark.toml").write_text('name = "awsview-dark"\nprimary = "#123456"\n')
    loaded = {t.name: t for t in themes.load_all()}
    assert loaded["awsview-dark"].primary == "#123456"
    assert [t.name for t in themes.load_all()].count("awsview-dark") == 1


def test_a_broken_user_theme_is_one_line_naming_it(user_themes):
    (user_themes / "bad.toml").write_text('name = "bad"\nprimary = "not-a-colour"\n')
    with pytest.raises(themes.ThemeError) as raised:
        themes.check(None)
    assert str(raised.value).startswith(str(user_themes / "bad.toml"))
    assert "\n" not in str(raised.value)
