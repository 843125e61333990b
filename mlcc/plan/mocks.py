"""Run the Pulumi program offline under Pulumi's mock runtime and record what it registers.

Used by `mlcc plan` and by the component tests. No CLI, plugins or cloud are involved: each
resource registration is recorded with its type, name, parent, inputs, dependencies and provider,
and answered with its inputs plus plausible computed outputs (ARNs, ids) so that dependent
resources can be built.
The monitor does not advertise resource references, which avoids the mock runtime's
cross-event-loop failures (pulumi/pulumi#6561).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import runpy
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import resource as pulumi_resource
from pulumi.runtime import rpc
from pulumi.runtime.proto import resource_pb2, source_pb2

ACCOUNT_ID = "123456789012"
REGION = "us-east-1"
REDACTED = "[secret]"

OutputFactory = Callable[[pulumi.runtime.MockResourceArgs], dict[str, Any]]
CallFactory = Callable[[pulumi.runtime.MockCallArgs], dict[str, Any]]


@dataclass(frozen=True)
class Registration:
    type: str
    name: str
    urn: str
    parent: str | None
    custom: bool
    raw_inputs: Mapping[str, Any] = field(repr=False)
    # URNs this registration waits for (explicit depends_on and resources behind its inputs),
    # and per input the URNs behind it (the request's propertyDependencies).
    dependencies: tuple[str, ...] = ()
    property_dependencies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The provider reference (`<provider urn>::<id>`) of a custom resource, if one was given.
    provider: str | None = None
    # Input paths whose change replaces the resource (ResourceOptions.replace_on_changes).
    replace_on_changes: tuple[str, ...] = ()
    # The customTimeouts option: operation (create, update, delete) -> duration, those set.
    custom_timeouts: Mapping[str, str] = field(default_factory=dict)

    @property
    def inputs(self) -> Any:
        """Inputs with secrets revealed and integral floats as ints (for assertions)."""
        return _normalise(self.raw_inputs, reveal=True)

    @property
    def redacted_inputs(self) -> Any:
        """Inputs with every secret replaced by [secret] (for anything shown or written)."""
        return _normalise(self.raw_inputs, reveal=False)


@dataclass
class OfflineRun:
    registrations: list[Registration]
    outputs: dict[str, Any]

    def of_type(self, type_token: str) -> list[Registration]:
        return [r for r in self.registrations if r.type == type_token]

    def one(self, type_token: str) -> Registration:
        found = self.of_type(type_token)
        assert len(found) == 1, f"expected one {type_token}, found {len(found)}"
        return found[0]

    def by_urn(self, urn: str) -> Registration | None:
        return next((r for r in self.registrations if r.urn == urn), None)


def _normalise(value: Any, *, reveal: bool) -> Any:
    if rpc.is_rpc_secret(value):
        revealed = _normalise(rpc.unwrap_rpc_secret(value), reveal=True)
        return revealed if reveal else _redacted(revealed)
    if isinstance(value, dict):
        return {k: _normalise(v, reveal=reveal) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise(v, reveal=reveal) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, pulumi.FileAsset):  # compare and show file assets by their path
        return {"fileAsset": str(value.path)}
    return value


def _redacted(value: Any) -> Any:
    """A secret's shape with every value replaced: a Secret's `stringData` keeps its keys, so the
    redacted manifest stays a valid object."""
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return REDACTED


def fake_arn(service: str, kind: str, name: str) -> str:
    return f"arn:aws:{service}:{REGION}:{ACCOUNT_ID}:{kind}/{name}"


def _default_outputs(args: pulumi.runtime.MockResourceArgs) -> dict[str, Any]:
    digest = hashlib.sha256(f"{args.typ}:{args.name}".encode()).hexdigest()
    service = args.typ.split(":")[1].split("/")[0] if args.typ.count(":") >= 2 else "mock"
    return {"arn": fake_arn(service, args.name, args.name), "mockDigest": f"sha256:{digest}"}


# Computed outputs that specific resource types must return for dependants to build.
def _mock_digest(*parts: object) -> str:
    return "sha256:" + hashlib.sha256(repr(parts).encode()).hexdigest()


def _named(args: pulumi.runtime.MockResourceArgs) -> str:
    return str(args.inputs.get("name") or f"{args.name}-mock")


_EKS_ISSUER = f"oidc.eks.{REGION}.amazonaws.com/id/MOCKOIDC0123456789"
_MOCK_KUBECONFIG = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [{"name": "mock", "cluster": {"server": "https://mock.eks.example"}}],
    "contexts": [{"name": "mock", "context": {"cluster": "mock", "user": "mock"}}],
    "current-context": "mock",
    "users": [{"name": "mock", "user": {}}],
}

# Computed outputs that specific resource types must return for dependants to build.
OUTPUTS: dict[str, OutputFactory] = {
    "eks:index:Cluster": lambda args: {
        "kubeconfig": _MOCK_KUBECONFIG,
        "kubeconfigJson": json.dumps(_MOCK_KUBECONFIG),
        "oidcProviderArn": f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{_EKS_ISSUER}",
        "oidcProviderUrl": f"https://{_EKS_ISSUER}",
        "oidcIssuer": _EKS_ISSUER,
        "clusterSecurityGroupId": f"sg-{args.name}-cluster",
        "nodeSecurityGroupId": f"sg-{args.name}-nodes",
    },
    "aws:iam/role:Role": lambda args: {
        "name": _named(args),
        "arn": f"arn:aws:iam::{ACCOUNT_ID}:role/{_named(args)}",
    },
    "aws:s3/bucket:Bucket": lambda args: {
        "bucket": f"{args.inputs.get('bucketPrefix', '')}{args.name}-mock",
        "arn": f"arn:aws:s3:::{args.inputs.get('bucketPrefix', '')}{args.name}-mock",
    },
    "aws:ecr/repository:Repository": lambda args: {
        "registryId": ACCOUNT_ID,
        "repositoryUrl": f"{ACCOUNT_ID}.dkr.ecr.{REGION}.amazonaws.com/{_named(args)}",
        "arn": f"arn:aws:ecr:{REGION}:{ACCOUNT_ID}:repository/{_named(args)}",
    },
    "docker-build:index:Image": lambda args: {
        "digest": _mock_digest(args.inputs.get("tags"), args.inputs.get("buildArgs")),
    },
    "aws-native:sagemaker:Cluster": lambda args: {
        "clusterArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT_ID}:cluster/mock{args.name}",
        "clusterStatus": "InService",
    },
}

CALLS: dict[str, CallFactory] = {
    "aws:index/getCallerIdentity:getCallerIdentity": lambda _: {
        "accountId": ACCOUNT_ID,
        "arn": f"arn:aws:iam::{ACCOUNT_ID}:user/mock",
        "userId": "AIDAMOCK",
        "id": ACCOUNT_ID,
    },
    "aws:index/getRegion:getRegion": lambda _: {"name": REGION, "region": REGION, "id": REGION},
    "aws:index/getPartition:getPartition": lambda _: {
        "partition": "aws",
        "dnsSuffix": "amazonaws.com",
        "id": "aws",
    },
    "aws:index/getAvailabilityZones:getAvailabilityZones": lambda _: {
        "names": [f"{REGION}a", f"{REGION}b", f"{REGION}c"],
        "zoneIds": ["use1-az1", "use1-az2", "use1-az4"],
        "id": REGION,
    },
    "aws:eks/getAddonVersion:getAddonVersion": lambda args: {
        "addonName": args.args.get("addonName"),
        "kubernetesVersion": args.args.get("kubernetesVersion"),
        "version": "v1.20.4-eksbuild.2",
        "id": "mock",
    },
    "aws:eks/getCluster:getCluster": lambda args: {
        "name": args.args.get("name"),
        "arn": f"arn:aws:eks:{REGION}:{ACCOUNT_ID}:cluster/{args.args.get('name')}",
        "endpoint": "https://MOCK.gr7.us-east-1.eks.amazonaws.com",
        "certificateAuthorities": [{"data": "TU9DSy1DQQ=="}],
        "vpcConfig": {"clusterSecurityGroupId": "sg-eks-cluster-mock", "vpcId": "vpc-mock"},
        "id": args.args.get("name"),
    },
    "aws:ecr/getAuthorizationToken:getAuthorizationToken": lambda _: {
        "authorizationToken": "QVdTOm1vY2s=",
        "userName": "AWS",
        "password": "mock-ecr-password",
        "proxyEndpoint": f"https://{ACCOUNT_ID}.dkr.ecr.{REGION}.amazonaws.com",
        "expiresAt": "2030-01-01T00:00:00Z",
        "id": ACCOUNT_ID,
    },
    "aws-native:sagemaker:getCluster": lambda args: {
        "clusterArn": args.args.get("clusterArn"),
        "clusterStatus": "InService",
        "orchestrator": {
            "eks": {"clusterArn": f"arn:aws:eks:{REGION}:{ACCOUNT_ID}:cluster/existing-eks"}
        },
        "instanceGroups": [
            {
                "instanceGroupName": "gpu",
                "instanceType": "ml.g5.12xlarge",
                "instanceCount": 1,
                "executionRole": f"arn:aws:iam::{ACCOUNT_ID}:role/existing-hyperpod-nodes",
            }
        ],
    },
}


class RecordingMocks(pulumi.runtime.Mocks):
    def __init__(self) -> None:
        self.parents: dict[str, str | None] = {}
        self.registrations: list[Registration] = []
        # The inputs the mock monitor just decoded, per thread (it runs each registration on
        # one of the event loop's executor threads): recorded without decoding them again.
        self.decoded = threading.local()

    def new_resource(
        self, args: pulumi.runtime.MockResourceArgs
    ) -> tuple[str | None, dict[str, Any]]:
        self.decoded.inputs = args.inputs
        outputs = {**_default_outputs(args), **args.inputs}
        extra = OUTPUTS.get(args.typ)
        if extra:
            outputs.update(extra(args))
        return f"{args.name}-id", outputs

    def call(
        self, args: pulumi.runtime.MockCallArgs
    ) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        factory = CALLS.get(args.token)
        return (factory(args) if factory else {}), []  # the mock monitor iterates failures


def _custom_timeouts(request: Any) -> dict[str, str]:
    timeouts = request.customTimeouts
    named = {"create": timeouts.create, "update": timeouts.update, "delete": timeouts.delete}
    return {operation: value for operation, value in named.items() if value}


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """Records each registration with its parent; drops resource references (see module doc)."""

    mocks: RecordingMocks

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        if request.type != "pulumi:pulumi:Stack":
            self.mocks.registrations.append(
                Registration(
                    type=request.type,
                    name=request.name,
                    urn=response.urn,
                    parent=request.parent or None,
                    custom=bool(request.custom),
                    raw_inputs=self.mocks.decoded.inputs,
                    dependencies=tuple(request.dependencies),
                    property_dependencies={
                        key: tuple(urns.urns) for key, urns in request.propertyDependencies.items()
                    },
                    provider=request.provider or None,
                    replace_on_changes=tuple(request.replaceOnChanges),
                    custom_timeouts=_custom_timeouts(request),
                )
            )
        return response

    def GetDeploymentInfo(self, request: Any) -> Any:
        info = super().GetDeploymentInfo(request)  # type: ignore[no-untyped-call]
        features = [
            f
            for f in info.supportedFeatures
            if f != resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_REFERENCES
        ]
        return resource_pb2.DeploymentInfo(supportedFeatures=features)


_PLAIN = (str, int, float, bool, type(None))


async def _resolved(value: Any) -> Any:
    """`value` with every Output in it awaited, deeply, as `pulumi.Output.all` resolves it, but
    without an Output and a task per dict entry and list item: a stack of 1000 endpoints
    exports thousands of them."""
    if isinstance(value, pulumi.Output):
        return await _resolved(await value.future())
    if isinstance(value, dict):
        return {key: await _resolved(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        items = [await _resolved(item) for item in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, _PLAIN):
        return value
    return await pulumi.Output.from_input(value).future()  # input types, awaitables


async def _collect(exported: dict[str, Any], into: dict[str, Any]) -> None:
    into.update({name: await _resolved(value) for name, value in exported.items()})


def program_file(path: Path) -> Callable[[], None]:
    """A program that executes a Pulumi `__main__.py` the way the Python language host does."""

    def program() -> None:
        runpy.run_path(str(path), run_name="__main__")

    return program


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """CPython's cyclic garbage collector off for the run. The run allocates millions of
    short-lived objects (Outputs, futures, protobuf messages) while its live heap grows with
    every endpoint, and each full collection scans all of it again: with 1000 endpoints that
    was a third of the plan's time. The cycles the run leaves (about 30 MB per 1000 endpoints)
    are freed by the first collection after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextlib.contextmanager
