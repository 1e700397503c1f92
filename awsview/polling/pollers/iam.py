"""IAM roles by prefix: who may assume them and what their policies grant (action → resource)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from urllib.parse import unquote

from awsview.aws.session import Connection
from awsview.model import keys
from awsview.model.resources import PolicyGrant, Role
from awsview.model.snapshot import Snapshot
from awsview.model.state import LabState
from awsview.polling.base import Poller, failing, unless_deleted
from awsview.polling.quiet import LISTING_CEILING_S, Quiet

ROLES = keys.ROLES


def _document(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    try:
        return json.loads(unquote(str(value)))
    except ValueError:
        return {}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None else [value]


def principals(trust: dict[str, Any]) -> tuple[str, ...]:
    found = []
    for statement in _as_list(trust.get("Statement")):
        if not isinstance(statement, dict) or statement.get("Effect") != "Allow":
            continue
        principal = statement.get("Principal", {})
        if isinstance(principal, str):
            found.append(principal)
            continue
        for kind in ("Service", "AWS", "Federated"):
            found.extend(str(p) for p in _as_list(principal.get(kind)))
    return tuple(sorted(set(found)))


def grants(policy: str, document: dict[str, Any]) -> list[PolicyGrant]:
    result = []
    for statement in _as_list(document.get("Statement")):
        if not isinstance(statement, dict):
            continue
        actions = _as_list(statement.get("Action")) or [
            f"not {a}" for a in _as_list(statement.get("NotAction"))
        ]
        resources = _as_list(statement.get("Resource")) or [
            f"not {r}" for r in _as_list(statement.get("NotResource"))
        ]
        for action in actions:
            for resource in resources:
                result.append(
                    PolicyGrant(
                        policy, str(statement.get("Effect", "")), str(action), str(resource)
                    )
                )
    return result


class RolePoller(Poller):
    kind = ROLES
    fast_interval = 2.0
    slow_interval = 15.0
    follows = ("role",)

    def __init__(self, profile):
        super().__init__(profile)
        # Polled, roles and their policies change when a lab step deploys: a read that found
        # them as they were (three or more calls a role) waits longer before the next.
        self._quiet = Quiet(LISTING_CEILING_S)

    async def poll(self, conn: Connection, model: LabState) -> list[Snapshot[Any]]:
        previous = model.get(ROLES)
        if previous is not None and not self._quiet.due(ROLES, model):
            return []
        snapshot = await self.fetch(model, ROLES, lambda: self._roles(conn))
        self._quiet.read(
            ROLES, previous is None or snapshot.data != previous.data, failed=failing(snapshot)
        )
        return [snapshot]

    async def refresh(
        self, conn: Connection, model: LabState, names: frozenset[str]
    ) -> list[Snapshot[Any]]:
        """Reads again only the roles the change feed named (GetRole, then their policies); a
        role not known yet means listing them all."""
        shown, names = self.named(model, ROLES, names)
        if not names:
            return []  # another lab's role
        if shown is None or not names <= set(shown):
            self._quiet.forget(ROLES)  # listed again now, however lately it was
            return await self.poll(conn, model)

        async def read() -> tuple[Role, ...]:
            roles = dict(shown)
            for name in names:
                got = await unless_deleted(conn.call("iam", "get_role", RoleName=name))
                role = None if got is None else await unless_deleted(self._role(conn, got["Role"]))
                if role is None:
                    roles.pop(name, None)  # deleted
                else:
                    roles[name] = role
            return tuple(sorted(roles.values(), key=lambda r: r.name))

        return [await self.fetch(model, ROLES, read)]

    async def _roles(self, conn: Connection) -> tuple[Role, ...]:
        listed = await conn.pages(
            "iam", "list_roles", "Roles", token_in="Marker", token_out="Marker"
        )
        roles = []
        for entry in listed:
            if not self.prefix_match(entry["RoleName"]):
                continue
            role = await unless_deleted(self._role(conn, entry))
            if role is not None:  # else deleted while we looked
                roles.append(role)
        return tuple(sorted(roles, key=lambda r: r.name))

    async def _role(self, conn: Connection, entry: dict[str, Any]) -> Role:
        name = entry["RoleName"]
        found: list[PolicyGrant] = []
        inline = await conn.pages(
            "iam",
            "list_role_policies",
            "PolicyNames",
            token_in="Marker",
            token_out="Marker",
            RoleName=name,
        )
        for policy in inline:
            got = await unless_deleted(
                conn.call("iam", "get_role_policy", RoleName=name, PolicyName=policy)
            )
            if got is None:
                continue  # the policy was deleted while we looked; the role is still there
            found += grants(policy, _document(got.get("PolicyDocument")))
        attached = await conn.pages(
            "iam",
            "list_attached_role_policies",
            "AttachedPolicies",
            token_in="Marker",
            token_out="Marker",
            RoleName=name,
        )
        for policy in attached:
            found.append(
                PolicyGrant(
                    policy["PolicyArn"], "Attached", "(managed policy)", policy["PolicyName"]
                )
            )
        trust = _document(entry.get("AssumeRolePolicyDocument"))
        created = entry.get("CreateDate")
        return Role(
            name=name,
            arn=entry["Arn"],
            trust_principals=principals(trust),
            grants=tuple(found),
            created=created.timestamp() if isinstance(created, datetime) else None,
        )
