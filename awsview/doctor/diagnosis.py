"""`awsview doctor`: what this backend can tell, panel by panel — exact, inferred or missing, and
what to do about it.

One probe of the endpoint, read calls only, through the guarded connection (the same allow-list
as the viewer): the AWS View emulator's journal and change feed (GET), DynamoDB Streams on the
lab's business tables, Step Functions executions and histories, Lambda and its mappings, log
groups, IAM reads, and how much throttling headroom the viewer's budgets leave. It never
changes anything: a fix is advice to the person (enable a stream, add an IAM action).
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from awsview import labspec
from awsview.aws.errors import classify, said_as_botocore
from awsview.aws.quotas import quota
from awsview.aws.ratelimit import DEFAULT_RATE, RATES
from awsview.aws.session import Connection, Target
from awsview.model import untrusted
from awsview.model.history import parse_history
from awsview.model.resources import unrelated_history

EXACT, INFERRED, MISSING = "exact", "inferred", "missing"
# What a service that a backend does not implement answers (moto: 404 / UnknownOperation;
# LocalStack: "not enabled"/501): the feature is missing, not forbidden.
UNAVAILABLE_CODES = (
    "UnknownOperationException",
    "UnknownOperation",
    "InvalidAction",
    "NotImplemented",
    "InternalFailure",
    "404",
    "501",
    "ServiceNotEnabled",
)
STREAM_VIEW = "NEW_AND_OLD_IMAGES"


@dataclass(frozen=True)
class Probe:
    """One capability, as the endpoint answered."""

    name: str
    state: str  # ok | denied | unavailable | error | absent | n/a | example
    detail: str
    fix: str | None = None


@dataclass(frozen=True)
class PanelVerdict:
    panel: str
    level: str  # exact | inferred | missing
    why: str
    fix: str | None = None


@dataclass(frozen=True)
class Diagnosis:
    target: str
    account: str | None
    backend: str
    lab: str
    probes: tuple[Probe, ...]
    panels: tuple[PanelVerdict, ...]
    calls: int = 0
    latency_ms: tuple[float, float] = (0.0, 0.0)  # p50, max of the probe's calls
    notes: tuple[str, ...] = field(default=())

    def probe(self, name: str) -> Probe | None:
        return next((p for p in self.probes if p.name == name), None)

    def panel(self, name: str) -> PanelVerdict | None:
        return next((p for p in self.panels if p.panel == name), None)

    @property
    def summary(self) -> str:
        """One line for the status bar."""
        counts = {
            level: sum(p.level == level for p in self.panels)
            for level in (EXACT, INFERRED, MISSING)
        }
        feed = self.probe("change feed")
        shown = (
            "all panels exact"
            if counts[EXACT] == len(self.panels)
            else f"{counts[EXACT]} exact, {counts[INFERRED]} "
            f"inferred, {counts[MISSING]} missing (? says why)"
        )
        parts = [self.backend, shown]
        if feed is not None and feed.state != "n/a":
            parts.append("change feed" if feed.state == "ok" else "polled")
        return "backend: " + " · ".join(parts)

    def markdown(self) -> str:
        """The help screen's section."""
        lines = [
            f"## This backend: {untrusted.markdown(self.backend)}",
            "",
            f"{untrusted.markdown(self.target)}, lab {untrusted.markdown(self.lab)}. "
            "`awsview doctor` says more.",
            "",
            "| panel | | why | what to do |",
            "| --- | --- | --- | --- |",
        ]
        for verdict in self.panels:
            lines.append(
                f"| {_cell(verdict.panel)} | {verdict.level} | {_cell(verdict.why)} | "
                f"{_cell(verdict.fix or '')} |"
            )
        return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """A table cell of the help screen. The why and the fix quote the endpoint's answers, so they
    are cleaned and escaped, but for the `commands` they name."""
    return "`".join(
        untrusted.markdown(part) if n % 2 == 0 else untrusted.line(part).replace("|", "/")
        for n, part in enumerate(text.split("`"))
    )


