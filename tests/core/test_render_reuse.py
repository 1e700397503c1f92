"""A render keeps the cells of what did not change: the very same tuple, so a panel's diff and
its table's caches see an unchanged row at once."""

from __future__ import annotations

import dataclasses

from awsview.core import render
from awsview.model import keys
from awsview.model.snapshot import succeeded
from tests.support import sample


def test_an_unchanged_item_keeps_its_row_cells_from_one_render_to_the_next():
    profile, model = sample.ev04()
    key = next(k for k in model.snapshots if k.startswith(keys.TABLE_PREFIX) and "orders" in k)
    table = model.data(key)
    (name_key,) = table.key_names[:1]
    items = [{**table.items[0], name_key: f"order-{i}"} for i in range(5)]
    table = dataclasses.replace(table, items=tuple(items))
    model.apply([succeeded(None, "tables", key, table)])
    first = {p.subject: p for p in render.tables(model, profile, sample.NOW)}
    items[0] = {**items[0], "quantity": 99}  # one item changes
    model.apply([succeeded(None, "tables", key, dataclasses.replace(table, items=tuple(items)))])
    second = {p.subject: p for p in render.tables(model, profile, sample.NOW)}
    name = keys.name_of(key)
    before, after = first[name].rows, second[name].rows
    assert len(before) == len(after) > 1
    assert before[0].cells != after[0].cells
    assert all(a.cells is b.cells for a, b in zip(before[1:], after[1:]))
