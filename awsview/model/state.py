"""The lab model: the latest snapshot of every resource key, what the pollers write and every
view (render, feed, details, checkpoints, dump, the TUI) reads.

Pure: no AWS, no UI library. Keys are built by `awsview.model.keys`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from awsview.model.snapshot import Snapshot

ACTIVE_WINDOW_S = 20.0  # after a change anywhere, everything polls fast for this long


@dataclass
class LabState:
    """The latest snapshot of every resource key, plus when anything last changed."""

    snapshots: dict[str, Snapshot[Any]] = field(default_factory=dict)
    changed_at: float = 0.0
    listeners: list[Callable[[list[Snapshot[Any]]], None]] = field(default_factory=list)

    def get(self, key: str) -> Snapshot[Any] | None:
        return self.snapshots.get(key)

    def data(self, key: str, default: Any = None) -> Any:
        snapshot = self.snapshots.get(key)
        return snapshot.data if snapshot is not None and snapshot.data is not None else default

    def with_prefix(self, prefix: str) -> list[Snapshot[Any]]:
        return [s for k, s in sorted(self.snapshots.items()) if k.startswith(prefix)]

    def apply(self, snapshots: list[Snapshot[Any]]) -> list[Snapshot[Any]]:
        """Store new snapshots; returns those whose data or health changed.

        Data equal to what is stored keeps the stored object: what is drawn from it (windows,
        rendered panels, item marks) is then recognised as unchanged by identity instead of
        being compared or rebuilt on every poll.
        """
        changed = []
        for snapshot in snapshots:
            old = self.snapshots.get(snapshot.key)
            if old is None:
                self.snapshots[snapshot.key] = snapshot
                changed.append(snapshot)
                continue
            new_data = old.data is not snapshot.data and old.data != snapshot.data
            if not new_data and old.data is not snapshot.data:
                snapshot = replace(snapshot, data=old.data)
            self.snapshots[snapshot.key] = snapshot
            if new_data or old.health != snapshot.health or old.live != snapshot.live:
                changed.append(snapshot)
                if new_data:
                    self.changed_at = time.monotonic()
        if changed:
            for listener in list(self.listeners):
                listener(changed)
        return changed

    def drop(self, keys: list[str]) -> None:
        for key in keys:
            self.snapshots.pop(key, None)

    def recently_changed(self, window: float = ACTIVE_WINDOW_S) -> bool:
        return self.changed_at > 0 and time.monotonic() - self.changed_at < window


class TracedModel(LabState):
    """A model as one reader reads it (the same snapshots): every key it looked at is noted in
    ``read``, so what it derived can be as fresh as those are, and every prefix it listed in
    ``prefixes`` (keys it would have read had they been there)."""

    def __init__(self, model: LabState):
        super().__init__(snapshots=model.snapshots, changed_at=model.changed_at)
        self.read: set[str] = set()
        self.prefixes: set[str] = set()

    def get(self, key: str) -> Snapshot[Any] | None:
        self.read.add(key)
        return super().get(key)

    def data(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().data(key, default)

    def with_prefix(self, prefix: str) -> list[Snapshot[Any]]:
        found = super().with_prefix(prefix)
        self.prefixes.add(prefix)
        self.read.update(s.key for s in found)
        return found
