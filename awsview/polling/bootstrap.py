"""Start-up of every command that polls: the preflight (the endpoint answers, the credentials
work) and which lab is there (or which prefix to watch). The viewer, `dump`, `doctor`, the class
view and `iam-policy`'s tests start here."""

from __future__ import annotations

from awsview import labspec
from awsview.aws.errors import classify
from awsview.aws.session import Connection
from awsview.model.errors import UserError


class PreflightError(UserError):
    """A one-line reason the endpoint cannot be used; ``kind`` is the failure's ("network",
    "auth", …): credentials that AWS refuses are a configuration error, not an outage."""

    def __init__(self, text: str, kind: str = "other", reason: str | None = None):
        super().__init__(text)
        self.kind = kind
        # Credentials AWS refuses and a command line that cannot work are the user's to fix (2);
        # an endpoint that does not answer is a failure (1).
        self.exit_status = 2 if kind in ("auth", "usage") else 1
        self.reason = reason or text  # without saying where: for a place that already names it


async def preflight(conn: Connection) -> str:
    """Proves the endpoint answers and the credentials work; returns the account id."""
    try:
        identity = await conn.call("sts", "get_caller_identity")
    except Exception as exc:  # whatever the call raised, in one line (classify)
        failure = classify(exc)
        raise PreflightError(
            f"cannot use {conn.describe()}: {failure.text}", failure.kind, failure.text
        ) from None
    return identity.get("Account", "?")


class NeedsPrefix(PreflightError):
    """No known lab on an account that is not local, and no prefix: AWS View does not watch a
    whole region of a real account (it would scan every table in it). Says which prefixes exist."""

    def __init__(self, where: str, found: list[tuple[str, int]]):
        names = ", ".join(f"{p} ({n})" for p, n in found[:6])
        text = (
            f"no known lab on {where} and no --prefix: on an account AWS View watches only "
            f"resources named PREFIX*, never a whole region — "
            + (f"names found start with {names}" if names else "no shared name prefix found")
        )
        super().__init__(text, "usage")
        self.found = found


async def detect_lab_spec(conn: Connection, prefix: str = "") -> labspec.LabSpec:
    """The lab whose resources exist here; otherwise a generic view of the names under
    ``prefix``. With no prefix that is the whole region: only on a local endpoint (an emulator),
    anywhere else NeedsPrefix says which prefixes exist. A prefix given is the user's choice: only
    a lab named by exactly that prefix is shown in its place."""
    known = []
    for name in labspec.available():
        try:
            lab = labspec.load(name)
        except labspec.SpecError:
            continue  # a broken lab folder is said when it is named (and by `awsview lab list`)
        if not prefix or lab.prefix == prefix:
            known.append(lab)
    names: list[str] = []
    for service, method, key, token_in, token_out in (
        ("lambda", "list_functions", "Functions", "Marker", "NextMarker"),
        (
            "dynamodb",
            "list_tables",
            "TableNames",
            "ExclusiveStartTableName",
            "LastEvaluatedTableName",
        ),
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
        raise NeedsPrefix(conn.describe(), labspec.common_prefixes(names))
    return labspec.generic_spec(prefix)
