"""`awsview dump`: one poll round, printed exactly as the panels show it (or as JSON)."""

from __future__ import annotations

import base64
import dataclasses
import json
import sys
import time
from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Any, Mapping, TextIO

from awsview import profiles
from awsview.aws.errors import classify
from awsview.aws.session import ConfigError, Connection, Target
from awsview.model.state import LabModel
from awsview.polling.scheduler import Scheduler
from awsview.core.render import Panel, panels
from awsview.model import keys


class DumpError(Exception):
    """A one-line reason the dump could not be made; ``kind`` is the failure's ("network",
    "auth", …): credentials that AWS refuses are a configuration error, not an outage."""

    def __init__(self, text: str, kind: str = "other", reason: str | None = None):
        super().__init__(text)
        self.kind = kind
        self.reason = reason or text  # without saying where: for a place that already names it


async def preflight(conn: Connection) -> str:
    """Proves the endpoint answers and the credentials work; returns the account id."""
    try:
        identity = await conn.call("sts", "get_caller_identity")
    except Exception as exc:
        failure = classify(exc)
        raise DumpError(f"cannot use {conn.describe()}: {failure.text}", failure.kind, failure.text) from None
    return identity.get("Account", "?")


class NeedsPrefix(DumpError):
    """No known lab on an account that is not local, and no prefix: AWS View does not watch a
    whole region of a real account (it would scan every table in it). Says which prefixes exist."""

    def __init__(self, where: str, found: list[tuple[str, int]]):
        names = ", ".join(f"{p} ({n})" for p, n in found[:6])
        text = (f"no known lab on {where} and no --prefix: on an account AWS View watches only "
                f"resources named PREFIX*, never a whole region — "
                + (f"names found start with {names}" if names else "no shared name prefix found"))
        super().__init__(text, "usage")
        self.found = found


async def detect_profile(conn: Connection, prefix: str = "") -> profiles.LabProfile:
    """The lab whose resources exist here; otherwise a generic view of the names under
    ``prefix``. With no prefix that is the whole region: only on a local endpoint (an emulator),
    anywhere else NeedsPrefix says which prefixes exist."""
    known = [profiles.load(name) for name in profiles.available()]
    names: list[str] = []
    for service, method, key, token_in, token_out in (
        ("lambda", "list_functions", "Functions", "Marker", "NextMarker"),
        ("dynamodb", "list_tables", "TableNames", "ExclusiveStartTableName", "LastEvaluatedTableName"),
    ):
        try:
            found = await conn.pages(service, method, key, token_in=token_in, token_out=token_out)
        except Exception:
            continue  # detection is best effort; the pollers report errors properly
        names += [f["FunctionName"] if isinstance(f, dict) else f for f in found]
    scores = {p.name: sum(n.startswith(p.prefix) for n in names) for p in known}
    best = max(known, key=lambda p: scores[p.name], default=None)
    if best is not None and scores[best.name] > 0:
        return best
    if not prefix and not conn.is_local:
        raise NeedsPrefix(conn.describe(), profiles.common_prefixes(names))
    return profiles.generic_profile(prefix)


async def collect(target: Target, lab: str | None = None, prefix: str = "") -> tuple[profiles.LabProfile, LabModel, str, str]:
    """One round: (lab profile, model, account id, what was watched as the SDK resolved it)."""
    chosen = profiles.load(lab) if lab else None  # an unknown lab is reported before any call
    async with Connection(target) as conn:
        account = await preflight(conn)
        profile = chosen or await detect_profile(conn, prefix)
        scheduler = Scheduler(conn, profile)
        await scheduler.run_once()
        await scheduler.stop()
        return profile, scheduler.model, account, conn.describe()


def to_jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not f.name.startswith("_")}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((to_jsonable(v) for v in value), key=lambda v: json.dumps(v, default=str))
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value


