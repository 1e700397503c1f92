"""Where the emulator changes moto: Lambda runs real code, Step Functions invoke it in-process
with the state machine role's permission checked, event source mappings report AWS's states,
DynamoDB reports the read units AWS would bill, IAM authorization (when switched on) checks
the resource AWS would check, the Step Functions interpreter's own calls carry the emulator's
session token, and CloudFormation templates never construct Python objects.

Each patch names the moto 5.2 function it replaces; moto is pinned to that minor in pyproject.
"""

from __future__ import annotations

import base64
import importlib
import importlib.util
import json
import sys
import threading
import time
import types
from typing import Any

from botocore.exceptions import ClientError

from awsview.emulator import iam_policy
from awsview.emulator.lambda_runtime import FunctionSpec, LambdaRuntime
from awsview.emulator.trust import INTERNAL_KEY

# How long a mapping reports Creating / Enabling / Disabling before it settles, as AWS does.
MAPPING_TRANSITION_S = 0.3
INVOCATION_HEADER = "x-awsview-invocation"


def header_caller(headers: Any) -> dict[str, Any]:
    """Who sent an HTTP request: a Lambda invocation (by our header) or a plain API client."""
    tag = headers.get(INVOCATION_HEADER) if headers is not None else None
    if tag and "/" in tag:
        function, request_id = tag.split("/", 1)
        return {"kind": "lambda", "function": function, "request_id": request_id}
    agent = (headers.get("User-Agent") or "") if headers is not None else ""
    return {"kind": "api", "user_agent": agent.split(" ")[0][:80]}


def oldest_message_ages() -> dict[str, float | None]:
    """Each SQS queue's ARN and the age in seconds of its oldest message not deleted yet (in
    flight and delayed ones too), None when it has none: AWS's ApproximateAgeOfOldestMessage,
    which SQS only publishes to CloudWatch. moto keeps it as each message's sent timestamp in
    ``Queue._messages`` (moto 5.2); the lists are copied, since SQS calls change them meanwhile."""
    from moto.sqs.models import sqs_backends

    now_ms = time.time() * 1000
    ages: dict[str, float | None] = {}
    for regions in list(sqs_backends.values()):
        for backend in list(regions.values()):
            for queue in list(backend.queues.values()):
                sent = [m.sent_timestamp for m in list(queue._messages) if m.sent_timestamp]
                ages[queue.queue_arn] = (
                    round(max(0.0, now_ms - min(sent)) / 1000, 3) if sent else None
                )
    return ages


def load_batch_enum_alone() -> None:
    """The Step Functions interpreter imports one enum from ``moto.batch.utils``. Imported the
    usual way, that runs ``moto.batch``'s package init first, which loads every EC2 model (about
    two thirds of a second of CPU at each emulator start, for services the emulator does not
    serve). This loads that module without its package's init; a later ``import moto.batch``
    still runs the real one. Call it before anything imports the interpreter."""
    if "moto.batch.utils" in sys.modules or "moto.batch" in sys.modules:
        return
    spec = importlib.util.find_spec("moto.batch")
    if spec is None or spec.submodule_search_locations is None:
        return
    package = types.ModuleType("moto.batch")
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__ = spec
    sys.modules["moto.batch"] = package
    try:
        importlib.import_module("moto.batch.utils")
    finally:
        del sys.modules["moto.batch"]


# Hosts whose backend a dispatcher remembers: the labs' services in a few regions use a dozen; a
# request names its host (the region of its signature), so the table is bounded, not the hosts.
REMEMBERED_HOSTS = 256


