"""Which attributes of a DynamoDB item changed at its last change, so its row can mark them."""

from __future__ import annotations

from typing import Any

from awsview.model.items import diff_items, format_value
from awsview.model.resources import Table
from awsview.pollers.base import LabModel


def item_row_key(item: dict[str, Any], key_names: tuple[str, ...]) -> str:
    """The row key `render.tables` gives this item."""
    return "/".join(format_value(item.get(k)) for k in key_names)


class ItemChanges:
    """Remembers each table's items and, per changed item, the attributes its last change touched.

    ``marks`` maps a tables panel id ("tables:<name>") to row key → attribute names. A mark
    stays until that item changes again or is deleted.
    """

    def __init__(self) -> None:
        self.marks: dict[str, dict[str, frozenset[str]]] = {}
        self._tables: dict[str, Table] = {}

    def update(self, model: LabModel) -> None:
        for snapshot in model.with_prefix("table:"):
            table = snapshot.data
            name = snapshot.key.split(":", 1)[1]
            before = self._tables.get(name)
            if not isinstance(table, Table) or table is before:
                continue
            self._tables[name] = table
            if before is None or before.items == table.items:
                continue
            old = {item_row_key(i, before.key_names): i for i in before.items}
            marks = self.marks.setdefault(f"tables:{name}", {})
            current = set()
            for item in table.items:
                key = item_row_key(item, table.key_names)
                current.add(key)
                previous = old.get(key)
                if previous is not None and previous != item:
                    diff = diff_items(previous, item)
                    names = frozenset(diff.added + tuple(c[0] for c in diff.changed))
                    if names:
                        marks[key] = names
            for key in [k for k in marks if k not in current]:
                del marks[key]

    def for_panel(self, panel_id: str) -> dict[str, frozenset[str]]:
        return self.marks.get(panel_id, {})
