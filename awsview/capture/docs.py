"""`awsview docs DIR`: a lab folder played on a fresh embedded emulator (or a local endpoint),
as `awsview lab play` plays it; a screenshot of the viewer after what the lab provides and after
each step, the graph of each execution the lab ran and the replay screen of a recording of the
play, written into the folder's ``assets/``; the image links written into each step text of
every language (awsview.capture.steptexts). With ``-o DIR`` the folder is copied there first
and the copy is shot, with an index.md listing every image; a built-in lab is only shot so.
The same bytes on every run, but for the replay's time line."""

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
from urllib.parse import urlsplit

# docshots holds the capture and DocsError; it never imports this module (no cycle).
from awsview.capture.docshots import SETUP_TITLE, Act, DocsError, Page
from awsview.capture.steptexts import (
    BadFolder,
    StepText,
    block,
    inside,
    placed,
    read_text,
    step_texts,
    write_atomically,
)
from awsview.model import untrusted
from awsview.model.untrusted import markdown, markdown_target

if TYPE_CHECKING:
    from awsview.labs.script import Workspace
    from awsview.labspec import LabSpec
    from awsview.labspec.folder import LabFolder

FORMATS = ("svg", "png")


def generate(
    lab: str,
    output: Path | None = None,
    size: tuple[int, int] = (120, 40),
    theme: str = "docs",
    fmt: str = "svg",
    lang: str | None = None,
    endpoint_url: str | None = None,
    region: str = "us-east-1",
    warn: Callable[[str], None] | None = None,
) -> list[Path]:
    """Play lab ``lab`` (a folder's path, or a name on the labs' search path) and write its
    screenshots and links; with ``output``, into a copy of the folder there. ``endpoint_url``:
    a local endpoint to play on instead of a fresh emulator (the caller refuses others).

    Returns the images (steps, graphs, replay), then each step text written, then index.md
    (with ``output``). Raises ValueError (size, format, theme), BadFolder and SpecError
    (bad input: exit 2) and DocsError (a step failed, a file not writable: exit 1).
    """
    from awsview.labspec import load_folder

    if fmt not in FORMATS:
        raise ValueError(f"the format must be svg or png, not {fmt!r}")
    _check_theme(theme)
    source = lab_folder(lab, output)
    load_folder(source, lang)  # the whole folder validated before anything is copied
    if output is not None and _in_package(Path(output)):
        raise BadFolder(f"{output}: inside the installed package, which is never written")
    folder = _copy(source, Path(output)) if output is not None else source
    profile = load_folder(folder, lang)
    assert profile.folder is not None
    texts = step_texts(folder)
    bodies = {text.path: read_text(text, folder) for text in texts}
    assets = _assets(folder)
    warn = warn or (lambda message: print(f"awsview: {untrusted.line(message)}", file=sys.stderr))
    scratch = Path(tempfile.mkdtemp(prefix="awsview-docs-"))
    drawn = Path(tempfile.mkdtemp(prefix=".awsview-docs-", dir=assets))
    try:
        with _lab_environment(scratch, lang):
            steps, graphs, replay = _play(
                profile.folder,
                profile,
                endpoint_url,
                region,
                scratch,
                drawn,
                (size, theme, fmt),
                warn,
            )
        images = [page.path for page in (*steps, *graphs, replay)]
        for image in images:  # each one whole: renamed into place
            os.replace(image, assets / image.name)
        # The images an earlier run wrote that this one did not (an execution no longer run,
        # the other format): the awsview-* names in assets/ are this command's own.
        kept = {image.name for image in images}
        for old in [*assets.glob("awsview-*.svg"), *assets.glob("awsview-*.png")]:
            if old.name not in kept and old.is_file() and not old.is_symlink():
                old.unlink()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(drawn, ignore_errors=True)
    steps, graphs = [_moved(p, assets) for p in steps], [_moved(p, assets) for p in graphs]
    replay = _moved(replay, assets)
    written = _link(texts, bodies, steps, graphs)
    paths = [page.path for page in (*steps, *graphs, replay)] + written
    if output is not None:
        index = folder / "index.md"
        text = index_markdown(profile.folder, steps, graphs, replay)
        _write(index, text)
        paths.append(index)
    return paths


