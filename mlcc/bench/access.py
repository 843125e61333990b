"""How to reach a HyperPod endpoint from a workstation.

The operator runs the model as a Deployment named after the endpoint, with the engine listening
on the container port the program sets (`mlcc.workload.CONTAINER_PORT`), in the stack's
namespace. `kubectl port-forward` to that Deployment needs no knowledge of the Service and load
balancer the operator puts in front (their names are not documented), and serves both the
OpenAI API and the engine's `/metrics` on the local port.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from mlcc.workload import CONTAINER_PORT

LOCAL_PORT = 8080


@dataclass(frozen=True)
class StackEndpoint:
    namespace: str
    endpoint_name: str
    model: str
    engine: str


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


def local_url(local_port: int = LOCAL_PORT) -> str:
    return f"http://127.0.0.1:{local_port}"


def stack_endpoint(project_dir: Path, stack: str) -> StackEndpoint:
    """The endpoint a stack deploys, read offline from Pulumi.yaml and Pulumi.<stack>.yaml.
    Raises the stack modules' own errors (StackFileError, StackConfigError, ConfigError)."""
    from mlcc import config as stack_config
    from mlcc import stackfiles

    project = stackfiles.load_project(project_dir)
    values = stackfiles.resolve(project, stackfiles.load_stack(project_dir, stack), stack=stack)
    parsed = stack_config.parse(values.values, stack=stack, secret_keys=values.secret_keys)
    config = parsed.config
    return StackEndpoint(
        namespace=config.namespace,
        endpoint_name=config.endpoint_name,
        model=config.model,
        engine=str(config.engine),
    )
