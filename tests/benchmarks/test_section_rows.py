"""The rows `make bench`'s table gets from bench_cost (``quotas``) and bench_labs (``labs``):
each API held to its quota (a pooled quota to the sum of its operations), and a slow lab check
named by its slowest steps."""

from __future__ import annotations

import json

from awsview.aws.quotas import SHARE, quota
from awsview.cli.labfolder import Report
from tests.benchmarks import summary
from tests.benchmarks.bench_cost import Seen, quota_rows
from tests.benchmarks.bench_labs import slowest


def _row(rows: list[tuple[str, ...]], api: str) -> tuple[str, ...]:
    return next(r for r in rows if r[0].startswith(api + " "))


def test_an_api_over_its_share_is_a_no_with_where_and_the_limiters_budget():
    refill = quota("stepfunctions", "ListExecutions").refill
    seen = {
        ("stepfunctions", "ListExecutions"): Seen()
        .keep(0.3, 1.0, "ev04 active")
        .keep(SHARE * refill + 0.1, 1.5, "q05 active"),
        ("logs", "FilterLogEvents"): Seen().keep(1.0, 2.0, "ev05 idle"),
    }
    rows = quota_rows(seen)
    over, under = _row(rows, "stepfunctions:ListExecutions"), _row(rows, "logs:FilterLogEvents")
    assert rows[0] is over  # the highest share first
    assert over[4] == "NO" and over[5].startswith("q05 active:")
    assert "peak 0.75 (1.50/s, q05 active)" in over[1]
    assert under[4] == "met" and under[5] == ""


def test_operations_of_one_pool_are_held_to_its_quota_together():
    pooled = quota("lambda", "ListFunctions")
    assert pooled is not None and pooled.pool == quota("lambda", "ListEventSourceMappings").pool
    each = 0.3 * pooled.refill  # within the share alone, over it together
    seen = {
        ("lambda", "ListFunctions"): Seen().keep(each, each, "ev04 active"),
        ("lambda", "ListEventSourceMappings"): Seen().keep(each, each, "ev04 active"),
    }
    rows = quota_rows(seen)
    assert [r[4] for r in rows] == ["NO", "NO"]
    assert all("together" in r[1] for r in rows)


def test_the_rows_go_into_the_one_table_after_the_others(tmp_path, capsys):
    summary.save(summary.Options(out=tmp_path), "quotas", [("q", "1", "2", "3", "met", "")])
    summary.save(summary.Options(out=tmp_path), "labs", [("l", "1", "2", "3", "NO", "why")])
    summary.save(summary.Options(out=tmp_path), "class", [("c", "1", "2", "3", "met", "")])
    assert json.loads((tmp_path / "labs.json").read_text())["rows"][0][5] == "why"
    summary.main(tmp_path)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert [line.split("|")[1].strip() for line in lines[2:]] == ["c", "q", "l"]


def test_a_slow_lab_check_is_named_by_its_slowest_steps(tmp_path):
    report = Report("ev04")
    for run in (1, 2):
        report.add(f"ev04.run{run}.setup", "setup.sh", True, "", 1.0)
        report.add(f"ev04.run{run}.step1", "commands", True, "", 2.0)
        report.add(f"ev04.run{run}.step2", "commands", True, "", 10.0)
        report.add(f"ev04.run{run}.step2", "verify2-1.sh check", True, "", 5.0)
        report.add(f"ev04.run{run}.step3", "commands", True, "", 4.0)
    report.junit(tmp_path / "ev04.xml")
    assert slowest(tmp_path / "ev04.xml") == "step2 30 s, step3 8 s"
    assert slowest(tmp_path / "missing.xml") == ""