def lab_folder(lab: str, output: Path | None) -> Path:
    """The folder ``lab`` names; a built-in one (or one inside the installed package) only
    with ``output``: the package is never written."""
    from awsview.labspec.folder import INDEX, discover, is_folder_reference

    if is_folder_reference(lab) or Path(lab, INDEX).is_file():
        path, origin = Path(lab), "path"
    else:
        found = discover().get(lab)
        if found is None:
            known = ", ".join(sorted(discover())) or "none"
            raise BadFolder(f"no lab {lab!r}: give a lab folder's path, or one of: {known}")
        path, origin = found
    if not (path / INDEX).is_file():
        raise BadFolder(f"{path}: not a lab folder: it has no {INDEX}")
    if output is None and (origin == "built-in" or _in_package(path)):
        raise BadFolder(
            f"{lab} is a built-in lab: its folder is not written; give -o DIR "
            "(the lab is copied there and the copy is shot)"
        )
    return path


def _in_package(path: Path) -> bool:
    import awsview

    return path.resolve().is_relative_to(Path(awsview.__file__).resolve().parent)


def _copy(source: Path, output: Path) -> Path:
    """The lab folder copied into ``output`` (links copied as links, so refused later)."""
    if output.exists() and not output.is_dir():
        raise DocsError(f"{output} is a file; -o wants a directory")
    if output.resolve() == source.resolve():
        return output
    try:
        shutil.copytree(source, output, symlinks=True, dirs_exist_ok=True)
    except (OSError, shutil.Error) as exc:
        raise DocsError(f"cannot copy the lab into {output}: {_said(exc)}") from None
    return output


