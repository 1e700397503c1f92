"""The viewer's store: an unusable state dir is forgotten; a bug in the store is not swallowed."""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import pytest

from awsview import labspec
from awsview.polling.runs import RunKeeper
from awsview.polling.store import DecisionStore


class _Failing(DecisionStore):
    def __init__(self, path, error: Exception):
        super().__init__(path)
        self.error = error

    def run_book(self, scope, lab):
        raise self.error


# The keeper reads only the scope the connection resolved to.
CONN = SimpleNamespace(resolved=SimpleNamespace(scope="http://127.0.0.1:1"))


def test_an_unusable_state_dir_leaves_the_runs_for_this_session(tmp_path):
    keeper = RunKeeper(
        labspec.load("q05"),
        _Failing(tmp_path / "s.db", sqlite3.OperationalError("disk I/O error")),
    )
    book = keeper._loaded(CONN)
    assert not book.runs
    assert keeper._store is None


def test_a_bug_in_the_store_is_not_taken_for_an_unusable_state_dir(tmp_path):
    keeper = RunKeeper(labspec.load("q05"), _Failing(tmp_path / "s.db", KeyError("runs")))
    with pytest.raises(KeyError):
        keeper._loaded(CONN)
