"""`awsview docs --from FILE -o DIR`: screenshots of a recording — from a real account too.

One page for what was shown before the first checkpoint change, then one per checkpoint
change, each taken just before the next change (the step settled), the last at the end of the
recording; each is the replay screen (panels and time line) in a fresh headless app, plus an
``index.md`` that says when and which checkpoints changed. The same file gives the same pages.
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from awsview.model import keys
from awsview.model.untrusted import markdown, markdown_target
from awsview.recording.file import CHECKPOINTS, PROFILE, ChannelPlayer


@dataclass(frozen=True)
class RecordedPage:
    number: int
    index: int  # frame shown
    title: str
    path: Path


def moments(player: ChannelPlayer) -> list[tuple[int, str]]:
    """(frame, title) of each page: before the first checkpoint change, then each change settled."""
    changes = [
        m.index for m in player.marks[1 : player.last + 1] if m.flags & (CHECKPOINTS | PROFILE)
    ]
    pages = [(changes[0] - 1 if changes else player.last, "before the first checkpoint change")]
    for number, change in enumerate(changes):
        until = changes[number + 1] - 1 if number + 1 < len(changes) else player.last
        pages.append((until, _changed(player, change)))
    return pages


def _changed(player: ChannelPlayer, index: int) -> str:
    before = player.state(index - 1).snapshots.get(keys.CHECKPOINTS)
    after = player.state(index).snapshots.get(keys.CHECKPOINTS)
    old = (
        {(r.checkpoint.step, r.checkpoint.text): r.mark for r in (before.data or ())}
        if before
        else {}
    )
    parts = [
        f"{r.checkpoint.step} {r.mark} {r.checkpoint.text}"
        for r in ((after.data or ()) if after else ())
        if old.get((r.checkpoint.step, r.checkpoint.text)) != r.mark
    ]
    return "; ".join(parts) or "the lab changed"


async def _shoot(
    player: ChannelPlayer, index: int, size: tuple[int, int], theme: str, path: Path
) -> Path:
    from awsview.capture.screenshot import save, still
    from awsview.ui.viewer.app import ViewerOptions
    from awsview.ui.viewer.replay import ReplayApp

    app = ReplayApp(
        player,
        start=index,
        options=ViewerOptions(theme=theme, highlight_seconds=0.01, tick_seconds=3600.0),
    )
    async with app.run_test(size=size) as pilot:
        await still(app, pilot)
        return save(app, path, unique_id=f"awsview-replay-{index}")


def generate(
    source: Path,
    output: Path,
    size: tuple[int, int] = (120, 40),
    theme: str = "docs",
    fmt: str = "svg",
    learner: str | None = None,
) -> list[Path]:
    """The pages of a recording; returns the images, then index.md."""
    from awsview.capture.docs import FORMATS, _check_theme
    from awsview.recording.moments import shown
    from awsview.ui.viewer.replay import open_player

    if fmt not in FORMATS:
        raise ValueError(f"the format must be svg or png, not {fmt!r}")
    _check_theme(theme)
    player = open_player(source, learner)
    shots = moments(player)
    for index, _ in shots:  # a page its panels cannot show is one line before any is written
        shown(player, index)
    output = Path(output)
    _writable(output)
    pages = []
    for number, (index, title) in enumerate(shots):
        moment = datetime.fromtimestamp(player.marks[index].time)
        path = output / f"{number:02d}-{moment:%H%M%S}.{fmt}"
        asyncio.run(_shoot(player, index, size, theme, path))
        pages.append(RecordedPage(number, index, title, path))
    index_file = output / "index.md"
    index_file.write_text(index_markdown(source, player, pages), encoding="utf-8")
    return [p.path for p in pages] + [index_file]


def index_markdown(source: Path, player: ChannelPlayer, pages: list[RecordedPage]) -> str:
    from awsview.recording.moments import describe

    # The file's name, its header (learner, endpoint, account, region) and the checkpoints'
    # words are the recording's: escaped, they show as written and make no link, image or tag.
    lines = [
        f"# {markdown(Path(source).name)}",
        "",
        markdown(describe(player.recording, player)),
        "",
    ]
    for page in pages:
        moment = datetime.fromtimestamp(player.marks[page.index].time)
        lines += [
            f"## {page.number}. {moment:%H:%M:%S} — {markdown(page.title)}",
            "",
            f"![{moment:%H:%M:%S}]({markdown_target(page.path.name)})",
            "",
        ]
    return "\n".join(lines)


def _writable(output: Path) -> None:
    from awsview.capture.docshots import DocsError

    if output.exists() and not output.is_dir():
        raise DocsError(f"{output} is a file; -o wants a directory")
    try:
        output.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=output, prefix=".awsview-docs-"):
            pass
    except OSError as exc:
        raise DocsError(f"cannot write into {output}: {exc.strerror or exc}") from None
