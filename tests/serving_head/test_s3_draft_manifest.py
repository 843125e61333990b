"""The rendered InferenceEndpointConfig of an s3:// draft: the copy's init container, the model
volume, the engine's local path; valid against the vendored CRD; the serve wrapper's dry run
takes the env as rendered."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import draft_copy_run as copy_run
from crd_schema import assert_valid_manifest
from manifest_samples import endpoint_manifest
from serve_harness import SPEC, dry_run_argv, run_serve

from mlcc.config.endpoints import EndpointConfig
from mlcc.config.operator.features import OperatorSettings
from mlcc.config.stack import parse
from mlcc.deploy.engine_log import check_engine_log
from mlcc.deploy.expectation import expectation_for
from mlcc.manifest import draft_copy
from mlcc.manifest.workload import Workload, endpoint_spec
from mlcc.serving import s3_draft
from mlcc.serving.engines import Engine
from mlcc.serving.speculative import SpeculativeSpec

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/hp-vllm@sha256:" + "a" * 64
HEAD = "s3://team-drafts/llama-8b/run-3/checkpoint-best/"
SPEC_S3 = SpeculativeSpec("eagle3", HEAD, 3, draft_revision="v9")


def endpoint_config(draft: str) -> EndpointConfig:
    values = {
        "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
        "aws:region": "us-east-1",
        "aws-native:region": "us-east-1",
        "hp:speculativeAlgorithm": "eagle3",
        "hp:speculativeModel": draft,
    }
    (endpoint,) = parse(values, stack="dev").config.endpoints
    return endpoint


def workload(**kwargs: object) -> Workload:
    defaults: dict[str, object] = {
        "endpoint_name": "hp-dev",
        "namespace": "inference",
        "model_id": "meta-llama/Llama-3.1-8B-Instruct",
        "instance_type": "ml.g5.2xlarge",
        "gpu_count": 1,
        "replicas": 1,
        "engine": Engine.VLLM,
    }
    return Workload(**{**defaults, **kwargs})  # type: ignore[arg-type]


def manifest(w: Workload, spec: SpeculativeSpec | None) -> dict[str, object]:
    return endpoint_manifest(w, IMAGE, spec)


def env_of(spec: dict[str, object]) -> dict[str, str]:
    worker = spec["worker"]
    assert isinstance(worker, dict)
    return {e["name"]: e["value"] for e in worker["environmentVariables"] if "value" in e}


def test_the_engine_gets_the_local_path_and_no_revision() -> None:
    spec = endpoint_spec(workload(), IMAGE, SPEC_S3)
    config = json.loads(env_of(spec)[SPEC])
    assert config == {
        "method": "eagle3",
        "model": "/opt/ml/model/mlcc-draft",
        "num_speculative_tokens": 3,
    }
    assert HEAD not in json.dumps(spec["worker"])


def test_the_init_container_copies_into_the_model_volume() -> None:
    spec = endpoint_spec(workload(), IMAGE, SPEC_S3)
    kubernetes = spec["kubernetes"]
    assert isinstance(kubernetes, dict)
    assert kubernetes["volumes"] == [{"name": "model-weights", "emptyDir": {}}]
    (init,) = kubernetes["initContainers"]
    assert init["name"] == s3_draft.INIT_CONTAINER
    assert init["image"] == draft_copy.AWS_CLI_IMAGE
    assert ":" in init["image"].rsplit("/", 1)[1] and not init["image"].endswith(":latest")
    assert init["volumeMounts"] == [{"name": "model-weights", "mountPath": draft_copy.COPY_MOUNT}]
    script = init["args"][0]
    assert f"aws s3 sync --only-show-errors {HEAD} /mlcc-model/mlcc-draft" in script
    assert "AWS_ACCESS_KEY_ID" not in json.dumps(init) and "secretKeyRef" not in json.dumps(init)


def test_the_manifest_is_valid_against_the_vendored_crd() -> None:
    assert_valid_manifest(manifest(workload(), SPEC_S3), "inferenceendpointconfigs.yaml")


def test_the_users_pod_customizations_are_kept() -> None:
    own_volume = {"name": "model-weights", "hostPath": {"path": "/opt/dlami/nvme/models"}}
    own_init = {"name": "warm-up", "image": "busybox:1.36", "command": ["true"]}
    settings = OperatorSettings(
        kubernetes={
            "serviceAccountName": "draft-reader",
            "volumes": [own_volume],
            "initContainers": [own_init],
        }
    )
    w = workload(operator=settings)
    spec = endpoint_spec(w, IMAGE, SPEC_S3)
    kubernetes = spec["kubernetes"]
    assert isinstance(kubernetes, dict)
    assert kubernetes["serviceAccountName"] == "draft-reader"
    assert kubernetes["volumes"] == [own_volume]
    assert [c["name"] for c in kubernetes["initContainers"]] == ["warm-up", "mlcc-draft-copy"]
    assert_valid_manifest(manifest(w, SPEC_S3), "inferenceendpointconfigs.yaml")


def test_a_moved_model_volume_moves_the_path_and_the_volume() -> None:
    settings = OperatorSettings(model_volume_mount={"name": "weights", "mountPath": "/models"})
    spec = endpoint_spec(workload(operator=settings), IMAGE, SPEC_S3)
    assert json.loads(env_of(spec)[SPEC])["model"] == "/models/mlcc-draft"
    kubernetes = spec["kubernetes"]
    assert isinstance(kubernetes, dict)
    assert kubernetes["volumes"] == [{"name": "weights", "emptyDir": {}}]


def test_a_hub_draft_renders_no_copy() -> None:
    hub = SpeculativeSpec("eagle3", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", 3)
    spec = endpoint_spec(workload(), IMAGE, hub)
    assert "kubernetes" not in spec
    assert json.loads(env_of(spec)[SPEC])["model"] == "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def test_the_serve_wrappers_dry_run_takes_the_rendered_env() -> None:
    env = env_of(endpoint_spec(workload(), IMAGE, SPEC_S3))
    argv = dry_run_argv("vllm", env)
    config = json.loads(argv[argv.index("--speculative-config") + 1])
    assert config["model"] == "/opt/ml/model/mlcc-draft"


def test_the_wrapper_still_refuses_the_uri_itself() -> None:
    env = {SPEC: json.dumps({"method": "eagle3", "model": HEAD, "num_speculative_tokens": 3})}
    result = run_serve("vllm", {"SM_VLLM_MODEL": "meta-llama/Llama-3.1-8B-Instruct", **env})
    assert result.returncode == 2
    assert "URI" in result.stderr


def test_verify_expects_the_rendered_local_path() -> None:
    endpoint = endpoint_config(HEAD)
    expected = expectation_for(endpoint).env
    assert json.loads(expected[SPEC])["model"] == "/opt/ml/model/mlcc-draft"


def test_the_copy_script_is_valid_shell() -> None:
    draft = s3_draft.parse(HEAD)
    assert draft is not None
    script = draft_copy.copy_script(draft, "/mlcc-model/mlcc-draft")
    checked = subprocess.run(["bash", "-n", "-c", script], capture_output=True, check=False)
    assert checked.returncode == 0, checked.stderr


def vllm_log(model: str) -> str:
    """vLLM's engine-core config line, as SpeculativeConfig.__repr__ writes it."""
    return (
        "INFO 12-06 17:00:00 [core.py:75] Initializing a V1 LLM engine with config: "
        f"model='meta-llama/Llama-3.1-8B-Instruct', speculative_config=SpeculativeConfig("
        f"method='eagle3', model='{model}', num_spec_tokens=3), seed=0\n"
    )


