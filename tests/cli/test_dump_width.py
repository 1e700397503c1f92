"""`awsview dump` fits COLUMNS, the terminal or --width, leaving out the columns the viewer
would; --width 0 and a pipe keep whole lines; --json does not depend on any width."""

from __future__ import annotations

import pytest

from awsview.core.textgrid import cells
from tests.recording.test_recording import _record
from tests.support.cli import awsview_here

pytestmark = pytest.mark.usefixtures("utc")  # times in the dump read the same everywhere


def _dump(*args: str, columns: str | None = None, env: dict | None = None) -> str:
    """What `awsview dump ARGS` writes (called in this process): COLUMNS as given, else none."""
    env = {**(env or {}), **({"COLUMNS": columns} if columns is not None else {})}
    done = awsview_here("dump", *args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    path = tmp_path_factory.mktemp("dump") / "q05.rec"
    _record(path, steps=4)
    return path


def _widest(text: str) -> int:
    return max(cells(line) for line in text.splitlines())


def test_dump_fits_columns_and_says_what_it_left_out(recording):
    whole = _dump("--from", str(recording))  # a pipe, no COLUMNS: whole lines, as before
    assert _widest(whole) > 100
    fitted = _dump("--from", str(recording), columns="80")
    assert _widest(fitted) <= 80
    assert "not shown: " in fitted  # minor columns left out, as the viewer does
    assert _dump("--from", str(recording), "--width", "70", columns="200") == _dump(
        "--from", str(recording), columns="70"
    )
    assert _dump("--from", str(recording), "--width", "0", columns="80") == whole


def test_dump_json_is_the_same_whatever_the_width(recording):
    wide = _dump("--from", str(recording), "--json")
    assert _dump("--from", str(recording), "--json", columns="40") == wide
    assert _dump("--from", str(recording), "--json", "--width", "30") == wide


def test_live_dump_fits_columns(emulator):
    whole = _dump("--endpoint-url", emulator.endpoint_url, "--width", "0", env=emulator.env)
    assert _widest(whole) > 40
    fitted = _dump("--endpoint-url", emulator.endpoint_url, columns="40", env=emulator.env)
    assert fitted.startswith("AWS View — ") and _widest(fitted) <= 40


def test_a_negative_width_is_one_line():
    done = awsview_here("dump", "--width", "-1")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "--width -1" in done.stderr
