"""One table from one `make bench`: every section saves its rows, this prints them together.

    python -m tests.benchmarks.summary DIR [--markdown]

Each bench module given ``--out DIR`` writes ``DIR/<section>.json`` (its rows and whether the
machine was quiet or busy); a section run alone prints its own rows and saves nothing unless
asked. ``--busy N`` starts N processes that burn a core each beside the measured ones, for the
figures the issue asks under load ("two busy processes beside it"); the table says which.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HEADER = ("figure", "AWS View", "baseline / yardstick", "target", "met", "what limits it", "load")
# The order of the sections in the table (the rows: change → screen and calls first;
# then bench_cost's calls per API against AWS's quotas and bench_labs' lab checks).
SECTIONS = ("emulator", "stock", "keypress", "paint", "docs", "class", "quotas", "labs")
BURN = "while True: pass"


@dataclass(frozen=True)
class Options:
    busy: int = 0
    out: Path | None = None
    only: str | None = None
    quick: bool = False

    @property
    def load(self) -> str:
        return f"busy {self.busy}" if self.busy else "quiet"


def options(argv: list[str]) -> tuple[Options, list[str]]:
    """``--busy N``, ``--out DIR``, ``--only SECTION``, ``--quick``; the other arguments back."""
    rest, found = [], {}
    args = iter(argv)
    for arg in args:
        if arg in ("--busy", "--out", "--only"):
            value = next(args, None)
            if value is None:
                sys.exit(f"bench: {arg} needs a value")
            found[arg[2:]] = value
        elif arg == "--quick":
            found["quick"] = True
        else:
            rest.append(arg)
    try:
        busy = int(found.get("busy", 0))
    except ValueError:
        sys.exit(f"bench: --busy expects a number of processes, not {found['busy']!r}")
    if busy < 0:
        sys.exit("bench: --busy expects 0 or more processes")
    out = Path(found["out"]) if "out" in found else None
    return Options(busy, out, found.get("only"), bool(found.get("quick"))), rest


@contextmanager
def busy(n: int) -> Iterator[None]:
    """N processes burning a core each for the duration (ended by their pid)."""
    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(n)]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def save(opts: Options, section: str, rows: list[tuple[str, ...]]) -> None:
    """Rows of (figure, AWS View, baseline, target, met, what limits it) for the summary."""
    if opts.out is None:
        return
    opts.out.mkdir(parents=True, exist_ok=True)
    # Busy processes are the bench's own; the load average also counts whatever else runs.
    load = f"{opts.load}, load average {os.getloadavg()[0]:.1f}"
    document = {"load": load, "rows": [list(r) for r in rows]}
    (opts.out / f"{section}.json").write_text(json.dumps(document, ensure_ascii=False))


def print_table(rows: list[tuple[str, ...]], header: tuple[str, ...] = HEADER) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for cells in (header, tuple("-" * w for w in widths), *rows):
        print("| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |")


def markdown(rows: list[tuple[str, ...]], header: tuple[str, ...] = HEADER) -> None:
    """The same table as compact Markdown (docs/performance.md)."""
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for row in rows:
        print("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |")


def main(folder: Path, as_markdown: bool = False) -> None:
    rows: list[tuple[str, ...]] = []
    missing = []
    for section in SECTIONS:
        path = folder / f"{section}.json"
        if not path.exists():
            missing.append(section)
            continue
        document = json.loads(path.read_text())
        rows += [(*row, document["load"]) for row in document["rows"]]
    if as_markdown:
        markdown(rows)
        return
    print(f"\nmake bench: one table ({os.cpu_count()} cores)")
    print_table(rows)
    if missing:
        print(f"sections that saved no rows: {', '.join(missing)}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--markdown"]
    if len(args) != 1:
        sys.exit("usage: python -m tests.benchmarks.summary DIR [--markdown]")
    main(Path(args[0]), "--markdown" in sys.argv[1:])
