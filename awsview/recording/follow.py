"""Follows a viewer's model into a recording channel: ``watch --record``, ``serve --record`` and
``class --record`` all hook here, on the model (its listeners), never inside the pollers.

Each time the model tells its listeners that something changed, one frame is written with every
snapshot that differs from what was last written: the changed ones as differences, and the
others whose poll only refreshed their time (so freshness replays as it was shown). A second's
tick writes such refreshes, and snapshots the pollers dropped, while nothing changes. The
status line and the account go in as they change. A write that fails stops the recording,
says why once (``on_stop``) and never stops the viewer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from awsview.aws.session import Target
from awsview.model.patch import diff
from awsview.recording.file import (
    CHECKPOINTS,
    DECISION,
    PROFILE,
    STATUS,
    ChannelWriter,
    RecordingError,
    RecordingWriter,
)

TICK_S = 1.0
# A new keyframe once the frames since the last one outweigh it (and at least this much): any
# moment then decodes from at most about twice a keyframe's worth of data.
KEYFRAME_AFTER_BYTES = 256 * 1024
KEYFRAME_AFTER_FRAMES = 3000


def target_info(target: Target, region: str | None = None) -> dict[str, Any]:
    """What a channel says about where it looked: never a credential (a profile is a name)."""
    return {
        "backend": "AWS" if not target.endpoint_url else "endpoint",
        "endpoint_url": target.endpoint_url,
        "profile": target.profile,
        "region": region or target.region,
        "target_region": target.region,
        "target": target.describe(),
    }


class Recorder:
    """One followed model → one channel. ``attach`` again when the viewer switches lab."""

    def __init__(
        self,
        channel: ChannelWriter,
        clock: Callable[[], float] = time.time,
        on_stop: Callable[[str], None] | None = None,
    ):
        self.channel = channel
        self.clock = clock
        self.on_stop = on_stop
        self.stopped: str | None = None  # why recording stopped, if it did
        self.frames = 0
        self.model: Any = None
        self.profile: Any = None
        self._last: dict[str, Any] = {}
        self._status: tuple[str, str] = ("ok", "")
        self._meta: dict[str, Any] = {}
        self._tick: asyncio.TimerHandle | None = None

    # -- what the viewer tells it ----------------------------------------------------------

    def attach(self, profile: Any, model: Any) -> None:
        """A (new) model to follow: written whole as a keyframe."""
        if self.model is not None and self._on_change in self.model.listeners:
            self.model.listeners.remove(self._on_change)
        flags = PROFILE if self.model is not None else 0
        self.profile, self.model = profile, model
        model.listeners.append(self._on_change)
        self._last = dict(model.snapshots)
        self._keyframe(flags)
        self._arm()

    def status(self, level: str, text: str) -> None:
        if (level, text) != self._status:
            self._status = (level, text)
            self._write([("status", level, text)], STATUS)

    def meta(self, **values: Any) -> None:
        fresh = {k: v for k, v in values.items() if v is not None and self._meta.get(k) != v}
        if fresh:
            self._meta.update(fresh)
            self._write([("meta", fresh)])

    def close(self) -> None:
        if self._tick is not None:
            self._tick.cancel()
            self._tick = None
        if self.model is not None and self.stopped is None:
            self._on_change(None)  # what changed since the last frame
        if self.model is not None and self._on_change in self.model.listeners:
            self.model.listeners.remove(self._on_change)

    # -- frames ----------------------------------------------------------------------------

    def _on_change(self, changed: list[Any] | None) -> None:
        if self.stopped is not None or self.model is None:
            return
        ops: list[tuple] = []
        flags = 0
        current = self.model.snapshots
        last = self._last
        try:  # called from inside the model's apply: nothing here may reach the pollers
            for key, snapshot in list(current.items()):
                before = last.get(key)
                if snapshot is before:
                    continue
                if before is None:
                    ops.append(("+", key, snapshot))
                else:
                    op = diff(before, snapshot)
                    if op is None:
                        continue
                    ops.append(("s", key, op))
                flags |= _flags(key, before, snapshot)
                last[key] = snapshot
            for key in [k for k in last if k not in current]:  # dropped by a poller
                ops.append(("x", key))
                del last[key]
        except Exception as exc:  # a recording must never stop the viewer: it stops itself
            self._stop(exc)
            return
        if ops:
            self._write(ops, flags)

    def _write(self, ops: list[tuple], flags: int = 0) -> None:
        if self.stopped is not None or self.model is None:
            return
        try:
            channel = self.channel
            if (
                channel.plain_since_keyframe > max(KEYFRAME_AFTER_BYTES, 2 * channel.keyframe_bytes)
                or channel.frames_since_keyframe >= KEYFRAME_AFTER_FRAMES
            ):
                # The frame's changes are in the model already: the keyframe holds them.
                self._last = dict(self.model.snapshots)
                self._keyframe(flags)
                return
            channel.frame(self.clock(), ops, flags)
            self.frames += 1
        except Exception as exc:  # disk full, file gone: the viewer goes on without recording
            self._stop(exc)

    def _keyframe(self, flags: int = 0) -> None:
        try:
            self.channel.keyframe(
                self.clock(),
                {
                    "profile": self.profile,
                    "snapshots": dict(self._last),
                    "status": list(self._status),
                    "meta": dict(self._meta),
                },
                flags,
            )
            self.frames += 1
        except Exception as exc:  # disk full, file gone, a value that will not encode
            self._stop(exc)

    def _stop(self, exc: Exception) -> None:
        text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        self.stopped = f"recording stopped: {text}"
        if self._tick is not None:
            self._tick.cancel()
        if self.on_stop is not None:
            self.on_stop(self.stopped)

    def _arm(self) -> None:
        if self._tick is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (a plain script): frames come with changes only

        def tick() -> None:
            self._tick = None
            if self.stopped is None:
                self._on_change(None)
                self._arm()

        self._tick = loop.call_later(TICK_S, tick)


def _flags(key: str, before: Any, after: Any) -> int:
    if key == "checkpoints":
        marks = [
            tuple(r.passed for r in (s.data or ())) if s is not None else ()
            for s in (before, after)
        ]
        return CHECKPOINTS if marks[0] != marks[1] else 0
    if key == "timeline":
        counts = [
            sum(len(k.decisions) for k in s.data.keys)
            if s is not None and s.data is not None
            else 0
            for s in (before, after)
        ]
        return DECISION if counts[1] > counts[0] else 0
    return 0


class ClassRecorder:
    """A class recording: one channel per learner, opened when the learner's model exists."""

    def __init__(self, writer: RecordingWriter, on_stop: Callable[[str], None] | None = None):
        self.writer = writer
        self.on_stop = on_stop
        self.recorders: dict[str, Recorder] = {}
        self.targets: dict[str, str] = {}

    def model(self, learner: Any, profile: Any, model: Any) -> None:
        recorder = self.recorders.get(learner.name)
        if recorder is None:
            target = Target(
                profile=learner.profile, region=learner.region, endpoint_url=learner.endpoint_url
            )
            try:
                channel = self.writer.channel(learner.name, target_info(target), time.time())
            except Exception as exc:  # cannot write: this learner goes unrecorded
                if self.on_stop is not None:
                    self.on_stop(f"recording stopped: {getattr(exc, 'strerror', None) or exc}")
                return
            recorder = self.recorders[learner.name] = Recorder(channel, on_stop=self.on_stop)
            self.targets[learner.name] = target.describe()
        recorder.attach(profile, model)

    def status(self, status: Any) -> None:
        recorder = self.recorders.get(status.learner.name)
        if recorder is None:
            return
        recorder.meta(account=status.account)
        if status.error:
            recorder.status("error", status.error)
        elif status.account:  # as the live viewer says it
            recorder.status("ok", f"{self.targets[status.learner.name]} · account {status.account}")

    def close(self) -> None:
        for recorder in self.recorders.values():
            recorder.close()
        self.writer.close()


