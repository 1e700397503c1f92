"""`awsview docs <lab> -o DIR`: the lab played on a fresh embedded emulator, one screenshot of the
viewer after each step, the graph of each execution the lab ran, the replay screen of a recording
of the play, and an index.md; the same bytes on every run, but for the replay's time line."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

# docshots holds the capture and DocsError; it never imports this module (no cycle).
from awsview.capture.docshots import DocsError, Page
from awsview.model import untrusted
from awsview.model.untrusted import markdown, markdown_target

if TYPE_CHECKING:
    from awsview.labs.model import Lab

# What every page shows instead of the emulator's free port, so two runs match byte for byte.
DOCS_ENDPOINT = "http://127.0.0.1:5000"
FORMATS = ("svg", "png")


def generate(
    lab: str,
    output: Path,
    size: tuple[int, int] = (120, 40),
    theme: str = "docs",
    fmt: str = "svg",
    warn: Callable[[str], None] | None = None,
) -> list[Path]:
    """Play ``lab`` on a fresh in-process emulator; write one image per step and index.md.

    Returns the images in step order, the execution graphs, the replay, then index.md. Raises
    UnknownLab, ValueError (size, format, theme) and DocsError (output not writable, a step failed).
    """
    from awsview.labs import get_lab

    chosen = get_lab(lab)
    if fmt not in FORMATS:
        raise ValueError(f"the format must be svg or png, not {fmt!r}")
    _check_theme(theme)
    output = Path(output)
    _writable(output)
    warn = warn or (lambda message: print(f"awsview: {untrusted.line(message)}", file=sys.stderr))
    scratch = Path(tempfile.mkdtemp(prefix="awsview-docs-"))
    try:
        with _lab_environment(scratch):
            pages = _play(chosen, output, size, theme, fmt, scratch, warn)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    index = output / "index.md"
    steps, graphs, replay = pages
    index.write_text(index_markdown(chosen, steps, graphs, replay), encoding="utf-8")
    return [page.path for page in (*steps, *graphs, replay)] + [index]


def _play(
    lab: Lab,
    output: Path,
    size: tuple[int, int],
    theme: str,
    fmt: str,
    scratch: Path,
    warn: Callable[[str], None],
) -> tuple[list[Page], list[Page], Page]:
    from awsview.capture.docshots import Drawing, capture, render, render_replay
    from awsview.core.freeze import Freezer
    from awsview.emulator.server import EmulatorError, start

    try:
        # One SQS batch at a time: messages are processed in the order the step sent them.
        emulator = start("127.0.0.1", 0, scratch / "emulator", sqs_batches_in_flight=1)
    except EmulatorError as exc:
        raise DocsError(str(exc)) from None
    emulator.start_in_thread()
    try:
        endpoint = emulator.endpoint_url
        port = emulator.port
        freezer = Freezer(
            exact={
                endpoint: DOCS_ENDPOINT,
                f"127.0.0.1:{port}": "127.0.0.1:5000",
                f"localhost:{port}": "localhost:5000",
            }
        )
        recording = scratch / f"{lab.name}.rec"
        profile, captures = asyncio.run(capture(lab, endpoint, freezer, warn, record=recording))
    finally:
        emulator.stop()
    drawing = Drawing(output, size, theme, fmt, freezer)
    steps, graphs = asyncio.run(render(lab, profile, captures, drawing))
    replay = asyncio.run(render_replay(lab, recording, captures, drawing))
    return steps, graphs, replay


@contextmanager
def _lab_environment(scratch: Path) -> Iterator[None]:
    """Testing credentials and a scratch state directory (the viewer's decision memory is kept
    per endpoint; an earlier run on the same port must not show up); the environment and the
    logging handlers are as they were afterwards."""
    from awsview.aws.session import isolate_from_shell

    # Never hand the emulator — nor the viewer polling it — a real account's configuration.
    saved = dict(os.environ)
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level  # the emulator sends logging to its file
    isolate_from_shell()
    os.environ["XDG_STATE_HOME"] = str(scratch / "state")
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
            handler.close()
        for handler in handlers:
            if handler not in root.handlers:
                root.addHandler(handler)
        root.setLevel(level)


def _check_theme(theme: str) -> None:
    from awsview.ui.themes import ThemeError, check

    try:
        check(theme)
    except ThemeError as exc:
        raise ValueError(str(exc)) from None


def _writable(output: Path) -> None:
    if output.exists() and not output.is_dir():
        raise DocsError(f"{output} is a file; -o wants a directory")
    try:
        output.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=output, prefix=".awsview-docs-"):
            pass
    except OSError as exc:
        raise DocsError(f"cannot write into {output}: {exc.strerror or exc}") from None


def index_markdown(
    lab: Lab, pages: list[Page], graphs: list[Page] = (), replay: Page | None = None
) -> str:
    """The lab's title, then each step's number, title and image; each execution's graph; the
    replay. A lab folder's words (name, titles, step keys) are escaped: they show as written."""
    name = markdown(lab.name)
    lines = [
        f"# {name}: {markdown(lab.title)}",
        "",
        f"The viewer after each step of {name}, played on the embedded emulator "
        f"(`awsview docs` {name}).",
        "",
    ]
    for page in pages:
        lines += [f"## {page.number}. {markdown(page.title)}", "", _image(lab, page), ""]
    if graphs:
        lines += [
            "## State machine graphs",
            "",
            "`enter` on each execution the lab ran: its "
            "state machine, each state marked by what it did.",
            "",
        ]
        for page in graphs:
            lines += [f"### {markdown(page.title)}", "", _image(lab, page), ""]
    if replay is not None:
        lines += [
            "## Replay",
            "",
            f"{markdown(replay.title)}: `awsview replay` on a recording made while the lab played "
            "(its frames and times differ from run to run).",
            "",
            f"![{name} replay]({markdown_target(replay.path.name)})",
            "",
        ]
    return "\n".join(lines)


def _image(lab: Lab, page: Page) -> str:
    return f"![{markdown(lab.name)} {markdown(page.key)}]({markdown_target(page.path.name)})"