def test_verify_passes_when_vllm_loaded_the_copied_head() -> None:
    expected = expectation_for(endpoint_config(HEAD))
    assert expected.copied_draft == "/opt/ml/model/mlcc-draft"
    check = check_engine_log("engine log", vllm_log("/opt/ml/model/mlcc-draft"), expected)
    assert check.passed, check.detail


def test_verify_fails_when_vllm_loaded_another_draft() -> None:
    expected = expectation_for(endpoint_config(HEAD))
    check = check_engine_log(
        "engine log", vllm_log("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"), expected
    )
    assert not check.passed
    assert check.detail.startswith(
        "the engine loaded draft yuhuili/EAGLE3-LLaMA3.1-Instruct-8B, not the copied head at "
        "/opt/ml/model/mlcc-draft"
    )


def test_a_hub_draft_expects_no_copied_head() -> None:
    assert (
        expectation_for(endpoint_config("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")).copied_draft is None
    )


def run_copy(tmp_path: Path, with_head: bool) -> tuple[subprocess.CompletedProcess[str], Path]:
    return copy_run.run_copy(tmp_path, HEAD, with_head)


def test_the_copy_lands_the_head_and_its_marker(tmp_path: Path) -> None:
    done, target = run_copy(tmp_path, with_head=True)
    assert done.returncode == 0, done.stderr
    assert (target / "model.safetensors").stat().st_size == 64
    written = (target / s3_draft.MARKER_FILE).read_text()
    assert done.stdout == written  # the container's log: the marker, as one line
    assert len(written.splitlines()) == 1
    marker = json.loads(written)
    assert marker == {
        "uri": HEAD,
        "config": {
            "ETag": '"0123abcd"',
            "VersionId": None,
            "LastModified": "2026-12-06T12:00:00+00:00",
        },
    }
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert calls[0] == f"s3 sync --only-show-errors {HEAD} {target}"
    assert calls[1].startswith(
        "s3api head-object --bucket team-drafts --key llama-8b/run-3/checkpoint-best/config.json"
    )


def test_a_prefix_without_a_head_fails_the_init_container(tmp_path: Path) -> None:
    done, target = run_copy(tmp_path, with_head=False)
    assert done.returncode == 1
    assert done.stderr.strip() == f"mlcc-draft-copy: {HEAD} has no config.json"
    assert not (target / s3_draft.MARKER_FILE).exists()