def remembering_dispatcher(create_app: Any) -> Any:
    """moto's ``DomainDispatcherApplication``, whose ``get_backend_for_host`` (moto 5.2) finds each
    request's backend from its host by listing moto's package folder (a ``stat`` of each of its
    200 modules) and then matching every service's URL patterns, under the lock every request
    takes: most of a millisecond per request. The answer for a host never changes while the
    server runs, so each is found once."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    class RememberingDispatcher(DomainDispatcherApplication):
        def __init__(self, create_app: Any) -> None:
            super().__init__(create_app)
            self._backends: dict[str | None, Any] = {}

        def get_backend_for_host(self, host: str | None) -> Any:
            if host in self._backends:
                return self._backends[host]
            backend = super().get_backend_for_host(host)
            if len(self._backends) < REMEMBERED_HOSTS:
                self._backends[host] = backend
            return backend

    return RememberingDispatcher(create_app)


def install(runtime: LambdaRuntime) -> None:
    _patch_lambda(runtime)
    _patch_event_source_mappings()
    _patch_stepfunctions(runtime)
    _patch_interpreter_clients()
    _patch_dynamodb_read_units()
    _patch_resource_authorization()
    _remember_action_names()  # last: after every patch that sets an action on a response class


def _remember_action_names() -> None:
    """moto 5.2's ``BaseResponse.call_action`` asks ``method_names_from_class`` (an
    ``inspect.getmembers`` of the response class) for every request, to see that the action is
    one of its methods; the classes are whole by now, so each is asked once."""
    import functools

    from moto.core import responses

    responses.method_names_from_class = functools.cache(responses.method_names_from_class)


# --- IAM authorization by resource -------------------------------------------------------


def _patch_resource_authorization() -> None:
    """With moto's IAM authorization switched on (``INITIAL_NO_AUTH_ACTION_COUNT``), moto checks
    most calls against ``"Resource": "*"``: only IAM and SQS name their resource. A policy narrowed
    to a lab's ARNs, which AWS accepts, would then be refused. Name the resource of DynamoDB,
    DynamoDB Streams, Step Functions and CloudWatch Logs calls as AWS does (moto asks a response
    class's ``_determine_resource``); with authorization off (the default) nothing is parsed."""
    from moto import settings
    from moto.core.authorization import ActionAuthenticatorMixin
    from moto.dynamodb.responses import DynamoHandler
    from moto.dynamodbstreams.responses import DynamoDBStreamsHandler
    from moto.logs.responses import LogsResponse
    from moto.stepfunctions.responses import StepFunctionResponse
    from moto.utilities.utils import get_partition

    def params(self: Any) -> dict[str, Any]:
        if ActionAuthenticatorMixin.request_count < settings.INITIAL_NO_AUTH_ACTION_COUNT:
            return {}  # not authorized by moto yet: no need to know
        try:
            body = (
                json.loads(self.body or "{}") if isinstance(self.body, (str, bytes)) else self.body
            )
        except ValueError:
            return {}
        return body if isinstance(body, dict) else {}

    def arn(self: Any, service: str, resource: str) -> str:
        partition = get_partition(self.region)
        return f"arn:{partition}:{service}:{self.region}:{self.current_account}:{resource}"

    def table(self: Any) -> str:
        name = params(self).get("TableName")
        return arn(self, "dynamodb", f"table/{name}") if isinstance(name, str) and name else "*"

    def stream(self: Any) -> str:
        given = params(self)
        found = given.get("StreamArn") or given.get(
            "ShardIterator"
        )  # moto's iterator: "<stream arn>|…"
        return found.split("|", 1)[0] if isinstance(found, str) and found else "*"

    def state_machine(self: Any) -> str:
        given = params(self)
        found = given.get("executionArn") or given.get("stateMachineArn")
        return found if isinstance(found, str) and found else "*"

    def log_group(self: Any) -> str:
        name = params(self).get("logGroupName")
        return arn(self, "logs", f"log-group:{name}:*") if isinstance(name, str) and name else "*"

    for cls, determine in (
        (DynamoHandler, table),
        (DynamoDBStreamsHandler, stream),
        (StepFunctionResponse, state_machine),
        (LogsResponse, log_group),
    ):
        cls._determine_resource = determine

    from botocore.awsrequest import AWSRequest
    from moto.iam.access_control import IAMRequestBase

    def create_aws_request(self: Any) -> AWSRequest:
        """Replaces IAMRequestBase._create_aws_request, which re-signs a GET (every Lambda
        listing) over its parsed parameters instead of its empty body, so that no such call's
        signature ever matched. (A form POST's body was parsed away: its parameters are it.)"""
        signed = self._get_string_between(
            "SignedHeaders=", ",", self._headers["Authorization"]
        ).split(";")
        headers = self._create_headers_for_aws_request(signed, self._headers)
        body = (
            b""
            if self._method in ("GET", "HEAD", "DELETE") and not self._body
            else (self._body or self._data)
        )
        request = AWSRequest(method=self._method, url=self._path, data=body, headers=headers)
        request.context["timestamp"] = headers["X-Amz-Date"]
        return request

    IAMRequestBase._create_aws_request = create_aws_request


# --- DynamoDB read units ------------------------------------------------------------------

READ_UNIT_BYTES = 4096


def read_units(sizes: Any, consistent: bool) -> float:
    """What AWS bills a Scan or Query page: the bytes read, rounded up to 4 KB, one unit per 4 KB
    strongly consistent, half eventually consistent; never less than one such step."""
    steps = max(1, -(-sum(sizes) // READ_UNIT_BYTES))
    return float(steps) if consistent else steps / 2


def _patch_dynamodb_read_units() -> None:
    """moto answers ``ReturnConsumedCapacity`` on Scan and Query with a constant 1.0; report what
    AWS would bill instead, so what watching costs can be measured here. The page's items are
    what was read: the viewer never filters (a filter would still bill the items it drops)."""
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.responses import DynamoHandler

    def size(value: Any) -> int:
        return (value if isinstance(value, DynamoType) else DynamoType(value)).size()

    for name in ("scan", "query"):
        original = getattr(DynamoHandler, name)

        def patched(self: Any, _original: Any = original) -> Any:
            result = _original(self)
            body = result.result
            capacity = body.get("ConsumedCapacity") if isinstance(body, dict) else None
            if capacity:
                sizes = (
                    sum(len(k.encode()) + size(v) for k, v in attrs.items())
                    for attrs in body.get("Items", ())
                )
                units = read_units(sizes, bool(self.body.get("ConsistentRead")))
                capacity["CapacityUnits"] = units
                if "Table" in capacity:
                    capacity["Table"]["CapacityUnits"] = units
            return result

        patched.__name__ = name
        setattr(DynamoHandler, name, patched)


# --- Lambda -------------------------------------------------------------------------------


def _patch_lambda(runtime: LambdaRuntime) -> None:
    from moto.awslambda import models

    def invoke(self: Any, body: Any, request_headers: Any, response_headers: Any) -> bytes:
        """Replaces moto's LambdaFunction.invoke (Docker or echo) with the warm local runtime."""
        caller = header_caller(request_headers)
        payload = body if body else b"{}"
        inv_type = request_headers.get("X-Amz-Invocation-Type") or "RequestResponse"
        if inv_type == "DryRun":
            return b""
        if inv_type == "Event":
            threading.Thread(
                target=runtime.invoke, args=(self, payload, caller), daemon=True
            ).start()
            return b""
        result = runtime.invoke(self, payload, caller)
        if result.function_error:
            response_headers["x-amz-function-error"] = result.function_error
        response_headers["x-amz-executed-version"] = str(self.version)
        tail = result.log_tail.encode(
            "utf-8", errors="replace"
        )  # a handler may print lone surrogates
        response_headers["x-amz-log-result"] = base64.b64encode(tail).decode()
        return result.payload

    models.LambdaFunction.invoke = invoke

    original_create = models.LambdaBackend.create_function
    original_update_code = models.LambdaBackend.update_function_code
    original_update_config = models.LambdaBackend.update_function_configuration
    original_delete = models.LambdaBackend.delete_function

    def create_function(self: Any, spec: dict[str, Any]) -> Any:
        fn = original_create(self, spec)
        runtime.prewarm(FunctionSpec.of(fn))
        return fn

    def update_function_code(self: Any, function_name: str, qualifier: str, body: dict) -> Any:
        result = original_update_code(self, function_name, qualifier, body)
        fn = self.get_function(function_name, qualifier)
        runtime.retire(fn.function_arn)
        runtime.prewarm(FunctionSpec.of(fn))
        return result

    def update_function_configuration(
        self: Any, function_name: str, qualifier: str, body: dict
    ) -> Any:
        result = original_update_config(self, function_name, qualifier, body)
        runtime.retire(self.get_function(function_name, qualifier).function_arn)
        return result

    def delete_function(self: Any, function_name: str, qualifier: str | None = None) -> None:
        try:
            runtime.retire(self.get_function(function_name, qualifier).function_arn)
        except Exception:  # moto raises its own not-found error below
            pass
        original_delete(self, function_name, qualifier)

    models.LambdaBackend.create_function = create_function
    models.LambdaBackend.update_function_code = update_function_code
    models.LambdaBackend.update_function_configuration = update_function_configuration
    models.LambdaBackend.delete_function = delete_function


# --- Event source mappings ----------------------------------------------------------------


def mapping_state(esm: Any) -> str:
    """The State AWS would report for a mapping right now."""
    if getattr(esm, "_awsview_deleting", False):
        return "Deleting"
    since = time.monotonic() - getattr(esm, "_awsview_changed", 0.0)
    pending = getattr(esm, "_awsview_pending", None)
    if pending and since < MAPPING_TRANSITION_S:
        return pending
    return "Enabled" if esm.enabled else "Disabled"


def _patch_event_source_mappings() -> None:
    from moto.awslambda import models

    original_create = models.LambdaBackend.create_event_source_mapping
    original_update = models.LambdaBackend.update_event_source_mapping
    original_delete = models.LambdaBackend.delete_event_source_mapping
    original_config = models.EventSourceMapping.get_configuration

    def create(self: Any, spec: dict[str, Any]) -> Any:
        esm = original_create(self, spec)
        # moto invokes SQS mappings synchronously inside SendMessage; our poller does it instead.
        from moto.sqs.models import sqs_backends

        for queue in sqs_backends[self.account_id][self.region_name].queues.values():
            if queue.lambda_event_source_mappings.get(esm.function_arn) is esm:
                del queue.lambda_event_source_mappings[esm.function_arn]
        esm._awsview_pending = "Creating"
        esm._awsview_changed = time.monotonic()
        return esm

    def update(self: Any, uuid: str, spec: dict[str, Any]) -> Any:
        esm = self.get_event_source_mapping(uuid)
        was_enabled = esm.enabled if esm else None
        result = original_update(self, uuid, spec)
        if esm is not None and was_enabled != esm.enabled:
            esm._awsview_pending = "Enabling" if esm.enabled else "Disabling"
            esm._awsview_changed = time.monotonic()
        return result

    def delete(self: Any, uuid: str) -> Any:
        esm = original_delete(self, uuid)
        if esm is not None:
            esm._awsview_deleting = True
        return esm

    def get_configuration(self: Any) -> dict[str, Any]:
        config = original_config(self)
        config["State"] = mapping_state(self)
        return config

    models.LambdaBackend.create_event_source_mapping = create
    models.LambdaBackend.update_event_source_mapping = update
    models.LambdaBackend.delete_event_source_mapping = delete
    models.EventSourceMapping.get_configuration = get_configuration


# --- Step Functions -> Lambda -------------------------------------------------------------


def _access_denied(role_arn: str, execution_name: str, function_arn: str) -> ClientError:
    role_name = role_arn.rsplit("/", 1)[-1]
    account = role_arn.split(":")[4] if role_arn.count(":") >= 5 else "123456789012"
    session = f"{execution_name}"[:64]
    message = (
        f"User: arn:aws:sts::{account}:assumed-role/{role_name}/{session} is not authorized to "
        f"perform: lambda:InvokeFunction on resource: {function_arn} because no identity-based "
        f"policy allows the lambda:InvokeFunction action"
    )
    return ClientError(
        {
            "Error": {"Code": "AccessDeniedException", "Message": message},
            "ResponseMetadata": {"HTTPStatusCode": 403, "RequestId": _request_id()},
        },
        "Invoke",
    )


def _not_found(function_name: str) -> ClientError:
    return ClientError(
        {
            "Error": {
                "Code": "ResourceNotFoundException",
                "Message": f"Function not found: {function_name}",
            },
            "ResponseMetadata": {"HTTPStatusCode": 404, "RequestId": _request_id()},
        },
        "Invoke",
    )


def _request_id() -> str:
    import uuid

    return str(uuid.uuid4())


def role_may_invoke(account_id: str, role_arn: str, function_arn: str) -> bool:
    from moto.iam.models import iam_backends

    backend = iam_backends[account_id]["global"]
    role = next((r for r in list(backend.roles.values()) if r.arn == role_arn), None)
    if role is None:
        return False
    try:
        trust = iam_policy.parse_document(role.assume_role_policy_document)
    except ValueError:
        return False
    trusted = any(
        s.get("Effect") == "Allow" and "states.amazonaws.com" in json.dumps(s.get("Principal", {}))
        for s in iam_policy._as_list(trust.get("Statement"))
        if isinstance(s, dict)
    )
    resources = [function_arn, f"{function_arn}:*"]
    return trusted and iam_policy.is_allowed(
        iam_policy.role_documents(role), "lambda:InvokeFunction", resources
    )


def _patch_stepfunctions(runtime: LambdaRuntime) -> None:
    from moto.awslambda.models import lambda_backends
    from moto.stepfunctions.parser.api import InvocationResponse
    from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
        state_task_service_lambda as service_lambda,
    )
    from moto.utilities.collections import select_from_typed_dict

    original = lambda_eval_utils.execute_lambda_function_integration

    def execute(env: Any, parameters: dict, region: str, state_credentials: Any) -> None:
        """Replaces moto's HTTP round trip to Lambda with an in-process, permission-checked call
        that knows which execution, state and attempt asked for it."""
        if env.is_mocked_mode():
            return original(env, parameters, region, state_credentials)
        context = env.states.context_object.context_object_data
        execution = context.get("Execution", {})
        state = context.get("State", {})
        account = env.aws_execution_details.account
        name = parameters.get("FunctionName", "")
        try:
            fn = lambda_backends[account][region].get_function(name, parameters.get("Qualifier"))
        except Exception:  # moto's error types vary: not found, as AWS says
            raise _not_found(name) from None
        role_arn = getattr(state_credentials, "role_arn", None) or ""
        if not role_may_invoke(account, role_arn, fn.function_arn):
            raise _access_denied(role_arn, execution.get("Name", "execution"), fn.function_arn)
        caller = {
            "kind": "stepfunctions",
            "execution_arn": execution.get("Id"),
            "execution_name": execution.get("Name"),
            "state_machine_arn": context.get("StateMachine", {}).get("Id"),
            "state": state.get("Name"),
            "attempt": int(state.get("RetryCount", 0)) + 1,
        }
        result = runtime.invoke(fn, parameters.get("Payload") or b"{}", caller)
        try:
            payload: Any = json.loads(result.payload)
        except ValueError:
            payload = result.payload.decode(errors="replace")
        if result.function_error:
            raise lambda_eval_utils.LambdaFunctionErrorException(
                result.function_error, json.dumps(payload, separators=(",", ":"))
            )
        response = {"StatusCode": 200, "Payload": payload, "ExecutedVersion": str(fn.version)}
        env.stack.append(select_from_typed_dict(typed_dict=InvocationResponse, obj=response))

    lambda_eval_utils.execute_lambda_function_integration = execute

    original_cause = service_lambda.StateTaskServiceLambda._error_cause_from_client_error

    def error_cause(client_error: ClientError) -> tuple[str, str]:
        error, cause = original_cause(client_error)
        # Step Functions reports Lambda errors the Java SDK does not model under its base class.
        if client_error.response["Error"]["Code"] == "AccessDeniedException":
            error = "Lambda.AWSLambdaException"
        return error, cause

    service_lambda.StateTaskServiceLambda._error_cause_from_client_error = staticmethod(error_cause)


def _patch_interpreter_clients() -> None:
    """moto 5.2's ``asl.utils.boto_client.boto_client_for``: the Step Functions interpreter calls
    the other services (DynamoDB, SQS, ... integrations) over HTTP, signed with access key
    ``ak``. Its clients also carry the emulator's session token, so an emulator that answers only
    its token still answers them. Each integration module imported the function by name."""
    import sys

    import moto.stepfunctions.parser.asl.parse.preprocessor  # noqa: F401  (imports them all)
    from moto.stepfunctions.parser.asl.utils import boto_client

    original = boto_client.boto_client_for

    def carry_key(request: Any, **_: Any) -> None:
        request.headers["X-Amz-Security-Token"] = INTERNAL_KEY

    def boto_client_for(region: str, service: str, state_credentials: Any = None) -> Any:
        client = original(region, service, state_credentials)
        client.meta.events.register("before-sign", carry_key)
        return client

    for name, module in list(sys.modules.items()):
        if name.startswith("moto.stepfunctions.parser") and (
            getattr(module, "boto_client_for", None) is original
        ):
            module.boto_client_for = boto_client_for  # type: ignore[union-attr]


_templates_safe = False


def safe_cloudformation_templates() -> None:
    """moto 5.2 reads CloudFormation YAML templates with ``yaml.load(..., Loader=yaml.Loader)``
    (``cloudformation.models.Stack.parse_template``, ``ChangeSet._parse_template``,
    ``responses.get_template_summary_response_from_template`` and ``validate_template``): a
    ``!!python/object/apply`` tag in a template runs code as the emulator's user. Those modules
    see a ``yaml`` whose ``Loader`` is a safe loader that knows only CloudFormation's short tags
    (``!Ref``, ``!GetAtt``, ``!Sub`` ...); and moto's ``add_multi_constructor("", ...)``, which
    taught every PyYAML loader in the process to accept any tag, does nothing there."""
    global _templates_safe
    if _templates_safe:
        return
    import types

    import yaml
    from moto.cloudformation import models, responses
    from moto.cloudformation.exceptions import ValidationError
    from moto.cloudformation.utils import yaml_tag_constructor

    class CloudFormationLoader(yaml.SafeLoader):
        pass

    def short_tag(loader: Any, suffix: str, node: Any) -> Any:
        return yaml_tag_constructor(loader, "!" + suffix, node)  # "!Ref": {"Ref": ...}

    def other_tag(loader: Any, node: Any) -> Any:
        raise ValidationError(message=f"Template format error: unsupported YAML tag {node.tag}")

    CloudFormationLoader.add_multi_constructor("!", short_tag)
    CloudFormationLoader.add_constructor(None, other_tag)  # type: ignore[arg-type]

    class SafeYaml(types.ModuleType):
        Loader = CloudFormationLoader

        def __getattr__(self, name: str) -> Any:
            return getattr(yaml, name)

        @staticmethod
        def add_multi_constructor(*_: Any, **__: Any) -> None:
            pass

    safe = SafeYaml("yaml")
    models.yaml = safe  # type: ignore[attr-defined]
    responses.yaml = safe  # type: ignore[attr-defined]
    _templates_safe = True
