"""How to reach a stack's endpoints from a workstation.

The operator runs each model as a Deployment named after its endpoint, with the engine listening
on the container port the program sets (`mlcc.manifest.workload.CONTAINER_PORT`), in the stack's
namespace. `kubectl port-forward` to that Deployment needs no knowledge of the Service and load
balancer the operator puts in front (their names are not documented), and serves both the
OpenAI API and the engine's `/metrics` on the local port.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mlcc.manifest.workload import CONTAINER_PORT

if TYPE_CHECKING:
    from mlcc.config.endpoints import EndpointConfig
    from mlcc.config.stack import StackConfig

LOCAL_PORT = 8080


@dataclass(frozen=True)
class StackEndpoint:
    namespace: str
    name: str
    model: str
    engine: str
    baseline_of: str | None  # set on a baseline twin: the endpoint it mirrors


def port_forward_command(namespace: str, endpoint_name: str, local_port: int = LOCAL_PORT) -> str:
    """The command that makes the endpoint's engine answer on http://127.0.0.1:<local_port>."""
    return shlex.join(
        [
            "kubectl",
            "port-forward",
            "-n",
            namespace,
            f"deployment/{endpoint_name}",
            f"{local_port}:{CONTAINER_PORT}",
        ]
    )


def port_forward_commands(namespace: str, endpoint_names: Sequence[str]) -> dict[str, str]:
    """One command per endpoint, on local ports 8080, 8081, ... in order, so that all of them
    (an endpoint and its baseline twin) can be forwarded at once."""
    return {
        name: port_forward_command(namespace, name, LOCAL_PORT + index)
        for index, name in enumerate(endpoint_names)
    }


def local_url(local_port: int = LOCAL_PORT) -> str:
    return f"http://127.0.0.1:{local_port}"


def stack_config(project_dir: Path, stack: str) -> StackConfig:
    """A stack's config, read offline from Pulumi.yaml and Pulumi.<stack>.yaml.
    Raises the stack modules' own errors (StackFileError, StackConfigError, ConfigError)."""
    from mlcc.config import stack as stack_config
    from mlcc.stackfiles import resolve as stackfiles

    project = stackfiles.load_project(project_dir)
    values = stackfiles.resolve(project, stackfiles.load_stack(project_dir, stack), stack=stack)
    return stack_config.parse(values.values, stack=stack, secret_keys=values.secret_keys).config


def stack_endpoints(project_dir: Path, stack: str) -> list[StackEndpoint]:
    """The endpoints a stack deploys, read offline from Pulumi.yaml and Pulumi.<stack>.yaml.
    Raises the stack modules' own errors (StackFileError, StackConfigError, ConfigError)."""
    return _endpoints(stack_config(project_dir, stack))


def _endpoints(config: StackConfig) -> list[StackEndpoint]:
    return [
        StackEndpoint(config.namespace, e.name, e.model, str(e.engine), e.baseline_of)
        for e in config.endpoints
    ]


def endpoint_config(
    project_dir: Path, stack: str, name: str | None
) -> tuple[StackConfig, EndpointConfig]:
    """The stack's config and the endpoint `choose_endpoint` chooses, as configured. Raises
    ValueError saying what is wrong: the stack files, their config, or the choice."""
    from mlcc.config import stack as stack_config_module
    from mlcc.stackfiles import resolve as stackfiles

    try:
        config = stack_config(project_dir, stack)
    except (
        stackfiles.StackFileError,
        stackfiles.StackConfigError,
        stack_config_module.ConfigError,
    ) as error:
        raise ValueError(str(error)) from None
    chosen = choose_endpoint(_endpoints(config), name)
    return config, next(e for e in config.endpoints if e.name == chosen.name)


def choose_endpoint(endpoints: Sequence[StackEndpoint], name: str | None) -> StackEndpoint:
    """The endpoint named `name`, else the stack's only endpoint that is not a baseline twin.
    Raises ValueError naming the choices."""
    if name is not None:
        found = [e for e in endpoints if e.name == name]
    else:
        found = [e for e in endpoints if e.baseline_of is None]
    if len(found) == 1:
        return found[0]
    choices = ", ".join(e.name for e in endpoints)
    if name is not None:
        raise ValueError(f"the stack has no endpoint {name!r}; choose one of: {choices}")
    raise ValueError(f"the stack has several endpoints; choose one with --endpoint: {choices}")


def twin_of(endpoints: Sequence[StackEndpoint], endpoint: StackEndpoint) -> StackEndpoint | None:
    return next((e for e in endpoints if e.baseline_of == endpoint.name), None)
