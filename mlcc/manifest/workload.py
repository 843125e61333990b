"""The InferenceEndpointConfig as data: container environment and spec (pure, no Pulumi).

The component in `mlcc/components/endpoint.py` only declares what these functions return, so
every field of the manifest is tested here without mocks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mlcc import engine_contract as contract
from mlcc.config.deploy_wait import DeployWait
from mlcc.config.endpoints import EndpointConfig
from mlcc.config.operator.features import OperatorSettings
from mlcc.config.scaling.autoscaling import Autoscaling, autoscaling_spec, metrics_env, metrics_spec
from mlcc.config.stack import StackConfig
from mlcc.facts.operator import GROUP, KIND, VERSION
from mlcc.manifest import draft_copy, operator
from mlcc.serving.engines import HEALTH_CHECK_PATHS, Engine, EngineRelease
from mlcc.serving.speculative import SpeculativeSpec, served_spec, speculative_env

API_VERSION = f"{GROUP}/{VERSION}"
CONTAINER_PORT = 8080
MODEL_VOLUME = "model-weights"
REVISION_FLAG = "revision"  # vLLM and SGLang both: --revision
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
MODEL_MOUNT_PATH = "/opt/ml/model"
HF_TOKEN_KEY = "token"
# Both engines serve the OpenAI API; the operator routes invocations to this path.
INVOCATION_PATH = "v1/chat/completions"


# pulumi-kubernetes's await (docs/deploy.md): a create or update returns once the operator has
# taken the resource up (it wrote any status.state). The wait for serving, which must fail fast
# with a reason, is the deploy wait (mlcc/deploy/).
AWAIT_ANNOTATIONS = {"pulumi.com/waitFor": "jsonpath={.status.state}"}
# The customTimeouts option (the provider prefers it to the pulumi.com/timeoutSeconds
# annotation): ten minutes for the operator to answer; a delete waits until the operator's
# finalizer is gone (its SageMaker endpoint, load balancer and pods removed), which can take
# longer than the provider's default.
AWAIT_TIMEOUTS = {"create": "10m", "update": "10m", "delete": "30m"}


@dataclass(frozen=True)
class Workload:
    """Everything the endpoint manifest depends on, apart from the image."""

    endpoint_name: str
    namespace: str
    model_id: str
    instance_type: str
    gpu_count: int
    replicas: int
    engine: Engine
    engine_args: tuple[tuple[str, str], ...] = ()
    hf_token_secret: str | None = None
    engine_releases: Mapping[Engine, EngineRelease] | None = None
    autoscaling: Autoscaling | None = None
    model_revision: str = "main"  # hp:modelRevision
    operator: OperatorSettings = field(default_factory=OperatorSettings)
    draft_service_account: str | None = None  # the program's, for the copy of an s3:// draft

    @property
    def container_port(self) -> int:
        return self.operator.container_port or CONTAINER_PORT

    @property
    def model_mount_path(self) -> str:
        return self.operator.model_volume_mount.get("mountPath", MODEL_MOUNT_PATH)

    # The operator's deadline, the same as `pulumi up`'s wait (hp:deployTimeoutMinutes).
    max_deploy_seconds: int = DeployWait().timeout_seconds

    @property
    def engine_version(self) -> str:
        release = (self.engine_releases or {}).get(self.engine)
        return release.version if release else contract.PINNED_VERSIONS[self.engine]


def from_endpoint(config: StackConfig, endpoint: EndpointConfig) -> Workload:
    return Workload(
        endpoint_name=endpoint.name,
        namespace=config.namespace,
        model_id=endpoint.model,
        instance_type=endpoint.instance_type,
        gpu_count=endpoint.gpu_count,
        replicas=_initial_replicas(endpoint),
        engine=endpoint.engine,
        engine_args=endpoint.engine_args,
        hf_token_secret=config.hf_token_secret_name if config.hf_token else None,
        engine_releases={endpoint.engine: endpoint.engine_release},
        autoscaling=endpoint.autoscaling,
        operator=endpoint.operator,
        max_deploy_seconds=config.deploy_wait.timeout_seconds,
        model_revision=endpoint.model_revision,
        draft_service_account=draft_copy.service_account(config, endpoint),
    )


def _initial_replicas(endpoint: EndpointConfig) -> int:
    """hp:replicas, or where autoscaling starts when hp:replicas is outside its range."""
    scaling = endpoint.autoscaling
    if scaling is None or scaling.min_replicas <= endpoint.replicas <= scaling.max_replicas:
        return endpoint.replicas
    return max(scaling.min_replicas, 1)


def flag_env_name(engine: Engine, flag: str) -> str:
    return contract.env_variable(engine, flag)


def engine_settings_env(workload: Workload) -> dict[str, str]:
    """The selected engine's own settings in the SM_<ENGINE>_* convention."""
    engine = workload.engine
    # With hp:prefetch the operator's init container has put the target on the model volume.
    model = workload.model_mount_path if workload.operator.prefetch else workload.model_id
    flags = {
        contract.MODEL_FLAGS[engine]: model,
        contract.SERVED_NAME_FLAG: workload.model_id,
        contract.TENSOR_PARALLEL_FLAGS[engine]: str(workload.gpu_count),
    }
    if workload.operator.container_port is not None:
        flags["port"] = str(workload.container_port)
    if workload.model_revision != "main":
        flags[REVISION_FLAG] = workload.model_revision
    env = {flag_env_name(engine, flag): value for flag, value in flags.items()}
    env |= metrics_env(engine.value)
    return env | {flag_env_name(engine, flag): value for flag, value in workload.engine_args}


