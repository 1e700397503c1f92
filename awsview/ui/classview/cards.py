"""What a learner's card and the class summary say: pure functions from `LearnerStatus`.

No widget here; `awsview.ui.classview.view` shows what these return. Every string from the roster or
from AWS (names, endpoints, errors) goes through `plain`-style Content, never markup.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from functools import lru_cache

from textual.content import Content

from awsview.classroom.monitor import Learner, LearnerStatus
from awsview.labspec import LabSpec
from awsview.model import untrusted

CARD_WIDTH = 40  # a column of cards is at least this wide
ONE_COLUMN_UNDER = 80
MAX_COLUMNS = 6
ERROR_STYLE = "$text-error bold"
# done green; ✗ red only for the step the learner is on or a done one now broken; · and ? dim
MARK_STYLES = {
    "done": "$text-success bold",
    "current": "$text-error bold",
    "broken": "$text-error bold",
    "todo": "$text-muted",
    "unknown": "$text-muted",
}


def columns_for(width: int) -> int:
    """How many cards side by side in a screen this many columns wide."""
    if width < ONE_COLUMN_UNDER:
        return 1
    return max(1, min(MAX_COLUMNS, width // CARD_WIDTH))


@lru_cache(maxsize=64)
def lab_steps(profile: LabSpec) -> tuple[tuple[str, str], ...]:
    """(key, title) of each step that has checkpoints, in the lab's order; the title is the lab
    text's when the profile is a lab folder's, the key otherwise."""
    steps = profile.folder.steps if profile.folder is not None else ()
    titles = {step.key: step.title for step in steps}
    keys = dict.fromkeys(c.step for c in profile.checkpoints)
    return tuple((key, titles.get(key, key)) for key in keys)


def state(status: LearnerStatus | None) -> str:
    """One word for the card's look: waiting, error, stale, warn or ok."""
    if status is None or (status.updated_at is None and status.error is None):
        return "waiting"
    if status.updated_at is None:
        return "error"  # never answered: nothing is known
    if status.stale:
        return "stale"  # answered before, not now: what the card shows is the last known
    return "warn" if status.error else "ok"


def card_content(
    learner: Learner,
    status: LearnerStatus | None,
    steps: tuple[tuple[str, str], ...],
    now: float,
    width: int = 0,
) -> Content:
    """Four lines: lab and endpoint; the step reached; the checkpoint marks; freshness. An
    endpoint that never answered has no marks: its error takes both last lines."""
    lines = [_where(learner, status), _step(status, steps), _marks(status), _freshness(status, now)]
    if state(status) == "error" and width > 0:
        wrapped = textwrap.wrap(lines[3].plain, width, max_lines=2, placeholder="…")
        lines[2:] = [Content.styled(line, ERROR_STYLE) for line in wrapped] + [Content("")] * (
            2 - len(wrapped)
        )
    return Content("\n").join(lines)


def _where(learner: Learner, status: LearnerStatus | None) -> Content:
    lab = (status.lab if status else None) or learner.lab or "lab ?"
    endpoint = learner.endpoint_url or " ".join(
        p for p in ("AWS", learner.profile and f"profile {learner.profile}", learner.region) if p
    )
    return Content.assemble((_clean(lab), "bold"), " · ", (_clean(endpoint), "$text-muted"))


def _step(status: LearnerStatus | None, steps: tuple[tuple[str, str], ...]) -> Content:
    if status is None or not status.checkpoints:
        return Content.styled("no checkpoints read yet", "$text-muted italic")
    keys = [key for key, _ in steps]
    if status.step is None or status.step not in keys:
        first = steps[0][1] if steps else ""
        return Content.assemble(
            ("no step done yet", "bold"),
            (f" · next: {_clean(first)}" if first else "", "$text-muted"),
        )
    number = keys.index(status.step) + 1
    title = _clean(steps[number - 1][1])
    if number == len(keys):
        return Content.assemble(
            (f"✓ all {number} steps done", "$text-success bold"), (f" · {title}", "$text-muted")
        )
    return Content.assemble(
        (f"step {number}/{len(keys)} ", "bold"),
        (_clean(status.step), "$text-accent bold"),
        f" · {title}",
    )


def _marks(status: LearnerStatus | None) -> Content:
    if status is None or not status.checkpoints:
        return Content("")
    parts: list[tuple[str, str] | str] = []
    for result in status.checkpoints:
        parts += [(result.mark, "$text-muted" if status.stale else MARK_STYLES[result.status]), " "]
    parts.append((f" {status.passed}/{len(status.checkpoints)}", "bold"))
    if status.stale:
        parts.append((" · last known", "$text-warning italic"))
    return Content.assemble(*parts)


def _freshness(status: LearnerStatus | None, now: float) -> Content:
    look = state(status)
    if look == "waiting":
        return Content.styled("connecting…", "$text-muted italic")
    error = reason(status.error or "")
    if look == "error":
        return Content.styled(f"error — {error}", ERROR_STYLE)
    age = ago(now - (status.updated_at or now))
    if look == "stale":
        return Content.styled(f"stale {age} — {error}", ERROR_STYLE)
    if look == "warn":
        return Content.assemble((f"updated {age} ago · ", "$text-muted"), (error, "$text-warning"))
    return Content.styled(f"updated {age} ago", "$text-muted")


def reason(error: str) -> str:
    """The error without "cannot use ENDPOINT (REGION): ": the card's first line names the
    endpoint."""
    error = _clean(error)
    if error.startswith("cannot use ") and "): " in error:
        return error.split("): ", 1)[1]
    return error


def ago(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


def summary(
    learners: tuple[Learner, ...],
    statuses: dict[str, LearnerStatus],
    steps: dict[str, tuple[tuple[str, str], ...]],
) -> str:
    """``AWS View · class · 8 learners · 2 done · 3 at deploy · 1 not started · 1 with errors``."""
    buckets: Counter[str] = Counter()
    order: dict[str, int] = {}
    for learner in learners:
        status = statuses.get(learner.name)
        look = state(status)
        keys = [key for key, _ in steps.get(learner.name, ())]
        if look == "waiting":
            bucket, rank = "connecting", 900
        elif look in ("error", "stale"):
            bucket, rank = "with errors", 1000
        elif keys and status.step == keys[-1]:
            bucket, rank = "done", 0
        elif status.step is None:
            bucket, rank = "not started", 800
        else:
            bucket = f"at {_clean(status.step)}"
            rank = 700 - (keys.index(status.step) if status.step in keys else 0)
        buckets[bucket] += 1
        order.setdefault(bucket, rank)
    plural = "" if len(learners) == 1 else "s"
    parts = ["AWS View", "class", f"{len(learners)} learner{plural}"]
    parts += [f"{buckets[b]} {b}" for b in sorted(buckets, key=lambda b: (order[b], b))]
    return " · ".join(parts)


def _clean(text: str) -> str:
    """One line, no terminal control characters."""
    return " ".join(untrusted.clean(str(text)).split())