async def record_headless(
    target: Target, lab: str | None, prefix: str, writer: RecordingWriter
) -> None:
    """Follow one target into ``writer`` with no screen (``serve --record``), until cancelled."""
    from awsview.polling.live import LivePolling

    recorder = Recorder(writer.channel("", target_info(target), time.time()))
    live: Any = None

    def status(level: str, text: str) -> None:
        recorder.meta(account=live.account, region=live.region)
        recorder.status(level, text)

    live = LivePolling(target, lab, prefix, recorder.attach, status)
    try:
        await live.run()
    finally:
        recorder.close()
        writer.close()


class RecordingUnwritable(RecordingError):
    """The new file was made but its first bytes did not fit (a full disk): it is removed, so
    the same name can be tried again once there is room."""


def open_recording(path: Path, command: str) -> RecordingWriter:
    """A new recording file (RecordingError if it exists or cannot be written)."""
    path = Path(path)
    existed = path.exists() or path.is_symlink()
    try:
        return RecordingWriter(path, command, time.time())
    except OSError as exc:
        if not existed:
            path.unlink(missing_ok=True)
        raise RecordingUnwritable(f"cannot write {path}: {exc.strerror or exc}") from None


def open_channel(writer: RecordingWriter, target: Target) -> Recorder:
    """The one channel of a viewer's recording (RecordingUnwritable, the file removed, if even
    that does not fit)."""
    try:
        return Recorder(writer.channel("", target_info(target), time.time()))
    except OSError as exc:
        writer.close()
        writer.path.unlink(missing_ok=True)
        raise RecordingUnwritable(f"cannot write {writer.path}: {exc.strerror or exc}") from None


def finish(writer: RecordingWriter, recorder: Recorder) -> str | None:
    """Close the recording. When it stopped early (a full disk), the one line that says what is
    left of it: a file with no frame is removed, so it does not block the next try."""
    writer.close()
    if recorder.stopped is None:
        return None
    if recorder.frames == 0:
        writer.path.unlink(missing_ok=True)
        return f"{recorder.stopped}; nothing was recorded ({writer.path} removed)"
    return f"{recorder.stopped}; {writer.path} holds the {recorder.frames} frames before that"
