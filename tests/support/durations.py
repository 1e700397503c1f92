"""How long each test took in a recorded run (tests/durations.json), so that the parallel run
hands out its longest work first: a worker that picks up a 60 s module last makes the whole run
wait for it. A unit of work is what one xdist worker takes at once: a group of tests that share a
fixture (their ``xdist_group``), or a single test. Units go out longest first.

The file only orders the run, never selects or skips: a test missing from it (new, renamed) gets
an estimate from its tier. Refresh it with ``make durations`` after adding long tests.

    python -m pytest -n 4 --dist loadgroup -m "not serial" --store-durations tests/durations.json
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

FILE = Path(__file__).resolve().parents[1] / "durations.json"
# A test the file does not know: about what a test of its tier takes.
ESTIMATE_S = {"soak": 60.0, "process": 3.0, "emulator": 2.0, "pure": 0.05}
KEPT_FROM_S = 0.3  # shorter tests are left out of the file: their estimate orders them as well


def recorded(path: Path = FILE) -> dict[str, float]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(v, (int, float))}


def unit_of(item: pytest.Item) -> str:
    """The xdist work unit the item belongs to (loadgroup: its group, else the test alone)."""
    group = item.get_closest_marker("xdist_group")
    if group is not None:
        return str(group.args[0] if group.args else group.kwargs.get("name", "default"))
    return item.nodeid


def longest_first(items: list[pytest.Item], tier_of, durations: dict[str, float]) -> None:
    """Sorts ``items`` so that work units come longest first, each unit's tests together and in
    their order (so its module fixture starts once)."""
    total: dict[str, float] = defaultdict(float)
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        unit = unit_of(item)
        total[unit] += durations.get(item.nodeid, ESTIMATE_S[tier_of(item)])
        first.setdefault(unit, index)
    items.sort(key=lambda item: (-total[unit_of(item)], first[unit_of(item)]))


def bare(nodeid: str) -> str:
    """The test's id without the ``@group`` xdist appends to a grouped test's."""
    at = nodeid.rfind("@")
    return nodeid[:at] if at > nodeid.rfind("]") else nodeid


class Recorder:
    """``--store-durations FILE``: each test's setup + call + teardown, as the controller gets
    the reports, written at the end of the session (tests under KEPT_FROM_S left out)."""

    def __init__(self, path: Path):
        self.path = path
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[bare(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        kept = {k: round(v, 1) for k, v in sorted(self.seconds.items()) if v >= KEPT_FROM_S}
        self.path.write_text(json.dumps(kept, indent=0, sort_keys=True) + "\n", encoding="utf-8")
