"""The draft-training job as data: a HyperPodPyTorchJob, or a batch/v1 Job (docs/draft-training.md).

Pure. One pod on one node of the chosen instance group (the nodes are chosen by their instance
type label, `node.kubernetes.io/instance-type`, the label the endpoints and sagemaker-hyperpod's
own job builder use: sagemaker/hyperpod/cli/constants/command_constants.py INSTANCE_TYPE_LABEL),
holding every GPU of the node; the script of mlcc/manifest/training_script.py. The HF token comes
from the stack's Kubernetes Secret (the endpoints' `<name>-hf-token`, key `token`), never from the
image. The HyperPodPyTorchJob is validated against the schema derived from AWS's model of the job
(schemas/training/hyperpodpytorchjob.json, scripts/training_job_schema.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from mlcc.config.draft_training import DraftTrainingConfig, JobOperator
from mlcc.manifest import training_script
from mlcc.manifest.operator import INSTANCE_TYPE_LABEL
from mlcc.manifest.workload import HF_TOKEN_KEY

SCHEMA_FILE = (
    Path(__file__).resolve().parents[2] / "schemas" / "training" / "hyperpodpytorchjob.json"
)
CONTAINER = "trainer"
GPU_RESOURCE = "nvidia.com/gpu"
# HyperPodPyTorchJob's runPolicy.jobMaxRetryCount and the Job's backoffLimit: restarts after a
# fault; each restart resumes from the newest checkpoint synced to S3.
RETRIES = 3
SHM_LIMIT = "64Gi"  # /dev/shm for vLLM's workers and the data loader's (a memory-backed emptyDir)
LABEL = "hp.mlcc/draft-training"
MESSAGE_CHARACTERS = 200  # a schema message quotes the value: long for a whole pod


@dataclass(frozen=True)
class JobTarget:
    namespace: str
    image: str
    hf_token_secret: str | None  # the stack's Secret, when hp:hfToken is set


@cache
def job_schema() -> dict[str, Any]:
    """The vendored file: SOURCE, group, version, kind, plural and the JSON schema."""
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text())
    return loaded


def api_version(config: DraftTrainingConfig) -> str:
    if config.operator is JobOperator.JOB:
        return "batch/v1"
    found = job_schema()
    return f"{found['group']}/{found['version']}"


def kind(config: DraftTrainingConfig) -> str:
    return "Job" if config.operator is JobOperator.JOB else str(job_schema()["kind"])


def pod_spec(config: DraftTrainingConfig, target: JobTarget, restart: str) -> dict[str, Any]:
    env: list[dict[str, Any]] = [
        {"name": "HOME", "value": training_script.WORK},
        {"name": "HF_HOME", "value": f"{training_script.WORK}/hf"},
        {"name": "PYTHONUNBUFFERED", "value": "1"},
    ]
    if target.hf_token_secret:
        env.append(
            {
                "name": "HF_TOKEN",
                "valueFrom": {
                    "secretKeyRef": {"name": target.hf_token_secret, "key": HF_TOKEN_KEY}
                },
            }
        )
    gpus = {GPU_RESOURCE: str(config.gpus)}
    return {
        "restartPolicy": restart,
        "nodeSelector": {INSTANCE_TYPE_LABEL: config.instance_type},
        "containers": [
            {
                "name": CONTAINER,
                "image": target.image,
                "command": ["bash", "-c", training_script.script(config)],
                "env": env,
                "resources": {"requests": dict(gpus), "limits": dict(gpus)},
                "volumeMounts": [
                    {"name": "work", "mountPath": training_script.WORK},
                    {"name": "shm", "mountPath": "/dev/shm"},
                ],
            }
        ],
        "volumes": [
            {"name": "work", "emptyDir": {}},
            {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": SHM_LIMIT}},
        ],
    }


def render(config: DraftTrainingConfig, target: JobTarget) -> dict[str, Any]:
    """The whole object, ready for a CustomResource (or the Job's spec)."""
    labels = {LABEL: config.name}
    metadata = {"name": config.name, "namespace": target.namespace, "labels": labels}
    if config.operator is JobOperator.JOB:
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": metadata,
            "spec": {
                "backoffLimit": RETRIES,
                "template": {
                    "metadata": {"labels": labels},
                    "spec": pod_spec(config, target, "Never"),
                },
            },
        }
    return {
        "apiVersion": api_version(config),
        "kind": kind(config),
        "metadata": metadata,
        "spec": {
            # One process in the pod: the script starts torchrun itself, after the data steps.
            "nprocPerNode": "1",
            "replicaSpecs": [
                {
                    "name": CONTAINER,
                    "replicas": 1,
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": pod_spec(config, target, "OnFailure"),
                    },
                }
            ],
            "runPolicy": {"cleanPodPolicy": "None", "jobMaxRetryCount": RETRIES},
        },
    }


def schema_problems(document: dict[str, Any]) -> list[str]:
    """Where a HyperPodPyTorchJob breaks the derived schema (empty: it conforms): for each
    error the most specific one under it (an optional field is `anyOf` its type or null)."""
    import jsonschema  # type: ignore[import-untyped]  # loaded only where it validates

    validator = jsonschema.Draft202012Validator(job_schema()["schema"])
    found = []
    for error in validator.iter_errors(document):
        leaf = jsonschema.exceptions.best_match([error])
        where = "/".join(map(str, leaf.absolute_path)) or "(root)"
        found.append(f"{where}: {leaf.message[:MESSAGE_CHARACTERS]}")
    return sorted(found)


def plan_lines(config: DraftTrainingConfig) -> list[str]:
    """What `mlcc plan` says of the job: where it runs, its steps, where the head goes."""
    group = f", group {config.instance_group}" if config.instance_group else ""
    return [
        f"draft training {config.name} ({kind(config)}): 1 x {config.instance_type} "
        f"({config.gpus} GPUs{group})",
        f"  target {config.target_model}@{config.target_revision}, speculators "
        f"{config.speculators_version}, hidden states {config.hidden_states.value}",
        *(f"  {number}. {name}" for number, name in enumerate(_steps(config), start=1)),
        f"  checkpoints: {config.output}checkpoints/",
    ]


def _steps(config: DraftTrainingConfig) -> list[str]:
    steps = list(training_script.STEPS)
    steps[4] = (
        "hidden states: speculators generate-offline-data, then the server stops"
        if config.hidden_states.value == "offline"
        else "hidden states: online, asked of the server (GPU 0) while training"
    )
    return steps
