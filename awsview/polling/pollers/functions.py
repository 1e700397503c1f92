"""Lambda functions (configuration only — never the code URL) and their event source mappings."""

from __future__ import annotations

from typing import Any

from awsview.aws.session import Connection
from awsview.model import keys
from awsview.model.resources import Function, Mapping
from awsview.model.snapshot import Snapshot
from awsview.model.state import LabState
from awsview.polling.base import Poller, failing
from awsview.polling.quiet import LISTING_CEILING_S, Quiet

FUNCTIONS = keys.FUNCTIONS
TRANSITIONAL = ("Creating", "Enabling", "Disabling", "Updating", "Deleting")


class FunctionPoller(Poller):
    kind = FUNCTIONS
    slow_interval = 8.0
    follows = ("function", "mapping")  # two listings either way: read them whole

    def __init__(self, profile):
        super().__init__(profile)
        self._quiet = Quiet(LISTING_CEILING_S)  # a lab deploys functions now and then

    def is_busy(self, model: LabState) -> bool:
        return any(m.state in TRANSITIONAL for f in model.data(FUNCTIONS, ()) for m in f.mappings)

    async def poll(self, conn: Connection, model: LabState) -> list[Snapshot[Any]]:
        previous = model.get(FUNCTIONS)
        if (
            previous is not None
            and not self.is_busy(model)
            and not self._quiet.due(FUNCTIONS, model)
        ):
            return []
        snapshot = await self.fetch(model, FUNCTIONS, lambda: self._functions(conn))
        self._quiet.read(
            FUNCTIONS,
            previous is None or snapshot.data != previous.data,
            failed=failing(snapshot),
        )
        return [snapshot]

    async def refresh(
        self, conn: Connection, model: LabState, names: frozenset[str]
    ) -> list[Snapshot[Any]]:
        """The change feed named a function or a mapping: both listings, now."""
        self._quiet.forget(FUNCTIONS)
        return await self.poll(conn, model)

    async def _functions(self, conn: Connection) -> tuple[Function, ...]:
        listed = await conn.pages(
            "lambda", "list_functions", "Functions", token_in="Marker", token_out="NextMarker"
        )
        mappings = await conn.pages(
            "lambda",
            "list_event_source_mappings",
            "EventSourceMappings",
            token_in="Marker",
            token_out="NextMarker",
        )
        by_function: dict[str, list[Mapping]] = {}
        for m in mappings:
            arn = m.get("FunctionArn", "")
            by_function.setdefault(arn.split(":version")[0], []).append(
                Mapping(
                    uuid=m["UUID"],
                    source_arn=m.get("EventSourceArn", ""),
                    function_arn=arn,
                    batch_size=m.get("BatchSize"),
                    state=m.get("State", "Unknown"),
                    enabled_by=m.get("StateTransitionReason"),
                    last_result=m.get("LastProcessingResult"),
                )
            )
        functions = []
        for f in listed:
            if not self.prefix_match(f["FunctionName"]):
                continue
            functions.append(
                Function(
                    name=f["FunctionName"],
                    arn=f["FunctionArn"],
                    runtime=f.get("Runtime"),
                    handler=f.get("Handler"),
                    role=f.get("Role"),
                    timeout=f.get("Timeout"),
                    memory_size=f.get("MemorySize"),
                    code_sha256=f.get("CodeSha256"),
                    last_modified=f.get("LastModified"),
                    state=f.get("State"),
                    environment_names=tuple(
                        sorted((f.get("Environment") or {}).get("Variables", {}))
                    ),
                    mappings=tuple(
                        sorted(by_function.get(f["FunctionArn"], []), key=lambda m: m.source_arn)
                    ),
                )
            )
        return tuple(sorted(functions, key=lambda f: f.name))
