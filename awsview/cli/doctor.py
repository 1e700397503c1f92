"""`awsview doctor`: probe the endpoint once and say what each panel can show exactly."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import asdict
from typing import Any, TextIO

from awsview.cli.common import EXIT_FAILURE, checked_target, fail
from awsview.doctor.diagnosis import as_text, diagnose


def run(args: argparse.Namespace) -> int:
    return probe(checked_target(args), args.lab, args.prefix, args.json)


def probe(
    target: Any, lab: str | None, prefix: str, as_json_output: bool, out: TextIO | None = None
) -> int:
    out = out or sys.stdout
    from awsview.polling.bootstrap import PreflightError

    try:
        diagnosis = asyncio.run(diagnose(target, lab, prefix))
    except PreflightError as exc:
        return fail(str(exc), EXIT_FAILURE)
    if as_json_output:
        json.dump({**asdict(diagnosis), "summary": diagnosis.summary}, out, indent=2)
        out.write("\n")
    else:
        out.write(as_text(diagnosis))
    return 0
