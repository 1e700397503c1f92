"""Freezing what changes from run to run — clock times, ages, durations, generated ids — so
screenshots of the same lab step are byte-identical (``awsview docs``)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from awsview.core.render import DEPTH_COLUMN, Panel, Row

UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
HEX_ID = re.compile(r"\b[0-9a-f]{32}\b", re.I)
# "CodeSha256 <first 12> → <first 12>" (a checkpoint); the CODE column is frozen as a whole cell.
CODE_SHA = re.compile(r"\bCodeSha256 ([A-Za-z0-9+/]+=*)(?: → ([A-Za-z0-9+/]+=*))?")
CLOCK = re.compile(r"\b\d{2}:\d{2}:\d{2}\b")
AGE = re.compile(r"\b\d+(?:\.\d+)? (?:s|min) ago\b")
SECONDS = re.compile(r"\b(\d+)\.\d+ s\b")
SHORT_ID = re.compile(
    r"\b[0-9a-f]{8}\b"
)  # the first 8 of a uuid, in "SQS message …" and "request …"
EPOCH_MS = re.compile(r"\b1[5-9]\d{11}\b")  # e.g. SQS SentTimestamp
FROZEN_EPOCH_MS = 1767268800000  # 2026-01-01 12:00:00 UTC, to go with the frozen clocks
REPORT_FIGURE = re.compile(
    r"\b(Duration|Billed Duration|Init Duration|Max Memory Used): \d+(\.\d+)? (ms|MB)"
)


@dataclass
class Deterministic:
    """Replaces volatile text consistently: the same id always becomes the same placeholder."""

    ids: dict[str, str] = field(default_factory=dict)
    clocks: dict[str, str] = field(default_factory=dict)
    shas: dict[str, str] = field(default_factory=dict)
    exact: dict[str, str] = field(
        default_factory=dict
    )  # literal replacements, e.g. an endpoint URL
    # Clock times ("HH:MM:SS", local) at which each phase (a lab step) began. With phases, a time
    # becomes 12:<phase>:00: which step it happened in survives, seconds-boundary luck does not.
    phases: list[str] = field(default_factory=list)

    def _id(self, match: re.Match[str]) -> str:
        # Keyed by the first 8 characters: a uuid and its short form get the same name.
        return self.ids.setdefault(match.group(0).lower()[:8], f"id-{len(self.ids) + 1:04d}")

    def _clock(self, match: re.Match[str]) -> str:
        return self._name_clock(match.group(0))

    def _name_clock(self, clock: str) -> str:
        if clock not in self.clocks:
            if self.phases:
                phase = max(0, sum(1 for start in self.phases if start <= clock) - 1)
                self.clocks[clock] = f"12:{phase:02d}:00"
            else:
                n = len(self.clocks)
                self.clocks[clock] = f"12:{n // 60:02d}:{n % 60:02d}"
        return self.clocks[clock]

    def begin_phase(self, at: float | None = None) -> None:
        """A new phase (lab step) starts now; the times it shows will say so."""
        self.phases.append(time.strftime("%H:%M:%S", time.localtime(at)))

    def _epoch_ms(self, match: re.Match[str]) -> str:
        clock = self._name_clock(
            time.strftime("%H:%M:%S", time.localtime(int(match.group(0)) / 1000))
        )
        hours, minutes, seconds = (int(n) for n in clock.split(":"))
        return str(FROZEN_EPOCH_MS + ((hours - 12) * 3600 + minutes * 60 + seconds) * 1000)

    def _code_sha(self, match: re.Match[str]) -> str:
        names = [self._sha_cell(value) for value in match.groups() if value]
        return "CodeSha256 " + " → ".join(names)

    def text(self, value: str) -> str:
        for volatile, stable in self.exact.items():
            value = value.replace(volatile, stable)
        value = UUID.sub(self._id, value)
        value = HEX_ID.sub(self._id, value)
        if "SQS message" in value or " request " in value:
            value = SHORT_ID.sub(self._id, value)
        value = AGE.sub("just now", value)
        value = CLOCK.sub(self._clock, value)
        value = EPOCH_MS.sub(self._epoch_ms, value)
        value = REPORT_FIGURE.sub(
            lambda m: f"{m.group(1)}: 0{'.00' if m.group(2) else ''} {m.group(3)}", value
        )
        value = SECONDS.sub(lambda m: f"{int(m.group(1))} s", value)
        if "CodeSha256 " in value:
            value = CODE_SHA.sub(self._code_sha, value)
        return value

    def panel(self, panel: Panel) -> Panel:
        rows = tuple(Row(row.key, tuple(self.text(c) for c in row.cells)) for row in panel.rows)
        # A queue's sparklines place each change in time: no two runs draw them alike.
        depth = [i for i, c in enumerate(panel.columns) if c == DEPTH_COLUMN]
        if depth:
            rows = tuple(
                Row(r.key, tuple("—" if i in depth else c for i, c in enumerate(r.cells)))
                for r in rows
            )
        code_column = [i for i, c in enumerate(panel.columns) if c == "CODE"]
        if code_column:  # code hashes get stable names too
            rows = tuple(
                Row(
                    r.key,
                    tuple(
                        self._sha_cell(c) if i in code_column else c for i, c in enumerate(r.cells)
                    ),
                )
                for r in rows
            )
        return replace(
            panel,
            title=self.text(panel.title),
            freshness=self.text(panel.freshness),
            note=self.text(panel.note),
            rows=rows,
        )

    def _sha_cell(self, value: str) -> str:
        """A code hash's name; keyed by its first 12 characters, as the panels show it."""
        if value in ("—", ""):
            return value
        return self.shas.setdefault(value[:12], f"sha-{len(self.shas) + 1}")

    def panels(self, panels: Iterable[Panel]) -> list[Panel]:
        return [self.panel(p) for p in panels]
