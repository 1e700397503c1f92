"""The PNG font: DejaVu Sans Mono where Debian puts it, else what fontconfig calls monospace."""

from __future__ import annotations

import shutil

import pytest

from awsview.capture import screenshot


@pytest.mark.process  # starts the CLI in a process of its own
@pytest.mark.skipif(shutil.which("fc-match") is None, reason="needs fontconfig's fc-match")
def test_the_font_is_found_through_fontconfig_away_from_the_debian_paths(monkeypatch, tmp_path):
    monkeypatch.setattr(screenshot, "FONT_CANDIDATES", (str(tmp_path / "none.ttf"),))
    regular, _bold = screenshot.fonts()
    assert regular.lower().endswith((".ttf", ".otf", ".ttc"))
    from PIL import ImageFont

    assert ImageFont.truetype(regular, 16).getlength("M") > 0


def test_no_font_at_all_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(screenshot, "FONT_CANDIDATES", (str(tmp_path / "none.ttf"),))
    monkeypatch.setenv("PATH", str(tmp_path))  # no fc-match
    with pytest.raises(screenshot.ScreenshotError) as raised:
        screenshot.fonts()
    assert "fonts-dejavu-core" in str(raised.value) and "fc-match" in str(raised.value)
