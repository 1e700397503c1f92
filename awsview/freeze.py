"""Freezing what changes from run to run — clock times, ages, durations, generated ids — so
screenshots of the same lab step are byte-identical (``awsview docs``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Iterable

from awsview.render import Panel, Row

UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
HEX_ID = re.compile(r"\b[0-9a-f]{32}\b", re.I)
SHA = re.compile(r"\b[A-Za-z0-9+/]{10,}={0,2}(?=[^A-Za-z0-9+/=]|$)")
CLOCK = re.compile(r"\b\d{2}:\d{2}:\d{2}\b")
AGE = re.compile(r"\b\d+(?:\.\d+)? (?:s|min) ago\b")
SECONDS = re.compile(r"\b(\d+)\.\d+ s\b")
REQUEST_ID = re.compile(r"\b(request|RequestId:?) [0-9a-f]{8}\b")


@dataclass
class Freezer:
    """Replaces volatile text consistently: the same id always becomes the same placeholder."""

    ids: dict[str, str] = field(default_factory=dict)
    clocks: dict[str, str] = field(default_factory=dict)
    shas: dict[str, str] = field(default_factory=dict)

    def _id(self, match: re.Match[str]) -> str:
        return self.ids.setdefault(match.group(0).lower(), f"id-{len(self.ids) + 1:04d}")

    def _clock(self, match: re.Match[str]) -> str:
        if match.group(0) not in self.clocks:
            n = len(self.clocks)
            self.clocks[match.group(0)] = f"12:{n // 60:02d}:{n % 60:02d}"
        return self.clocks[match.group(0)]

    def _sha(self, match: re.Match[str]) -> str:
        text = match.group(0)
        if not any(c.isdigit() for c in text) or not any(c.isupper() for c in text):
            return text  # ordinary words and names stay
        return self.shas.setdefault(text, f"sha-{len(self.shas) + 1}")

    def text(self, value: str) -> str:
        value = UUID.sub(self._id, value)
        value = HEX_ID.sub(self._id, value)
        value = AGE.sub("just now", value)
        value = CLOCK.sub(self._clock, value)
        value = SECONDS.sub(lambda m: f"{int(m.group(1))} s", value)
        if "CodeSha256" in value or "CODE" in value:
            value = SHA.sub(self._sha, value)
        return value

    def panel(self, panel: Panel) -> Panel:
        rows = tuple(Row(row.key, tuple(self.text(c) for c in row.cells)) for row in panel.rows)
        code_column = [i for i, c in enumerate(panel.columns) if c == "CODE"]
        if code_column:  # code hashes get stable names too
            rows = tuple(Row(r.key, tuple(self._sha_cell(c) if i in code_column else c
                                          for i, c in enumerate(r.cells))) for r in rows)
        return replace(panel, title=self.text(panel.title), freshness=self.text(panel.freshness),
                       note=self.text(panel.note), rows=rows)

    def _sha_cell(self, value: str) -> str:
        return self.shas.setdefault(value, f"sha-{len(self.shas) + 1}") if value not in ("—", "") else value

    def panels(self, panels: Iterable[Panel]) -> list[Panel]:
        return [self.panel(p) for p in panels]
