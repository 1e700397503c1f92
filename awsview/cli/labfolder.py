"""`awsview lab play|check|setup DIR`: a lab folder's own commands run in bash against an
endpoint, as a learner runs them; `check` also runs its verify scripts and AWS View's checkpoints
after each step, on a fresh embedded emulator unless told an endpoint."""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from awsview.cli.common import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, fail
from awsview.cli.options import SETTLE
from awsview.labs.script import STEP_TIMEOUT, VERIFY_TIMEOUT, Outcome, Workspace, clean
from awsview.labspec import LabSpec
from awsview.labspec.folder import LabFolder, LabStep

if TYPE_CHECKING:
    from awsview.aws.session import Resolved


def pick_steps(folder: LabFolder, until: str | None) -> tuple[LabStep, ...]:
    """The steps up to ``until`` (a number or a step key); raises ValueError."""
    if until is None:
        return folder.steps
    for step in folder.steps:
        if until in (str(step.number), step.key):
            return folder.steps[: step.number]
    known = ", ".join(f"{s.number}={s.key}" for s in folder.steps)
    raise ValueError(f"lab {folder.name} has no step {until!r}; its steps are {known}")


def endpoint_of(args: argparse.Namespace) -> Resolved:
    """Where the lab would play, resolved as every command resolves it; raises ConfigError."""
    from awsview.aws.session import Target, check_credentials, identified, resolve

    resolved = identified(resolve(Target(args.profile, args.region, args.endpoint_url)))
    if resolved.is_local or args.real_account:  # an account's chain runs only once it is meant
        # A profile that cannot give credentials (an expired SSO session) is said as every
        # command says it, though on a local endpoint the commands use the emulator's keys.
        check_credentials(resolved)
    return resolved


def not_local(action: str, lab: str, where: str) -> str:
    """Why ``lab ACTION`` refuses an endpoint that may be a real account."""
    return (
        f"lab {action} {lab} would create and delete resources on {where}, which is not a "
        "local endpoint (loopback or an AWS View emulator): pass --real-account if that is what "
        "you mean"
    )


def announce(action: str, lab: str, resolved: Resolved) -> tuple[str, int] | None:
    """On an account: print the account and region before anything is written; otherwise why
    it cannot be asked (one line) and the exit status (2 for credentials, 1 for the network)."""
    import boto3

    from awsview.aws.errors import classify

    try:
        sts = boto3.Session(botocore_session=resolved.session).client(
            "sts", region_name=resolved.region, endpoint_url=resolved.endpoint_url
        )
        account = sts.get_caller_identity()["Account"]
    except Exception as exc:  # connection and credential errors, one line each
        failure = classify(exc)
        status = EXIT_USAGE if failure.kind == "auth" else EXIT_FAILURE
        return f"cannot use {resolved.describe()}: {failure.text}", status
    print(
        clean(
            f"awsview: {action} {lab} in account {account}, region {resolved.region} "
            f"({resolved.describe()})"
        ),
        flush=True,
    )
    return None


def _say_outcome(label: str, outcome: Outcome) -> str:
    return f"{label}: {outcome.said()}"


def play(folder: LabFolder, args: argparse.Namespace) -> int:
    """``awsview lab play DIR``: setup.sh, then each step's commands, output as it comes;
    ``lab setup`` only setup.sh, ``lab clean`` only the step keyed ``cleanup``."""
    from awsview.aws.session import ConfigError

    try:
        if args.action == "clean":
            steps = tuple(s for s in folder.steps if s.key == "cleanup")
        else:
            steps = pick_steps(folder, args.until)
        where = endpoint_of(args)
    except (ValueError, ConfigError) as exc:
        return fail(str(exc), EXIT_USAGE)
    if not where.is_local:
        if not args.real_account:
            return fail(not_local(args.action, folder.name, where.describe()), EXIT_USAGE)
        problem = announce(args.action, folder.name, where)
        if problem is not None:
            return fail(*problem)
    endpoint, region, local = where.endpoint_url, where.region, where.is_local
    try:
        workspace = Workspace(folder, endpoint or "", region, isolated=False, local=local)
    except FileNotFoundError as exc:
        return fail(f"{folder.name}: {exc}", EXIT_USAGE)
    try:
        if folder.background and args.action != "clean":
            print(clean(f"{folder.name} setup: {folder.background}"), flush=True)
            outcome = workspace.run(
                workspace.script(folder.background), "setup.sh", STEP_TIMEOUT, stream=True
            )
            if not outcome.ok:
                return fail(_say_outcome(f"{folder.name} setup ({folder.background})", outcome))
        if args.action == "setup":
            return EXIT_OK
        for step in steps:
            outcome = _run_step(folder, workspace, step, stream=True)
            if not outcome.ok:
                return fail(_say_outcome(_label(folder, step), outcome))
    finally:
        workspace.close()
    return EXIT_OK