class _Prober:
    def __init__(self, conn: Connection):
        self.conn = conn
        self.times: list[float] = []
        self.throttled = 0

    async def call(self, service: str, method: str, **params: Any) -> tuple[Any, Probe | None]:
        """The answer, or None and why not (as a probe state)."""
        started = time.monotonic()
        try:
            return await self.conn.call(service, method, **params), None
        except Exception as exc:  # any failure of a probe is its verdict, never a crash
            failure = classify(exc)
            if failure.kind == "throttled":
                self.throttled += 1
            code = failure.code or ""
            status = str(
                getattr(exc, "response", {}).get("ResponseMetadata", {}).get("HTTPStatusCode", "")
            )
            if (
                code in UNAVAILABLE_CODES
                or status in ("404", "501")
                or "not implemented" in failure.text.lower()
            ):
                return None, Probe(method, "unavailable", f"not on this backend ({failure.text})")
            if failure.kind == "auth" and "denied" in failure.text:
                return None, Probe(method, "denied", failure.text)
            if failure.kind == "not_found":
                return None, Probe(method, "absent", failure.text)
            return None, Probe(method, "error", failure.text)
        finally:
            self.times.append(time.monotonic() - started)


async def diagnose(
    target: Target,
    lab: str | None = None,
    prefix: str = "",
    http_get: Callable[[str], Awaitable[tuple[int, Any]]] | None = None,
) -> Diagnosis:
    """Probe ``target`` once. Raises PreflightError (from the preflight) if it cannot be used at
    all."""
    from awsview.polling.bootstrap import detect_lab_spec, preflight

    chosen = labspec.load(lab) if lab else None
    async with Connection(target) as conn:
        account = await preflight(conn)
        profile = chosen or await detect_lab_spec(conn, prefix)
        prober = _Prober(conn)
        probes: list[Probe] = [Probe("identity", "ok", f"account {account}")]
        # The endpoint as the SDK resolved it (--endpoint-url, AWS_ENDPOINT_URL*, the profile's).
        endpoint = conn.resolved.endpoint_url if conn.resolved is not None else target.endpoint_url
        emulator = await _emulator(endpoint, http_get, probes)
        sfn = await _stepfunctions(prober, profile, probes)
        streams = await _dynamodb(prober, profile, probes)
        await _simple(
            prober,
            probes,
            "sqs",
            "list_queues",
            "queues",
            "sqs:ListQueues, sqs:GetQueueAttributes",
            QueueNamePrefix=profile.prefix or "",
        )
        await _simple(
            prober,
            probes,
            "lambda",
            "list_functions",
            "lambda",
            "lambda:ListFunctions, lambda:ListEventSourceMappings",
        )
        await _logs(prober, profile, probes)
        await _simple(
            prober,
            probes,
            "iam",
            "list_roles",
            "iam",
            "iam:ListRoles, iam:ListRolePolicies, iam:GetRolePolicy, iam:ListAttachedRolePolicies",
        )
        probes.append(_headroom(conn, prober))
        times = sorted(prober.times) or [0.0]
    panels = _verdicts(profile, {p.name: p for p in probes}, emulator, sfn, streams)
    backend = (
        "AWS"
        if not endpoint
        else "AWS View emulator"
        if emulator
        else "an AWS-compatible endpoint (not the AWS View emulator)"
    )
    return Diagnosis(
        conn.describe(),
        account,
        backend,
        profile.name,
        tuple(probes),
        tuple(panels),
        calls=len(prober.times),
        latency_ms=(times[len(times) // 2] * 1000, times[-1] * 1000),
    )


async def _get(url: str) -> tuple[int, Any]:
    import aiohttp

    from awsview.aws.answers import bounded_session

    async with bounded_session(timeout=aiohttp.ClientTimeout(total=5)) as session:
        with said_as_botocore(url):
            async with session.get(url) as response:
                body = await response.text()
        try:
            return response.status, json.loads(body)
        except ValueError:
            return response.status, None


async def _emulator(endpoint: str | None, http_get: Any, probes: list[Probe]) -> bool:
    """The AWS View emulator's own read-only routes: health, journal, change feed."""
    if not endpoint:
        probes += [
            Probe("emulator journal", "n/a", "real AWS has no write-decision journal"),
            Probe("change feed", "n/a", "no change feed on AWS: polled"),
        ]
        return False
    get = http_get or _get
    base = endpoint.rstrip("/")
    found = {}
    for route in ("health", "journal?since=0&limit=1", "changes?since=0&limit=1"):
        try:
            found[route.split("?")[0]] = await get(f"{base}/_awsview/{route}")
        except Exception as exc:  # refused, reset, timed out, not JSON: the route's verdict
            found[route.split("?")[0]] = (0, classify(exc).text)
    health, journal, changes = found["health"], found["journal"], found["changes"]
    if health[0] == 200 and journal[0] == 200:
        body = journal[1] if isinstance(journal[1], dict) else {}
        probes.append(
            Probe(
                "emulator journal",
                "ok",
                f"every write decision, exact (cursor {body.get('cursor', 0)})",
            )
        )
    else:
        probes.append(
            Probe(
                "emulator journal",
                "absent",
                "not the AWS View emulator: no write-decision journal",
                "run `awsview emulator` for exact write decisions",
            )
        )
    if changes[0] == 200:
        probes.append(Probe("change feed", "ok", "the emulator pushes what changed"))
    else:
        probes.append(
            Probe("change feed", "absent", "no change feed: polled (every 0.3 s while active)")
        )
    return health[0] == 200 and journal[0] == 200


def _refused(name: str, failed: Probe, actions: str, what: str = "") -> Probe:
    """A capability the endpoint would not give, with the IAM actions to allow when it was denied
    (another failure is not the policy's to fix); ``what`` says which part of it failed."""
    fix = f"allow {actions}" if failed.state == "denied" else None
    return Probe(name, failed.state, f"{what}{failed.detail}", fix)


async def _stepfunctions(prober: _Prober, profile: labspec.LabSpec, probes: list[Probe]) -> str:
    """ok | none (no executions yet) | denied | unavailable | error | example (the histories
    are a backend's fixed example, not the executions': stock moto)."""
    actions = (
        "states:ListStateMachines, states:DescribeStateMachine, states:ListExecutions, "
        "states:DescribeExecution, states:GetExecutionHistory"
    )
    answer, failed = await prober.call("stepfunctions", "list_state_machines")
    if failed is not None:
        probes.append(_refused("step functions", failed, actions))
        return failed.state
    machines = [m for m in answer.get("stateMachines", []) if m["name"].startswith(profile.prefix)]
    if not machines:
        probes.append(Probe("step functions", "ok", "readable; no state machine of this lab yet"))
        return "ok"
    listed, failed = await prober.call(
        "stepfunctions",
        "list_executions",
        stateMachineArn=machines[0]["stateMachineArn"],
        maxResults=1,
    )
    if failed is not None:
        probes.append(_refused("step functions", failed, actions, "executions: "))
        return failed.state
    executions = listed.get("executions", [])
    if not executions:
        probes.append(
            Probe("step functions", "ok", f"{len(machines)} state machine(s), no execution yet")
        )
        return "ok"
    history, failed = await prober.call(
        "stepfunctions",
        "get_execution_history",
        executionArn=executions[0]["executionArn"],
        maxResults=1,
    )
    if failed is not None:
        probes.append(
            _refused("step functions", failed, "states:GetExecutionHistory", "histories: ")
        )
        return failed.state
    events = parse_history(history.get("events") or [])
    started = executions[0].get("startDate")
    if unrelated_history(events, started):
        probes.append(
            Probe(
                "step functions",
                "example",
                "executions readable but never run: every history is the same example "
                f"(events dated {events.events[0].timestamp:%Y-%m-%d %H:%M}, before the "
                "execution started), as stock moto answers",
                "the AWS View emulator (`awsview emulator`) or AWS run executions",
            )
        )
        return "example"
    probes.append(Probe("step functions", "ok", "executions and their histories readable"))
    return "ok"


async def _dynamodb(
    prober: _Prober, profile: labspec.LabSpec, probes: list[Probe]
) -> dict[str, str | None]:
    """Each business table's stream view type (None: no stream); empty if tables cannot be read."""
    _, failed = await prober.call("dynamodb", "list_tables")
    if failed is not None:
        probes.append(
            Probe(
                "dynamodb",
                failed.state,
                failed.detail,
                "allow dynamodb:ListTables, dynamodb:DescribeTable, dynamodb:Scan",
            )
        )
        return {}
    probes.append(Probe("dynamodb", "ok", "tables readable (Scan)"))
    streams: dict[str, str | None] = {}
    for name in profile.tables("business"):
        described, failed = await prober.call("dynamodb", "describe_table", TableName=name)
        if failed is not None:
            probes.append(Probe(f"stream {name}", failed.state, failed.detail))
            continue
        spec = described["Table"].get("StreamSpecification") or {}
        view = spec.get("StreamViewType") if spec.get("StreamEnabled") else None
        streams[name] = view
        enable = (
            f"aws dynamodb update-table --table-name {name} --stream-specification "
            f"StreamEnabled=true,StreamViewType={STREAM_VIEW}"
        )
        if view is None:
            probes.append(Probe(f"stream {name}", "absent", "no DynamoDB stream", enable))
            continue
        arn = described["Table"].get("LatestStreamArn")
        _, failed = (
            await prober.call("dynamodbstreams", "describe_stream", StreamArn=arn)
            if arn
            else (None, None)
        )
        if failed is not None:
            streams[name] = None
            probes.append(
                Probe(
                    f"stream {name}",
                    failed.state,
                    failed.detail,
                    "allow dynamodb:DescribeStream, dynamodb:GetShardIterator, dynamodb:GetRecords",
                )
            )
        elif view != STREAM_VIEW:
            probes.append(
                Probe(f"stream {name}", "ok", f"stream {view}: no old image to compare", enable)
            )
        else:
            probes.append(Probe(f"stream {name}", "ok", f"stream {view}"))
    return streams


async def _simple(
    prober: _Prober,
    probes: list[Probe],
    service: str,
    method: str,
    name: str,
    actions: str,
    **params: Any,
) -> None:
    params = {k: v for k, v in params.items() if v != ""}
    _, failed = await prober.call(service, method, **params)
    probes.append(
        Probe(name, "ok", "readable") if failed is None else _refused(name, failed, actions)
    )


async def _logs(prober: _Prober, profile: labspec.LabSpec, probes: list[Probe]) -> None:
    answer, failed = await prober.call(
        "logs", "describe_log_groups", logGroupNamePrefix=f"/aws/lambda/{profile.prefix}"
    )
    if failed is not None:
        probes.append(_refused("logs", failed, "logs:DescribeLogGroups, logs:FilterLogEvents"))
        return
    groups = [g["logGroupName"] for g in answer.get("logGroups", [])]
    if not groups:
        probes.append(
            Probe("logs", "ok", "readable; no log group of this lab yet (no worker has run)")
        )
        return
    _, failed = await prober.call("logs", "filter_log_events", logGroupName=groups[0], limit=1)
    probes.append(
        Probe("logs", "ok", f"{len(groups)} log group(s), lines readable")
        if failed is None
        else Probe("logs", failed.state, failed.detail, "allow logs:FilterLogEvents")
    )


def _headroom(conn: Connection, prober: _Prober) -> Probe:
    """How much of AWS's quotas the viewer's budgets leave to the learner's own calls."""
    scale = conn.limiter.scale
    tight = min(RATES.items(), key=lambda kv: kv[1])
    limit = quota(*tight[0])
    allows = f" (AWS allows {limit.refill:g}/s)" if limit is not None else ""
    text = (
        f"viewer at most {tight[1] * scale:g}/s for {tight[0][1]}{allows}, "
        f"{DEFAULT_RATE * scale:g}/s for other APIs; {prober.throttled} of {len(prober.times)} "
        "probe calls throttled"
    )
    if scale != 1.0:
        text += f" (a local endpoint: budgets ×{scale:g})"
    return Probe(
        "throttling",
        "ok" if prober.throttled == 0 else "error",
        text,
        None
        if prober.throttled == 0
        else "other clients use this account's quota: expect slower panels",
    )


def _verdicts(
    profile: labspec.LabSpec,
    probes: dict[str, Probe],
    emulator: bool,
    sfn: str,
    streams: dict[str, str | None],
) -> list[PanelVerdict]:
    def from_probe(panel: str, name: str, exact_why: str) -> PanelVerdict:
        probe = probes.get(name)
        if probe is None or probe.state in ("ok", "absent"):
            return PanelVerdict(panel, EXACT, exact_why)
        return PanelVerdict(panel, MISSING, probe.detail, probe.fix)

    verdicts = {}
    machine_panels = ("state_machines", "executions", "history", "retries")
    for panel in machine_panels:
        if sfn == "ok" or (sfn == "example" and panel in ("state_machines", "executions")):
            verdicts[panel] = PanelVerdict(panel, EXACT, "read from Step Functions")
        elif sfn == "example":
            probe = probes["step functions"]
            verdicts[panel] = PanelVerdict(
                panel,
                MISSING,
                "the backend does not run executions: its histories are a fixed example",
                probe.fix,
            )
        else:
            probe = probes["step functions"]
            fix = probe.fix or (
                "a backend with Step Functions (the AWS View emulator, or AWS)"
                if sfn == "unavailable"
                else None
            )
            verdicts[panel] = PanelVerdict(panel, MISSING, probe.detail, fix)
    verdicts["tables"] = from_probe("tables", "dynamodb", "every item, by Scan")
    verdicts["queues"] = from_probe(
        "queues", "queues", "AWS's approximate counts, never ReceiveMessage"
    )
    verdicts["functions"] = from_probe(
        "functions", "lambda", "configuration and event source mappings"
    )
    verdicts["logs"] = from_probe("logs", "logs", "followed like `aws logs tail --follow`")
    verdicts["roles"] = from_probe("roles", "iam", "trust and action → resource")
    business = profile.tables("business")
    for panel in ("decisions", "verdicts"):
        if emulator:
            verdicts[panel] = PanelVerdict(
                panel,
                EXACT,
                "the emulator's journal: every write, accepted or "
                "rejected, with its condition and caller",
            )
            continue
        full = [t for t in business if streams.get(t) == STREAM_VIEW]
        missing_streams = [t for t in business if not streams.get(t)]
        if business and not missing_streams and len(full) == len(business):
            verdicts[panel] = PanelVerdict(
                panel,
                INFERRED,
                "accepted writes from DynamoDB Streams (old and new "
                "images); rejected writes, conditions and callers are not visible here",
                "for rejections too, play the lab on the AWS View emulator",
            )
        else:
            fixes = [p.fix for name, p in probes.items() if name.startswith("stream ") and p.fix]
            verdicts[panel] = PanelVerdict(
                panel,
                INFERRED if business else MISSING,
                "from the worker's RESULT lines and the items only: no journal and "
                f"no full stream on {', '.join(missing_streams or business) or 'any table'}",
                "; ".join(dict.fromkeys(fixes)) or None,
            )
    worst = (
        MISSING
        if any(v.level == MISSING for v in verdicts.values())
        else INFERRED
        if any(v.level == INFERRED for v in verdicts.values())
        else EXACT
    )
    checkpoints = PanelVerdict(
        "checkpoints",
        worst,
        "evaluated on the other panels: as good as the worst of those it reads"
        if worst != EXACT
        else "evaluated on exact panels",
    )
    return [
        checkpoints
        if name == "checkpoints"
        else verdicts.get(name) or PanelVerdict(name, EXACT, "")
        for name in profile.panels
    ]


def as_text(diagnosis: Diagnosis) -> str:
    out = [
        f"AWS View doctor — {diagnosis.target} · account {diagnosis.account} · lab {diagnosis.lab}",
        diagnosis.summary,
        "",
        "What the endpoint answered:",
    ]
    width = max(len(p.name) for p in diagnosis.probes)
    for probe in diagnosis.probes:
        out.append(f"  {probe.name.ljust(width)}  {probe.state:<11}  {probe.detail}")
        if probe.fix:
            out.append(f"  {'':{width}}  {'':<11}  → {probe.fix}")
    out += ["", "What each panel shows:"]
    width = max(len(p.panel) for p in diagnosis.panels)
    for verdict in diagnosis.panels:
        out.append(f"  {verdict.panel.ljust(width)}  {verdict.level:<8}  {verdict.why}")
        if verdict.fix:
            out.append(f"  {'':{width}}  {'':<8}  → {verdict.fix}")
    out += [
        "",
        f"{diagnosis.calls} read calls, latency p50 {diagnosis.latency_ms[0]:.0f} ms, "
        f"max {diagnosis.latency_ms[1]:.0f} ms; nothing was changed.",
    ]
    # The details quote what the endpoint answered (errors, the journal's reply): cleaned here.
    return "\n".join(untrusted.clean(line) for line in out) + "\n"
