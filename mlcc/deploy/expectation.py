"""What the stack config says one endpoint's engine must see and run: the `Expectation` that
`mlcc verify` (mlcc/deploy/verify.py) and the deploy wait check the cluster against.

Pure: built from the endpoint's `EndpointConfig` with the same env the endpoint component renders.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mlcc import engine_contract as contract
from mlcc.config.endpoints import EndpointConfig
from mlcc.manifest.workload import MODEL_MOUNT_PATH
from mlcc.serving.engines import Engine
from mlcc.serving.speculative import served_spec, speculative_env


@dataclass(frozen=True)
class Expectation:
    """What the stack config says the selected engine must see and run."""

    engine: Engine
    env: Mapping[str, str]
    engine_algorithm: str | None  # the vLLM method or SGLang algorithm; None = speculation off
    algorithm: str | None  # the user-facing hp:speculativeAlgorithm
    copied_draft: str | None = None  # a copied s3:// head's local path, which vLLM must log
    copied_from: str | None = None  # its s3:// URI, which the copy's marker must name

    @property
    def speculation_on(self) -> bool:
        return self.engine_algorithm is not None


def is_speculative_variable(name: str, engine: Engine) -> bool:
    """The variables of the contract that the selected engine (or a human) reads."""
    return contract.is_speculative_variable(engine, name)


def expectation_for(endpoint: EndpointConfig) -> Expectation:
    """The same env the endpoint component renders, narrowed to the endpoint's engine."""
    engine, spec = endpoint.engine, endpoint.speculative
    mount = endpoint.operator.model_volume_mount.get("mountPath", MODEL_MOUNT_PATH)
    served = served_spec(spec, mount)
    env = speculative_env(served, {engine: endpoint.engine_release})
    selected = {k: v for k, v in env.items() if is_speculative_variable(k, engine)}
    copied = served is not None and served != spec
    return Expectation(
        engine=engine,
        env=selected,
        engine_algorithm=spec.definition.engine_algorithm(engine) if spec else None,
        algorithm=spec.algorithm if spec else None,
        copied_draft=served.draft_model if copied and served else None,
        copied_from=spec.draft_model if copied and spec else None,
    )
