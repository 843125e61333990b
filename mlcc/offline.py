"""Run the Pulumi program offline under Pulumi's mock runtime and record what it registers.

Used by `mlcc plan` and by the component tests. No CLI, plugins or cloud are involved: each
resource registration is recorded with its type, name, parent and inputs, and answered with its
inputs plus plausible computed outputs (ARNs, ids) so that dependent resources can be built.
The monitor does not advertise resource references, which avoids the mock runtime's
cross-event-loop failures (pulumi/pulumi#6561; reference/pulumi-testing.md gotcha 2).
"""

from __future__ import annotations

import hashlib
import runpy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc
from pulumi.runtime.proto import resource_pb2

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
        return _normalise(rpc.unwrap_rpc_secret(value), reveal=True) if reveal else REDACTED
    if isinstance(value, dict):
        return {k: _normalise(v, reveal=reveal) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise(v, reveal=reveal) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def fake_arn(service: str, kind: str, name: str) -> str:
    return f"arn:aws:{service}:{REGION}:{ACCOUNT_ID}:{kind}/{name}"


def _default_outputs(args: pulumi.runtime.MockResourceArgs) -> dict[str, Any]:
    digest = hashlib.sha256(f"{args.typ}:{args.name}".encode()).hexdigest()
    service = args.typ.split(":")[1].split("/")[0] if args.typ.count(":") >= 2 else "mock"
    return {"arn": fake_arn(service, args.name, args.name), "mockDigest": f"sha256:{digest}"}


# Computed outputs that specific resource types must return for dependants to build.
OUTPUTS: dict[str, OutputFactory] = {}

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
}


class RecordingMocks(pulumi.runtime.Mocks):
    def __init__(self) -> None:
        self.parents: dict[str, str | None] = {}
        self.registrations: list[Registration] = []

    def new_resource(
        self, args: pulumi.runtime.MockResourceArgs
    ) -> tuple[str | None, dict[str, Any]]:
        outputs = {**_default_outputs(args), **args.inputs}
        extra = OUTPUTS.get(args.typ)
        if extra:
            outputs.update(extra(args))
        return f"{args.name}-id", outputs

    def call(
        self, args: pulumi.runtime.MockCallArgs
    ) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        factory = CALLS.get(args.token)
        return (factory(args) if factory else {}), None


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
                    raw_inputs=rpc.deserialize_properties(request.object),
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


def program_file(path: Path) -> Callable[[], None]:
    """A program that executes a Pulumi `__main__.py` the way the Python language host does."""

    def program() -> None:
        runpy.run_path(str(path), run_name="__main__")

    return program


def run(
    program: Callable[[], None],
    *,
    config: Mapping[str, str],
    secret_keys: list[str] | None = None,
    project: str = "hp",
    stack: str = "dev",
) -> OfflineRun:
    """Run `program` as `pulumi up` would (not a preview), and return what it registered.

    Exceptions from the program (a `pulumi.RunError` for bad config) propagate unchanged.
    """
    mocks = RecordingMocks()
    pulumi.runtime.set_all_config(dict(config), secret_keys or [])
    pulumi.runtime.set_mocks(
        mocks, project=project, stack=stack, preview=False, monitor=RecordingMonitor(mocks)
    )
    outputs: dict[str, Any] = {}

    @pulumi.runtime.test  # type: ignore[untyped-decorator]
    def execute() -> pulumi.Output[None]:
        program()
        root = pulumi.runtime.get_root_resource()
        exported = dict(getattr(root, "outputs", {}))
        return pulumi.Output.all(**exported).apply(outputs.update)

    execute()
    return OfflineRun(list(mocks.registrations), outputs)
