"""`awsview lab check LAB --twice` for every lab folder in labs/: its wall time against the
budget (60 s per lab on a 2-core machine), and as a ratio to a yardstick measured in the same
run, so that a slower machine is told from a slower lab check. Prints figures; asserts nothing.

    python -m tests.benchmarks.bench_labs [LAB ...] [--out DIR]       (or: make bench)

``--out DIR`` saves the ``labs`` section of `make bench`'s table (tests/benchmarks/summary.py):
one row per lab; for one over its budget, what limits it is its slowest steps (each step's
commands and verify scripts over both runs, from the check's JUnit report).

The yardstick is what every lab check is made of: an embedded emulator started until it listens,
one AWS CLI command against it, and the emulator stopped (the median of a few). A lab check
starts one emulator and runs tens of CLI commands and verify scripts, twice.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree as ET

from tests.benchmarks import summary
from tests.support.emulator import RunningEmulator

LABS = Path(__file__).resolve().parents[2] / "labs"
BUDGET_S = 60.0
YARDSTICK_RUNS = 3
CHECK_TIMEOUT_S = 900


def _env(scratch: Path) -> dict[str, str]:
    """The venv's bin first on PATH (the labs' commands run `aws`), a state dir of its own."""
    bindir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": os.pathsep.join([bindir, os.environ.get("PATH", os.defpath)]),
        "XDG_STATE_HOME": str(scratch / "state"),
        "AWS_PAGER": "",
    }


def yardstick_s(scratch: Path) -> float:
    """Median wall time of: an emulator started until it listens, `aws sts get-caller-identity`
    against it, the emulator stopped."""
    took = []
    for n in range(YARDSTICK_RUNS):
        started = time.perf_counter()
        # A plain process: the yardstick is the machine's speed at what a user starts.
        running = RunningEmulator(state_dir=scratch / f"yardstick-{n}", forked=False).start()
        try:
            subprocess.run(
                ["aws", "sts", "get-caller-identity"],
                env={**running.env, "PATH": _env(scratch)["PATH"]},
                capture_output=True,
                check=True,
                timeout=60,
            )
        finally:
            running.stop()
        took.append(time.perf_counter() - started)
    return statistics.median(took)


def check_s(lab: str, scratch: Path) -> tuple[float, int, str]:
    """Wall time, exit status and last output line of `awsview lab check LAB --twice` (its
    JUnit report in ``scratch/LAB.xml``)."""
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "awsview",
            "lab",
            "check",
            lab,
            "--twice",
            "--junit",
            str(scratch / f"{lab}.xml"),
        ],
        capture_output=True,
        text=True,
        timeout=CHECK_TIMEOUT_S,
        env=_env(scratch),
        stdin=subprocess.DEVNULL,
    )
    took = time.perf_counter() - started
    said = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    return took, done.returncode, said[-1] if said else ""


def slowest(report: Path, n: int = 2) -> str:
    """The ``n`` steps whose commands and verify scripts took longest over both runs, from a
    `lab check --junit` report (its suites are LAB.runN.stepM); empty when there is none."""
    try:
        root = ET.parse(report).getroot()
    except (OSError, ET.ParseError):
        return ""
    steps: Counter[str] = Counter()
    for case in root.iter("testcase"):
        step = case.get("classname", "").rsplit(".", 1)[-1]
        try:
            steps[step] += float(case.get("time", "0"))
        except ValueError:
            continue
    return ", ".join(f"{step} {seconds:.0f} s" for step, seconds in steps.most_common(n))


def _limit(took: float, code: int, last: str, scratch: Path, lab: str) -> str:
    """What a lab's NO comes from: a failed check, or its slowest steps against the rest."""
    if code:
        return f"exit {code}: {last[:120]}"
    steps = slowest(scratch / f"{lab}.xml")
    return (
        f"{took:.0f} s: slowest {steps} (commands and verify scripts, both runs); the rest "
        "is the emulator's start, the set-up and each step settling"
        if steps
        else f"{took:.0f} s (no per-step times)"
    )


def main(labs: list[str], opts: summary.Options | None = None) -> None:
    opts = opts or summary.Options()
    labs = labs or sorted(p.name for p in LABS.iterdir() if (p / "index.json").is_file())
    rows: list[tuple[str, ...]] = []
    print(f"== awsview lab check --twice, per lab (budget {BUDGET_S:.0f} s)", flush=True)
    with tempfile.TemporaryDirectory(prefix="awsview-bench-labs-") as tmp:
        scratch = Path(tmp)
        yardstick = yardstick_s(scratch)
        print(
            f"   yardstick: emulator start + one AWS CLI call + stop, median of "
            f"{YARDSTICK_RUNS}: {yardstick:.2f} s (the budget is {BUDGET_S / yardstick:.0f}×)",
            flush=True,
        )
        print(f"   {'LAB':<18}{'WALL':>8}  {'× YARDSTICK':>11}  BUDGET  EXIT", flush=True)
        for lab in labs:
            took, code, last = check_s(lab, scratch)
            met = "met" if took <= BUDGET_S and code == 0 else "NO"
            print(
                f"   {lab:<18}{took:>7.1f}s  {took / yardstick:>10.1f}×  {met:<6}  {code}"
                + (f"  ({last[:120]})" if code else ""),
                flush=True,
            )
            rows.append(
                (
                    f"lab check {lab} --twice, wall s",
                    f"{took:.1f} ({took / yardstick:.1f}× yardstick)",
                    f"yardstick {yardstick:.2f} s: emulator start + one AWS CLI call + stop",
                    f"≤ {BUDGET_S:.0f} s, exit 0",
                    met,
                    "" if met == "met" else _limit(took, code, last, scratch, lab),
                )
            )
    summary.save(opts, "labs", rows)


if __name__ == "__main__":
    options, names = summary.options(sys.argv[1:])
    with summary.busy(options.busy):
        main(names, opts=options)