def environment(workload: Workload, spec: SpeculativeSpec | None) -> list[dict[str, object]]:
    """`spec.worker.environmentVariables`: speculative sets for both engines, then settings.
    An s3:// draft is given to the engine as the local path its copy lands on."""
    served = served_spec(spec, workload.model_mount_path)
    plain = {**speculative_env(served, workload.engine_releases), **engine_settings_env(workload)}
    env: list[dict[str, object]] = [{"name": k, "value": v} for k, v in plain.items()]
    if workload.hf_token_secret:
        env.append(
            {
                "name": "HF_TOKEN",
                "valueFrom": {
                    "secretKeyRef": {"name": workload.hf_token_secret, "key": HF_TOKEN_KEY}
                },
            }
        )
    return env


def model_source(workload: Workload) -> dict[str, object]:
    hugging_face: dict[str, object] = {"modelId": workload.model_id}
    if _COMMIT.match(workload.model_revision):  # the operator's download takes commits only
        hugging_face["commitSHA"] = workload.model_revision
    if workload.hf_token_secret:
        hugging_face["tokenSecretRef"] = {"name": workload.hf_token_secret, "key": HF_TOKEN_KEY}
    # No prefetch: the engine downloads the target (and the draft) itself at start-up.
    return {
        "modelSourceType": "huggingface",
        "huggingFaceModel": hugging_face,
        "prefetchEnabled": False,
    }


def endpoint_spec(
    workload: Workload, image: str, spec: SpeculativeSpec | None
) -> dict[str, object]:
    gpus = str(workload.gpu_count)
    scaling: dict[str, object] = {}
    if workload.autoscaling is not None:
        scaling["autoScalingSpec"] = autoscaling_spec(
            workload.autoscaling,
            endpoint_name=workload.endpoint_name,
            namespace=workload.namespace,
            engine=workload.engine.value,
            version=workload.engine_version,
        )
    rendered: dict[str, Any] = {
        "modelName": workload.endpoint_name,
        "endpointName": workload.endpoint_name,
        "instanceType": workload.instance_type,
        "replicas": workload.replicas,
        "maxDeployTimeInSeconds": workload.max_deploy_seconds,
        "invocationEndpoint": INVOCATION_PATH,
        "modelSourceConfig": model_source(workload),
        "loadBalancer": {"healthCheckPath": HEALTH_CHECK_PATHS[workload.engine]},
        "worker": {
            "image": image,
            "resources": {
                "limits": {"nvidia.com/gpu": gpus},
                "requests": {"nvidia.com/gpu": gpus},
            },
            "modelInvocationPort": {"containerPort": CONTAINER_PORT, "name": "http"},
            "modelVolumeMount": {"name": MODEL_VOLUME, "mountPath": MODEL_MOUNT_PATH},
            "environmentVariables": environment(workload, spec),
        },
        "metrics": metrics_spec(workload.engine.value),
        **scaling,
    }
    health = HEALTH_CHECK_PATHS[workload.engine]
    container = operator.Container(
        workload.instance_type, health, workload.container_port, workload.max_deploy_seconds
    )
    operator.apply(rendered, workload.operator, container)
    draft = spec.draft_model if spec is not None else None
    draft_copy.apply(rendered, draft, workload.draft_service_account)
    return rendered


def labels(workload: Workload) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": workload.endpoint_name,
        "app.kubernetes.io/managed-by": "pulumi",
        "hp.mlcc/engine": workload.engine.value,
        "hp.mlcc/engine-version": workload.engine_version,
    }


_PROOF_PATTERNS = {
    Engine.VLLM: "speculative_config=",
    Engine.SGLANG: "speculative_algorithm",
}


def verify_commands(workload: Workload) -> dict[str, str]:
    """The two commands that show speculation is asked for and active."""
    ns, name = workload.namespace, workload.endpoint_name
    return {
        "env": (
            f"kubectl get {KIND.lower()} {name} -n {ns} -o "
            'jsonpath=\'{range .spec.worker.environmentVariables[*]}{.name}={.value}{"\\n"}'
            "{end}' | grep SPECULATIVE"
        ),
        "log": (
            f"kubectl logs -n {ns} deployment/{name} --all-containers | "
            f"grep -E '{_PROOF_PATTERNS[workload.engine]}|accept'"
        ),
    }