def as_json(profile: profiles.LabProfile, model: LabModel, target: Target | str, account: str,
            now: float, all_runs: bool = False) -> dict[str, Any]:
    """Every panel and every snapshot; the timeline's decisions each say their lab run (``run``),
    the earlier runs' under ``earlier``, the runs themselves under ``runs``. ``target`` is what
    was really used (a Target is described as configured)."""
    from awsview.core.checkpoints import progress

    return {
        "lab": profile.name, "title": profile.title, "target": _where(target), "account": account,
        "step": progress(tuple(model.data(keys.CHECKPOINTS, ()))).text or None,
        "panels": [to_jsonable(p) for p in panels(model, profile, now, all_runs)],
        "snapshots": {key: {**s.to_json(now), "data": to_jsonable(s.data)}
                      for key, s in sorted(model.snapshots.items())},
    }


def _where(target: Target | str) -> str:
    return target if isinstance(target, str) else target.describe()


def as_text(profile: profiles.LabProfile, model: LabModel, target: Target | str, account: str,
            now: float, all_runs: bool = False) -> str:
    from awsview.core.checkpoints import progress
    from awsview.core.render import several_runs

    step = progress(tuple(model.data(keys.CHECKPOINTS, ()))).text
    built = model.data(keys.TIMELINE)
    if several_runs(built):
        step = " · ".join(p for p in (step, built.run.label()) if p)
    out = [f"AWS View — {profile.name}: {profile.title}",
           " · ".join(p for p in (f"{_where(target)} · account {account}", step) if p)]
    for panel in panels(model, profile, now, all_runs):
        out.append("")
        out.append(f"== {panel.title}  [{panel.freshness}]")
        if panel.note:
            out.append(f"   {panel.note}")
        out.extend(_table(panel))
    return "\n".join(out) + "\n"


def _table(panel: Panel) -> list[str]:
    if not panel.rows:
        return [f"   ({panel.body_text})"]
    widths = [len(c) for c in panel.columns]
    for row in panel.rows:
        widths = [max(w, min(len(c), 60)) for w, c in zip(widths, row.cells)]
    def line(cells: tuple[str, ...]) -> str:
        return "   " + "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
    return [line(panel.columns)] + [line(row.cells) for row in panel.rows]


def graphs_text(model: LabModel, width: int) -> str:
    """`dump --graph`: each state machine drawn, then each of its executions drawn on it."""
    from awsview.core.graph import drawings, text

    out = []
    for drawing in drawings(model):
        out += ["", f"== Graph · {drawing.title}", text(drawing.lines(width))]
    return "\n".join(out or ["", "(no state machines)"]) + "\n"


def graphs_json(model: LabModel, width: int) -> list[dict[str, Any]]:
    from awsview.core.graph import drawings

    return [{"machine": d.machine, "execution": d.execution,
             "status": d.run.status if d.run is not None else None,
             "states": {name: to_jsonable(s) for name, s in d.run.states.items()} if d.run else {},
             "lines": [line.text for line in d.lines(width)]} for d in drawings(model)]


def run(target: Target, lab: str | None, prefix: str, as_json_output: bool, out: TextIO | None = None,
        graph_width: int | None = None, all_runs: bool = False) -> int:
    """Prints the panels once; with `graph_width`, the state machine graphs at that width instead."""
    import asyncio

    out = out or sys.stdout  # looked up now: sys.stdout may have been replaced since import

    try:
        profile, model, account, where = asyncio.run(collect(target, lab, prefix))
    except DumpError as exc:
        print(f"awsview: {exc}", file=sys.stderr)
        return 2 if exc.kind in ("auth", "usage") else 1
    except (profiles.ProfileError, profiles.UnknownProfile, ConfigError) as exc:
        print(f"awsview: {exc}", file=sys.stderr)
        return 2
    now = time.time()
    if graph_width is not None and as_json_output:
        json.dump({"lab": profile.name, "target": where, "account": account,
                   "width": graph_width, "graphs": graphs_json(model, graph_width)},
                  out, indent=2, sort_keys=True)
        out.write("\n")
    elif graph_width is not None:
        out.write(f"AWS View — {profile.name}: {profile.title}\n{where} · account {account}\n")
        out.write(graphs_text(model, graph_width))
    elif as_json_output:
        json.dump(as_json(profile, model, where, account, now, all_runs), out, indent=2, sort_keys=True)
        out.write("\n")
    else:
        out.write(as_text(profile, model, where, account, now, all_runs))
    return 0
