"""A recording on the command line: `dump --from FILE [--at TIME]`, `replay`, `docs --from`.

A moment is ``end`` (the default), ``start``, a clock time ``HH:MM[:SS]`` (local, on the
recording's days), ``+SECONDS`` / ``+MM:SS`` / ``+H:MM:SS`` after the start, ``-…`` before the
end, or an ISO date and time. What it shows is the recording right after the last frame at or
before that moment, aged to that moment.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta
from typing import Any

from awsview.aws.session import Target
from awsview.model.errors import UserError
from awsview.recording.file import ChannelPlayer, ChannelState, Recording

_OFFSET = re.compile(r"^([+-])(\d+(?::\d{1,2}){0,2}(?:\.\d+)?)$")
MARGIN_S = 86400.0  # how far before the start or after the end --at may name a moment
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?$")


class MomentError(UserError, ValueError):
    """A --at value that is not a moment; the message says what is."""


def _seconds(text: str) -> float:
    parts = [float(p) for p in text.split(":")]
    total = 0.0
    for part in parts:
        total = total * 60 + part
    return total


def parse_moment(text: str | None, first: float, last: float) -> float:
    """The wall time ``text`` names in a recording that runs from ``first`` to ``last``; a
    moment more than a day outside it is refused (it names another day, or nothing)."""
    moment = _named_moment(text, first, last)
    if not (math.isfinite(moment) and first - MARGIN_S <= moment <= last + MARGIN_S):
        start, end = (f"{datetime.fromtimestamp(t):%Y-%m-%d %H:%M:%S}" for t in (first, last))
        shown = (text or "end")[:80]
        raise MomentError(
            f"--at {shown!r} is outside the recording ({start} to {end}, give or take a day)"
        )
    return moment


def _named_moment(text: str | None, first: float, last: float) -> float:
    text = (text or "end").strip()
    if text == "end":
        return last
    if text == "start":
        return first
    offset = _OFFSET.match(text)
    if offset:
        seconds = _seconds(offset.group(2))
        return first + seconds if offset.group(1) == "+" else last - seconds
    clock = _CLOCK.match(text)
    if clock:
        hours, minutes, seconds = (
            int(clock.group(1)),
            int(clock.group(2)),
            float(clock.group(3) or 0),
        )
        if hours > 23 or minutes > 59 or seconds >= 60:
            raise MomentError(f"{text!r} is not a clock time")
        day = datetime.fromtimestamp(first).replace(hour=0, minute=0, second=0, microsecond=0)
        moment = (day + timedelta(hours=hours, minutes=minutes, seconds=seconds)).timestamp()
        while moment < first - 1 and moment + 86400 <= last + 1:  # a recording past midnight
            moment += 86400
        return moment
    try:
        return datetime.fromisoformat(text).timestamp()
    except (ValueError, OverflowError, OSError):
        raise MomentError(
            f"--at {text!r}: use end, start, HH:MM:SS, +SECONDS, +MM:SS, -MM:SS "
            "or an ISO date and time"
        ) from None


def target_of(info: dict[str, Any]) -> Target:
    """The target a channel was recorded from, described as the live viewer described it."""
    return Target(
        profile=info.get("profile"),
        region=info.get("target_region"),
        endpoint_url=info.get("endpoint_url"),
    )


def describe(recording: Recording, player: ChannelPlayer) -> str:
    """One line: which file, from where, which account and region, how long."""
    info, marks = player.info, player.marks
    state = player.state(player.last)
    account = state.meta.get("account") or info.get("account") or "unknown account"
    region = state.meta.get("region") or info.get("region") or "unknown region"
    where = info.get("endpoint_url") or "AWS"
    who = f" · learner {info['name']}" if info.get("name") else ""
    span = marks[player.last].time - marks[0].time
    line = (
        f"recording {recording.path.name}{who} · {where} · account {account} · region {region} · "
        f"{datetime.fromtimestamp(marks[0].time):%Y-%m-%d %H:%M:%S} for {span:.0f} s, "
        f"{player.last + 1} frames"
    )
    if recording.damage:
        line += f" · read up to the last complete frame ({recording.damage})"
    return line


def state_at(player: ChannelPlayer, text: str | None) -> tuple[ChannelState, float, int]:
    """The state shown at the moment ``text`` names, that moment, and the frame's index."""
    first, last = player.marks[0].time, player.marks[player.last].time
    moment = parse_moment(text, first, last)
    index = player.index_at(moment)
    state = shown(player, index)
    return state, max(moment, state.time), index


def shown(player: ChannelPlayer, index: int) -> ChannelState:
    """The state after frame ``index``, once it has been printed as `dump` prints it.

    Each value is of its field's type by then, but which data a snapshot holds depends on its
    kind (a tuple of queues, a table, a log feed), which the reader does not know: a file whose
    snapshot holds another kind's data is found here, by the renderers the panels share, and is
    one line (RecordingError) instead of a traceback from a renderer.
    """
    from awsview.core.printout import as_text
    from awsview.model.state import LabState

    state = player.state(index)
    if state.profile is not None:
        try:
            as_text(state.profile, LabState(snapshots=state.snapshots), "", "", state.time)
        except Exception as exc:  # a renderer given what no poller makes
            raise unshowable(player, index, exc) from None
    return state


def unshowable(player: ChannelPlayer, index: int, exc: Exception) -> Exception:
    """The one line for a frame whose data a renderer could not show."""
    return player.recording.malformed(
        f"frame {index + 1} of channel {player.channel} holds data its panels cannot "
        f"show ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
    )