def _label(folder: LabFolder, step: LabStep) -> str:
    """How a step is named on the terminal (its names come from the lab's files: cleaned)."""
    return clean(f"{folder.name} step {step.number}/{len(folder.steps)} {step.key}")


def _run_step(folder: LabFolder, workspace: Workspace, step: LabStep, stream: bool) -> Outcome:
    from awsview.labs.script import step_commands

    commands, source = step_commands(folder, step)
    if stream:
        print(clean(f"{_label(folder, step)}: {step.title} ({source})"), flush=True)
    return workspace.run(commands, f"step{step.number}.sh", STEP_TIMEOUT, stream=stream)


# --- lab check ---------------------------------------------------------------------------


@dataclass
class Case:
    """One check, as a JUnit test case."""

    suite: str
    name: str
    passed: bool
    said: str
    seconds: float = 0.0


@dataclass
class Report:
    lab: str
    cases: list[Case] = field(default_factory=list)

    def add(self, suite: str, name: str, passed: bool, said: str, seconds: float = 0.0) -> None:
        self.cases.append(Case(suite, name, passed, said, seconds))
        mark = "✓" if passed else "✗"
        print(f"  {mark} {clean(name, 120)}" + (f" — {clean(said)}" if said else ""), flush=True)

    def junit(self, path: Path) -> None:
        from xml.etree import ElementTree as ET

        root = ET.Element("testsuites", name=f"awsview lab check {self.lab}")
        suites: dict[str, ET.Element] = {}
        for case in self.cases:
            suite = suites.get(case.suite)
            if suite is None:
                suite = suites[case.suite] = ET.SubElement(root, "testsuite", name=case.suite)
            element = ET.SubElement(
                suite, "testcase", classname=case.suite, name=case.name, time=f"{case.seconds:.2f}"
            )
            if not case.passed:
                ET.SubElement(element, "failure", message=clean(case.said)).text = case.said
        for suite in suites.values():
            members = suite.findall("testcase")
            suite.set("tests", str(len(members)))
            suite.set("failures", str(sum(m.find("failure") is not None for m in members)))
        ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def check(folder: LabFolder, profile: LabSpec, args: argparse.Namespace) -> int:
    """``awsview lab check DIR``: exit 0 when every step's checks pass (both runs with
    ``--twice``), 1 at the first step that fails, 2 when it cannot start (a ConfigError, said by
    main())."""
    from awsview.emulator.server import EmulatorError

    report = Report(folder.name)
    started = time.monotonic()
    try:
        if args.endpoint_url is None:
            with _own_emulator() as endpoint:
                status = _check_on(folder, profile, endpoint, "us-east-1", True, args, report)
        else:
            where = endpoint_of(args)
            if not where.is_local:
                if not args.real_account:
                    return fail(not_local("check", folder.name, where.describe()), EXIT_USAGE)
                problem = announce("check", folder.name, where)
                if problem is not None:
                    return fail(*problem)
            endpoint = where.endpoint_url or ""
            status = _check_on(folder, profile, endpoint, where.region, False, args, report)
    except EmulatorError as exc:
        return fail(str(exc))
    finally:
        if args.junit is not None:
            try:
                report.junit(args.junit)
            except OSError as exc:
                fail(f"--junit {args.junit}: {exc.strerror or exc}")
    if status == EXIT_OK:
        passed = sum(c.passed for c in report.cases)
        runs = 2 if args.twice else 1
        print(
            f"lab check {folder.name}: {passed} checks passed, {len(folder.steps)} steps × "
            f"{runs} run{'s' if runs > 1 else ''}, in {time.monotonic() - started:.0f} s",
            flush=True,
        )
    return status