def _no_source_positions() -> Iterator[None]:
    """Registrations without the caller's stack trace. Pulumi attaches one to each resource for
    the engine's diagnostics; the recording monitor has no use for it, and walking the stack
    (`traceback.extract_stack`, which reads every frame's source line) was a quarter of a run.
    The SDK's own answer for a stack it cannot place is an empty trace, so that is the stand-in.
    """
    capture = pulumi_resource._get_stack_trace
    pulumi_resource._get_stack_trace = source_pb2.StackTrace
    try:
        yield
    finally:
        pulumi_resource._get_stack_trace = capture


def run(
    program: Callable[[], None],
    *,
    config: Mapping[str, str],
    secret_keys: list[str] | None = None,
    project: str = "hp",
    stack: str = "dev",
    preflight: bool = False,
) -> OfflineRun:
    """Run `program` as `pulumi up` would (not a preview), and return what it registered.

    Preflight (the program's network checks) runs only when `preflight` is true. Exceptions
    from the program (a `pulumi.RunError` for bad config) propagate unchanged.
    """
    from mlcc.preflight.run import PROGRAM

    PROGRAM.enabled, PROGRAM.outcome, PROGRAM.costing = preflight, None, None
    mocks = RecordingMocks()
    pulumi.runtime.set_all_config(dict(config), secret_keys or [])
    pulumi.runtime.set_mocks(
        mocks, project=project, stack=stack, preview=False, monitor=RecordingMonitor(mocks)
    )
    outputs: dict[str, Any] = {}

    @pulumi.runtime.test  # type: ignore[untyped-decorator]
    def execute() -> Awaitable[None]:
        program()
        root = pulumi.runtime.get_root_resource()
        exported = dict(getattr(root, "outputs", {}))
        return _collect(exported, outputs)

    try:
        with _collector_paused(), _no_source_positions():
            execute()
    finally:
        PROGRAM.enabled = True
    return OfflineRun(list(mocks.registrations), outputs)
