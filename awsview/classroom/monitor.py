"""Class view: one instructor following many learners' endpoints, read-only.

The roster is a TOML file::

    [[learner]]
    name = "Ada"
    endpoint_url = "http://10.0.0.11:5000"
    lab = "q05"            # optional: detected otherwise

Each learner gets its own read-only connection and scheduler; rounds run with bounded
concurrency so one slow or dead endpoint never holds up the others. A learner on the embedded
emulator costs one change-feed question per round while nothing changes: only what changed is
read (and everything every two minutes); other endpoints are polled whole each round.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from awsview import labspec
from awsview.aws.endpoints import endpoint_problem
from awsview.aws.errors import classify
from awsview.aws.session import Connection, Target
from awsview.core.checkpoints import CheckResult, progress
from awsview.labspec import LabSpec
from awsview.labspec.schema import Document, Field, SchemaError, Table, Tables, read_toml, validate
from awsview.model import keys
from awsview.model.state import LabState
from awsview.model.textfile import BadFile, shown
from awsview.polling.scheduler import Scheduler


class RosterError(BadFile):
    """A malformed class file; the message names the file and the problem."""


@dataclass(frozen=True)
class Learner:
    name: str
    endpoint_url: str | None
    lab: str | None = None
    region: str | None = None
    profile: str | None = None


@dataclass(frozen=True)
class LearnerStatus:
    learner: Learner
    lab: str | None = None
    step: str | None = (
        None  # the step reached: the last step done (awsview.core.checkpoints progress)
    )
    checkpoints: tuple[CheckResult, ...] = ()
    error: str | None = None
    updated_at: float | None = None
    round_seconds: float | None = None
    stale: bool = False  # the last poll failed: step and checkpoints are the last known ones
    account: str | None = None

    @property
    def passed(self) -> int:
        return sum(r.passed is True for r in self.checkpoints)


def _endpoint(value: str) -> str | None:
    problem = endpoint_problem(value)
    return f"{shown(value)}: {problem}" if problem else None


# The roster's keys, in the schema language of lab folders (awsview.labspec.schema).
ROSTER = Table(
    {
        "learner": Field(
            Tables(
                Table(
                    {
                        "name": Field(str, required=True),
                        "endpoint_url": Field(str, check=_endpoint),
                        "lab": Field(str),
                        "region": Field(str),
                        "profile": Field(str),
                    }
                )
            )
        )
    }
)


def load_roster(path: Path) -> tuple[Learner, ...]:
    """The learners of a roster file; raises RosterError (``file:line: what is wrong``)."""
    try:
        document = read_toml(Path(path))
        validate(document, ROSTER)
    except SchemaError as exc:
        raise RosterError(str(exc)) from None
    entries = document.data.get("learner")
    if not entries:
        raise RosterError(f"{path}: expected one or more [[learner]] tables")
    learners, seen = [], set()
    known = None
    for number, entry in enumerate(entries):
        if entry["name"] in seen:
            raise document_error(
                document, number, "name", f"learner {entry['name']!r} is listed twice"
            )
        lab = entry.get("lab")
        if lab is not None and not labspec.is_folder_reference(lab):
            known = labspec.available() if known is None else known
            if lab not in known:
                raise document_error(
                    document, number, "lab", f"learner {entry['name']!r}: unknown lab {lab!r}"
                )
        seen.add(entry["name"])
        learners.append(
            Learner(
                entry["name"],
                entry.get("endpoint_url"),
                lab,
                entry.get("region"),
                entry.get("profile"),
            )
        )
    return tuple(learners)


def document_error(document: Document, number: int, key: str, problem: str) -> RosterError:
    return RosterError(str(document.error(("learner", number, key), problem)))


@dataclass
class _Follow:
    learner: Learner
    conn: Connection | None = None
    scheduler: Scheduler | None = None
    status: LearnerStatus | None = None
    failures: int = 0
    retry_at: float = 0.0  # a learner whose endpoint does not answer is asked again later
    account: str | None = None  # the account preflight named; the feed's rounds do not ask again


@dataclass
class ClassMonitor:
    """Polls every learner once per ``refresh`` seconds, at most ``concurrency`` at a time."""

    learners: tuple[Learner, ...]
    refresh: float = 1.0
    concurrency: int = 16
    on_update: Callable[[LearnerStatus], None] | None = None
    # A learner's lab profile and model, once connected (a class recording follows each model).
    on_model: Callable[[Learner, LabSpec, LabState], None] | None = None
    _follows: dict[str, _Follow] = field(default_factory=dict)
    _sessions: dict[str | None, Any] = field(default_factory=dict)  # one per profile, shared

    def statuses(self) -> list[LearnerStatus]:
        return [f.status or LearnerStatus(f.learner) for f in self._follows.values()]

    def lab(self, name: str) -> tuple[LabSpec, LabState] | None:
        """The learner's lab profile and full model (what its panels show); None until connected."""
        follow = self._follows.get(name)
        if follow is None or follow.scheduler is None:
            return None
        return follow.scheduler.profile, follow.scheduler.model

    async def round(self) -> list[LearnerStatus]:
        semaphore = asyncio.Semaphore(self.concurrency)

        async def one(follow: _Follow) -> LearnerStatus:
            async with semaphore:
                return await self._poll(follow)

        for learner in self.learners:
            self._follows.setdefault(learner.name, _Follow(learner))
        return list(await asyncio.gather(*(one(f) for f in self._follows.values())))

    async def run(self, rounds: int | None = None) -> None:
        """Follow every learner on its own clock: one ``refresh`` per learner, at most
        ``concurrency`` polls at once, so a learner whose endpoint answers slowly (up to the
        read timeout) delays only its own card."""
        semaphore = asyncio.Semaphore(self.concurrency)

        async def follow_forever(follow: _Follow) -> None:
            done = 0
            while rounds is None or done < rounds:
                started = time.monotonic()
                async with semaphore:
                    await self._poll(follow)
                done += 1
                await asyncio.sleep(max(0.0, self.refresh - (time.monotonic() - started)))

        for learner in self.learners:
            self._follows.setdefault(learner.name, _Follow(learner))
        await asyncio.gather(*(follow_forever(f) for f in self._follows.values()))

    async def close(self) -> None:
        for follow in self._follows.values():
            if follow.scheduler is not None:
                await follow.scheduler.stop()
            if follow.conn is not None:
                await follow.conn.__aexit__(None, None, None)

    def _session(self, profile: str | None) -> Any:
        """Learners of one profile share an aiobotocore session (and every profile the process's
        data loader): the service models are loaded once, not once per learner (they are most
        of a learner's memory)."""
        if profile not in self._sessions:
            from awsview.aws.session import aio_session

            self._sessions[profile] = aio_session(profile)
        return self._sessions[profile]

    async def _poll(self, follow: _Follow) -> LearnerStatus:
        learner = follow.learner
        started = time.monotonic()
        if started < follow.retry_at:
            return follow.status or LearnerStatus(learner)
        try:
            if follow.scheduler is None:
                follow.conn = await Connection(
                    Target(
                        profile=learner.profile,
                        region=learner.region,
                        endpoint_url=learner.endpoint_url,
                    ),
                    connect_timeout=1.0,
                    read_timeout=5.0,
                    session=self._session(learner.profile),
                ).__aenter__()
                from awsview.polling.bootstrap import detect_lab_spec

                profile = (
                    labspec.load(learner.lab) if learner.lab else await detect_lab_spec(follow.conn)
                )
                follow.scheduler = Scheduler(follow.conn, profile)
                if self.on_model is not None:
                    self.on_model(learner, profile, follow.scheduler.model)
            from awsview.polling.bootstrap import preflight

            if await follow.scheduler.catch_up():
                model = follow.scheduler.model  # the feed answered: the endpoint is alive
                account = follow.account or await preflight(
                    follow.conn
                )  # asked once, not each round
            else:
                account = await preflight(
                    follow.conn
                )  # one quick call tells a dead endpoint from a live one
                model = await follow.scheduler.run_once()
            follow.account = account
            results = model.data(keys.CHECKPOINTS, ())
            step = current_step(results)
            follow.failures = 0
            status = LearnerStatus(
                learner,
                follow.scheduler.profile.name,
                step,
                tuple(results),
                error=_worst_error(model),
                updated_at=time.time(),
                account=account,
            )
        except Exception as exc:  # one learner's trouble is shown on its card, never raised
            previous = follow.status or LearnerStatus(learner)
            status = replace(
                previous, error=getattr(exc, "reason", None) or classify(exc).text, stale=True
            )
            follow.failures += 1
            follow.retry_at = time.monotonic() + min(30.0, 2.0**follow.failures)
        status = replace(status, round_seconds=time.monotonic() - started)
        follow.status = status
        if self.on_update is not None:
            self.on_update(status)
        return status


def current_step(results: tuple[CheckResult, ...]) -> str | None:
    """The step reached: the last of the steps done in order, by the viewer's progress rule (a
    step is done when its checkpoints held in this run or a later step's did)."""
    return progress(results).reached


def _worst_error(model: Any) -> str | None:
    errors = [
        s for s in model.snapshots.values() if s.error and s.health.value in ("stale", "error")
    ]
    return errors[0].freshness() if errors else None
