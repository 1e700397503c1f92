"""Which attributes of a DynamoDB item changed at its last change, so its row can mark them."""

from __future__ import annotations

from typing import Any

from awsview.model import keys
from awsview.model.items import diff_items
from awsview.model.keys import item_row_key
from awsview.model.resources import Table
from awsview.model.state import LabState


class ItemChanges:
    """Remembers each table's items and, per changed item, the attributes its last change touched.

    ``marks`` maps a tables panel id ("tables:<name>") to row key → attribute names. A mark
    stays until that item changes again or is deleted.
    """

    def __init__(self) -> None:
        self.marks: dict[str, dict[str, frozenset[str]]] = {}
        self._tables: dict[str, Table] = {}

    def update(self, model: LabState) -> None:
        for snapshot in model.with_prefix(keys.TABLE_PREFIX):
            table = snapshot.data
            name = snapshot.key.split(":", 1)[1]
            before = self._tables.get(name)
            if not isinstance(table, Table) or table is before:
                continue
            self._tables[name] = table
            if before is None or before.items == table.items:
                continue
            marks = self.marks.setdefault(keys.panel_id("tables", name), {})
            if len(before.items) == len(table.items) and before.key_names == table.key_names:
                # Same items in the same order (items are sorted by key): compare pairwise and key
                # only what differs, instead of keying 10,000 items on every poll.
                pairs = [(a, b) for a, b in zip(before.items, table.items) if a is not b and a != b]
                if all(
                    item_row_key(a, before.key_names) == item_row_key(b, table.key_names)
                    for a, b in pairs
                ):
                    for previous, item in pairs:
                        self._mark(marks, item_row_key(item, table.key_names), previous, item)
                    continue
            old = {item_row_key(i, before.key_names): i for i in before.items}
            current = set()
            for item in table.items:
                key = item_row_key(item, table.key_names)
                current.add(key)
                earlier = old.get(key)
                if earlier is not None and earlier != item:
                    self._mark(marks, key, earlier, item)
            for key in [k for k in marks if k not in current]:
                del marks[key]

    @staticmethod
    def _mark(
        marks: dict[str, frozenset[str]], key: str, previous: dict[str, Any], item: dict[str, Any]
    ) -> None:
        diff = diff_items(previous, item)
        names = frozenset(diff.added + tuple(c[0] for c in diff.changed))
        if names:
            marks[key] = names

    def for_panel(self, panel_id: str) -> dict[str, frozenset[str]]:
        return self.marks.get(panel_id, {})