def _said(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return " ".join(str(exc).split())[:300]


def _assets(folder: Path) -> Path:
    """The folder's ``assets/``, made if missing, checked writable before anything is played."""
    assets = folder / "assets"
    if assets.is_symlink() or (assets.exists() and not assets.is_dir()):
        inside(folder, assets, "assets/")
        raise BadFolder(f"{assets}: not a directory")
    try:
        assets.mkdir(exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=assets, prefix=".awsview-docs-"):
            pass
    except OSError as exc:
        raise DocsError(f"cannot write into {assets}: {exc.strerror or exc}") from None
    return assets


def _moved(page: Page, assets: Path) -> Page:
    return Page(page.number, page.key, page.title, assets / page.path.name)


def _link(
    texts: list[StepText], bodies: dict[Path, str], steps: list[Page], graphs: list[Page]
) -> list[Path]:
    """Each step text with its block of links: the step's shot, then the graphs shot after it."""
    written = []
    for text in texts:
        images: list[tuple[str, Path]] = [
            (f"AWS View after step {text.number}: {text.title}", page.path)
            for page in steps
            if page.number == text.number
        ]
        images += [(page.title, page.path) for page in graphs if page.number == text.number]
        new = placed(bodies[text.path], text.number, block(text, images))
        if new != bodies[text.path]:
            _write(text.path, new)
        written.append(text.path)
    return written


def _write(path: Path, text: str) -> None:
    try:
        write_atomically(path, text.encode("utf-8"))
    except OSError as exc:
        raise DocsError(f"cannot write {path}: {exc.strerror or exc}") from None


def _acts(folder: LabFolder, workspace: Workspace) -> list[Act]:
    """What the lab provides (setup.sh), then each step's commands, as `lab play` runs them."""
    from awsview.labs.script import STEP_TIMEOUT, step_commands

    def run(commands: str, name: str, label: str) -> None:
        outcome = workspace.run(commands, name, STEP_TIMEOUT)
        if not outcome.ok:
            raise DocsError(f"{label}: {outcome.said()}")

    acts: list[Act] = [
        (
            "setup",
            SETUP_TITLE,
            (
                lambda: run(
                    workspace.script(folder.background),
                    "setup.sh",
                    f"{folder.name} setup ({folder.background})",
                )
            )
            if folder.background
            else (lambda: None),
        )
    ]
    for step in folder.steps:
        commands, _ = step_commands(folder, step)
        label = f"{folder.name} step {step.number}/{len(folder.steps)} {step.key}"
        acts.append(
            (
                step.key,
                step.title,
                lambda c=commands, n=step.number, lbl=label: run(c, f"step{n}.sh", lbl),
            )
        )
    return acts


def _play(
    folder: LabFolder,
    profile: LabSpec,
    endpoint_url: str | None,
    region: str,
    scratch: Path,
    output: Path,
    look: tuple[tuple[int, int], str, str],
    warn: Callable[[str], None],
) -> tuple[list[Page], list[Page], Page]:
    from awsview.capture.docshots import Drawing, capture, render, render_replay
    from awsview.core.determinism import Deterministic
    from awsview.labs.script import Workspace

    with _endpoint(endpoint_url, scratch / "emulator") as endpoint:
        shown = urlsplit(folder.endpoint)
        real = urlsplit(endpoint)
        # What every page shows instead of the endpoint played on: the one the lab hard-codes.
        deterministic = Deterministic(
            exact={
                endpoint.rstrip("/"): folder.endpoint,
                real.netloc: shown.netloc,
                f"localhost:{real.port}": f"localhost:{shown.port}",
            }
        )
        workspace = Workspace(folder, endpoint, region, isolated=True)
        recording = scratch / f"{folder.name}.rec"
        try:
            acts = _acts(folder, workspace)
            _, captures = asyncio.run(
                capture(
                    str(folder.path.resolve()),
                    acts,
                    endpoint,
                    deterministic,
                    warn,
                    record=recording,
                    region=region,
                )
            )
        finally:
            workspace.close()
    drawing = Drawing(output, *look, deterministic)
    steps, graphs = asyncio.run(render(folder.name, profile, captures, drawing))
    replay = asyncio.run(render_replay(folder.name, recording, captures, drawing))
    return steps, graphs, replay


@contextmanager
def _endpoint(endpoint_url: str | None, state: Path) -> Iterator[str]:
    """``endpoint_url``, or a fresh embedded emulator on a free port for the play."""
    from awsview.emulator.server import EmulatorError, start

    if endpoint_url is not None:
        yield endpoint_url
        return
    try:
        # One SQS batch at a time: messages are processed in the order the step sent them.
        emulator = start("127.0.0.1", 0, state, sqs_batches_in_flight=1)
    except EmulatorError as exc:
        raise DocsError(str(exc)) from None
    emulator.start_in_thread()
    try:
        yield emulator.endpoint_url
    finally:
        emulator.stop()


@contextmanager
def _lab_environment(scratch: Path, lang: str | None = None) -> Iterator[None]:
    """Testing credentials and a scratch state directory (the viewer's decision memory is kept
    per endpoint; an earlier run on the same port must not show up); with ``lang``, the viewer
    reads the lab's checkpoints in that language. The environment and the logging handlers are
    as they were afterwards."""
    from awsview.aws.session import isolate_from_shell

    # Never hand the emulator — nor the viewer polling it — a real account's configuration.
    saved = dict(os.environ)
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level  # the emulator sends logging to its file
    isolate_from_shell()
    os.environ["XDG_STATE_HOME"] = str(scratch / "state")
    if lang:
        os.environ["LANG"] = lang  # the viewer loads the lab's profile in $LANG's language
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


def index_markdown(folder: LabFolder, pages: list[Page], graphs: list[Page], replay: Page) -> str:
    """The lab's title, then each step's number, title and image; each execution's graph; the
    replay. A lab folder's words (name, titles, step keys) are escaped: they show as written."""
    name = markdown(folder.name)
    lines = [
        f"# {name}: {markdown(folder.title)}",
        "",
        f"The viewer after each step of {name}, played on the embedded emulator "
        f"(`awsview docs {name} -o DIR`).",
        "",
    ]
    texts = {step.number: step.text for step in folder.steps}
    for page in pages:
        lines += [f"## {page.number}. {markdown(page.title)}", "", _image(folder, page), ""]
        if page.number in texts:
            target = "/".join(markdown_target(p) for p in texts[page.number].split("/"))
            lines += [f"The step's text: [{markdown(texts[page.number])}]({target})", ""]
    if graphs:
        lines += [
            "## State machine graphs",
            "",
            "`enter` on each execution the lab ran: its "
            "state machine, each state marked by what it did.",
            "",
        ]
        for page in graphs:
            lines += [f"### {markdown(page.title)}", "", _image(folder, page), ""]
    lines += [
        "## Replay",
        "",
        f"{markdown(replay.title)}: `awsview replay` on a recording made while the lab played "
        "(its frames and times differ from run to run).",
        "",
        f"![{name} replay](assets/{markdown_target(replay.path.name)})",
        "",
    ]
    return "\n".join(lines)


def _image(folder: LabFolder, page: Page) -> str:
    alt = f"{markdown(folder.name)} {markdown(page.key)}"
    return f"![{alt}](assets/{markdown_target(page.path.name)})"
