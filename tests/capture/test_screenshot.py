"""`awsview screenshot`: SVG and PNG (drawn with DejaVu Sans Mono) of the viewer on an endpoint."""

from __future__ import annotations

import subprocess

from PIL import Image

from tests.support import processes


def _shot(emulator, *args: str) -> subprocess.CompletedProcess:
    return processes.awsview(
        "screenshot",
        "--lab",
        "q05",
        "--endpoint-url",
        emulator.endpoint_url,
        *args,
        timeout=120,
        env=emulator.env,
    )


def test_svg_and_png_of_the_viewer(starts_processes, played_lab, tmp_path):
    emulator = played_lab("q05", "deploy")
    svg = tmp_path / "q05.svg"
    result = _shot(emulator, "-o", str(svg), "--size", "100x30")
    assert result.returncode == 0, result.stderr
    assert "still waiting" not in result.stderr  # every panel answered, not a timeout's leftovers
    text = svg.read_text()
    assert text.startswith("<svg") and "labex-q05-jobs" in text and "dedup" in text
    png = tmp_path / "q05.png"
    result = _shot(emulator, "-o", str(png), "--size", "100x30")
    assert result.returncode == 0, result.stderr
    image = Image.open(png)
    assert image.format == "PNG" and image.size[0] >= 100 * 8 and image.size[1] >= 30 * 15
    assert len(image.getcolors(1 << 20) or ()) > 4  # text and colours were drawn, not a blank page


def test_bad_size_and_suffix_are_one_line(starts_processes, emulator, tmp_path):
    result = _shot(emulator, "-o", str(tmp_path / "x.jpg"))
    assert result.returncode == 2 and "must end in .svg or .png" in result.stderr
    result = _shot(emulator, "-o", str(tmp_path / "x.png"), "--size", "big")
    assert result.returncode == 2 and "--size must look like 120x40" in result.stderr
