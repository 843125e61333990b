"""The DraftTraining component under Pulumi's mocks, through the real program (__main__.py)."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pytest
from program_runs import run_main
from training_stacks import DATASET, IMAGE, OUTPUT

from mlcc.components import draft_training as component
from mlcc.manifest.training_job import schema_problems
from mlcc.plan import mocks as offline

JOB_TYPE = "kubernetes:sagemaker.amazonaws.com/v1:HyperPodPyTorchJob"
BATCH_TYPE = "kubernetes:batch/v1:Job"
COMPONENT = "hp:index:DraftTraining"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
# The dev stack's group (Pulumi.dev.yaml).
TRAINING = {"instanceGroup": "g5-inference", "dataset": DATASET, "output": OUTPUT}


def run(training: dict[str, Any] | None, stack: str = "dev", **values: str) -> offline.OfflineRun:
    overrides: dict[str, str | None] = {f"hp:{k}": v for k, v in values.items()}
    overrides["hp:image"] = IMAGE
    if training is not None:
        overrides["hp:draftTraining"] = json.dumps(training)
    return run_main(overrides, stack=stack)


@pytest.fixture(scope="module")
def created() -> offline.OfflineRun:
    return run(TRAINING)


def test_no_key_no_job() -> None:
    found = run(None)
    assert not found.of_type(COMPONENT) and not found.of_type(JOB_TYPE)


def test_the_job_is_a_child_of_its_component_in_the_namespace(created: offline.OfflineRun) -> None:
    job, parent = created.one(JOB_TYPE), created.one(COMPONENT)
    assert job.parent == parent.urn
    inputs = job.inputs
    assert inputs["metadata"]["name"] == "hp-dev-draft"
    assert inputs["metadata"]["namespace"] == "inference"
    document = {k: inputs[k] for k in ("apiVersion", "kind", "metadata", "spec")}
    assert schema_problems(document) == []  # as declared, against the derived schema
    container = inputs["spec"]["replicaSpecs"][0]["template"]["spec"]["containers"][0]
    assert container["image"] == IMAGE
    assert set(job.replace_on_changes) == {"spec"}


def test_the_job_waits_for_the_namespace_and_its_s3_rights(created: offline.OfflineRun) -> None:
    job = created.one(JOB_TYPE)
    namespace = created.one("kubernetes:core/v1:Namespace")
    (rights,) = [r for r in created.of_type(ROLE_POLICY) if r.name == "draft-training-s3"]
    assert namespace.urn in job.dependencies and rights.urn in job.dependencies


def test_create_mode_grants_the_execution_role_the_dataset_and_the_output() -> None:
    found = run(TRAINING)
    (policy,) = [r for r in found.of_type(ROLE_POLICY) if r.name == "draft-training-s3"]
    document = json.loads(policy.inputs["policy"])
    statements = document["Statement"]
    reads = [s for s in statements if s["Action"] == "s3:GetObject"]
    assert reads == [
        {
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": "arn:aws:s3:::traffic-bucket/datasets/run1/*",
        }
    ]
    (writes,) = [s for s in statements if "s3:PutObject" in s["Action"]]
    assert writes["Resource"] == "arn:aws:s3:::heads-bucket/llama-8b/run1/*"
    lists = {s["Resource"]: s["Condition"] for s in statements if s["Action"] == "s3:ListBucket"}
    assert lists["arn:aws:s3:::heads-bucket"] == {"StringLike": {"s3:prefix": ["llama-8b/run1/*"]}}
    assert policy.inputs["role"]  # the HyperPod execution role's name, from its ARN


def test_the_plain_job_variant_skips_the_provider_wait() -> None:
    found = run({**TRAINING, "operator": "job"})
    assert not found.of_type(JOB_TYPE)
    job = found.one(BATCH_TYPE)
    assert job.inputs["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}
    assert job.inputs["spec"]["template"]["spec"]["restartPolicy"] == "Never"


def test_kubernetes_only_mode_creates_nothing_in_aws() -> None:
    found = run({**TRAINING, "instanceType": "ml.g5.12xlarge", "instanceGroup": ""}, "kubernetes")
    assert found.of_type(JOB_TYPE)
    assert not [r for r in found.registrations if r.type.startswith("aws")]


def test_a_job_that_breaks_the_schema_stops_the_program(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(component, "schema_problems", lambda document: ["spec/x: not allowed"])
    with pytest.raises(pulumi.RunError):
        run(TRAINING)


def test_the_refusal_names_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    lines: list[str] = []
    monkeypatch.setattr(component, "refuse", lambda problems: lines.extend(problems))
    monkeypatch.setattr(component, "schema_problems", lambda document: ["spec/x: not allowed"])
    config = run_config()
    component.checked(config, "inference", None)
    assert lines == [
        "hp:draftTraining: the HyperPodPyTorchJob breaks its schema at spec/x: not allowed"
    ]


def run_config() -> Any:
    from training_stacks import training_config

    return training_config()


def test_an_existing_cluster_gets_a_policy_to_attach_and_its_arn_as_an_output() -> None:
    training = {**TRAINING, "instanceGroup": "", "instanceType": "ml.g5.12xlarge"}
    found = run(training, "existing", engine="vllm")
    (policy,) = found.of_type("aws:iam/policy:Policy")
    assert "attach to the execution role" in policy.inputs["description"]
    assert json.loads(policy.inputs["policy"])["Statement"]
    assert "draftTrainingPolicyArn" in found.outputs
    assert not [r for r in found.of_type(ROLE_POLICY) if r.name == "draft-training-s3"]