@contextmanager
def _own_emulator() -> Iterator[str]:
    """A fresh embedded emulator on a free port, with testing credentials and a scratch state
    directory for the viewer; the environment is as it was afterwards."""
    from awsview.aws.session import isolate_from_shell
    from awsview.emulator.server import start

    scratch = Path(tempfile.mkdtemp(prefix="awsview-check-"))
    saved = dict(os.environ)
    isolate_from_shell()
    os.environ["XDG_STATE_HOME"] = str(scratch / "state")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    emulator = None
    try:
        emulator = start("127.0.0.1", 0, scratch / "emulator")
        emulator.start_in_thread()
        yield emulator.endpoint_url
    finally:
        if emulator is not None:
            emulator.stop()
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(scratch, ignore_errors=True)


def _check_on(
    folder: LabFolder,
    profile: LabSpec,
    endpoint: str,
    region: str,
    isolated: bool,
    args: argparse.Namespace,
    report: Report,
) -> int:
    from awsview.aws.session import Target
    from awsview.polling.stepcheck import StepChecker

    async def checked() -> int:
        target = Target(None, region, endpoint or None)
        async with StepChecker(target, profile) as checker:
            for run in range(1, 3 if args.twice else 2):
                status = await _one_run(
                    folder, checker, endpoint, region, isolated, run, report, args.settle or SETTLE
                )
                if status != EXIT_OK:
                    return status
        return EXIT_OK

    return asyncio.run(checked())


async def _one_run(
    folder: LabFolder,
    checker: object,
    endpoint: str,
    region: str,
    isolated: bool,
    run: int,
    report: Report,
    settle: float,
) -> int:
    from awsview.cli.served import SERVED
    from awsview.polling.stepcheck import StepChecker

    assert isinstance(checker, StepChecker)
    try:
        workspace = Workspace(folder, endpoint, region, isolated, served=SERVED)
    except FileNotFoundError as exc:
        return fail(f"{folder.name}: {exc}", EXIT_USAGE)
    suite = f"{folder.name}.run{run}"
    try:
        print(clean(f"{folder.name} run {run}"), flush=True)
        if folder.background:
            outcome = await asyncio.to_thread(
                workspace.run, workspace.script(folder.background), "setup.sh", STEP_TIMEOUT
            )
            report.add(
                f"{suite}.setup",
                folder.background,
                outcome.ok,
                "" if outcome.ok else outcome.said(),
            )
            if not outcome.ok:
                return fail(_say_outcome(f"{folder.name} run {run} setup", outcome))
        await checker.look()
        for step in folder.steps:
            label = f"{_label(folder, step)} (run {run})"
            print(clean(f"{label}: {step.title}"), flush=True)
            outcome = await asyncio.to_thread(_run_step, folder, workspace, step, False)
            step_suite = f"{suite}.step{step.number}"
            report.add(
                step_suite,
                "commands",
                outcome.ok,
                "" if outcome.ok else outcome.said(),
                outcome.seconds,
            )
            if not outcome.ok:
                return fail(_say_outcome(label, outcome))
            deadline = time.monotonic() + settle
            results = await checker.settle(step.key, settle)
            failed = False
            for verify, ran in (await _verify(workspace, step, deadline)).items():
                said = "" if ran.ok else f"{verify.hint} ({ran.said()})"
                report.add(step_suite, f"{verify.file} {verify.name}", ran.ok, said, ran.seconds)
                failed = failed or not ran.ok
            for result in results:
                said = f"NOW {result.now}"
                report.add(
                    step_suite, f"checkpoint: {result.checkpoint.text}", result.passed is True, said
                )
                failed = failed or result.passed is not True
            if failed:
                return fail(f"{label} failed its checks", EXIT_FAILURE)
    finally:
        workspace.close()
    return EXIT_OK


async def _verify(workspace: Workspace, step: LabStep, deadline: float) -> dict:
    """Each verify script of the step with its timeout; one that fails (not one that timed
    out) is run again until it passes or the step's settling time is over, as a learner presses
    "check" again while a queue drains."""
    from awsview.polling.stepcheck import POLL_GAP

    outcomes: dict = {}
    pending = list(step.verify)
    while True:
        for verify in pending:
            outcomes[verify] = await asyncio.to_thread(
                workspace.run,
                workspace.script(verify.file),
                verify.file,
                float(verify.timeout or VERIFY_TIMEOUT),
                False,
                False,
            )
        pending = [v for v, ran in outcomes.items() if not ran.ok and ran.status is not None]
        if not pending or time.monotonic() >= deadline:
            return outcomes
        await asyncio.sleep(POLL_GAP)
