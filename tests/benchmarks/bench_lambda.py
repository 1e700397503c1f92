"""Cold vs warm Lambda invocation cost on the embedded emulator; prints figures, asserts nothing.

python -m tests.benchmarks.bench_lambda        (or: make bench)
"""

from __future__ import annotations

import io
import json
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import boto3

WORKER = """
import json, os, boto3
def handler(event, context):
    print("RESULT " + json.dumps(event))
    return {"ok": True}
"""


def _zip(source: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", source)
    return buffer.getvalue()


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(cold_runs: int = 8, warm_runs: int = 50) -> None:
    from awsview.emulator.server import start

    emulator = start("127.0.0.1", 0, Path(tempfile.mkdtemp(prefix="awsview-bench-")))
    emulator.start_in_thread()
    kw = {
        "endpoint_url": emulator.endpoint_url,
        "region_name": "us-east-1",
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
    }
    lam, iam, sts = (
        boto3.client("lambda", **kw),
        boto3.client("iam", **kw),
        boto3.client("sts", **kw),
    )
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": "sts:AssumeRole",
                "Principal": {"Service": "lambda.amazonaws.com"},
            }
        ],
    }
    role = iam.create_role(RoleName="bench", AssumeRolePolicyDocument=json.dumps(trust))["Role"][
        "Arn"
    ]
    lam.create_function(
        FunctionName="bench",
        Runtime="python3.12",
        Role=role,
        Handler="app.handler",
        Code={"ZipFile": _zip(WORKER)},
    )
    try:
        api = []
        for _ in range(50):
            t = time.perf_counter()
            sts.get_caller_identity()
            api.append((time.perf_counter() - t) * 1000)
        cold = []
        for i in range(cold_runs):
            # A configuration change retires the warm workers: the next call starts Python anew.
            lam.update_function_configuration(
                FunctionName="bench", Environment={"Variables": {"RUN": str(i)}}
            )
            t = time.perf_counter()
            lam.invoke(FunctionName="bench", Payload=b"{}")
            cold.append((time.perf_counter() - t) * 1000)
        lam.invoke(FunctionName="bench", Payload=b"{}")
        warm = []
        for _ in range(warm_runs):
            t = time.perf_counter()
            lam.invoke(FunctionName="bench", Payload=b'{"id": "x"}')
            warm.append((time.perf_counter() - t) * 1000)
    finally:
        emulator.stop()
    print("Lambda invocation through the emulator (client round trip, ms):")
    print(f"  plain API call (sts)  p50 {statistics.median(api):7.1f}  p95 {_pct(api, 0.95):7.1f}")
    print(
        f"  cold start (n={cold_runs:<3})   p50 {statistics.median(cold):7.1f}  p95 "
        f"{_pct(cold, 0.95):7.1f}"
    )
    print(
        f"  warm worker (n={warm_runs:<3})  p50 {statistics.median(warm):7.1f}  p95 "
        f"{_pct(warm, 0.95):7.1f}"
    )
    print(f"  warm / cold ratio (p50): {statistics.median(warm) / statistics.median(cold):.3f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
