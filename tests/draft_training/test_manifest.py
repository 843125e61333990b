"""The job as data: the HyperPodPyTorchJob against the schema derived from AWS's model, the plain
Job, and the script's steps in the order speculators 0.9.0 needs them."""

from __future__ import annotations

import copy
import http.server
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from bench_fake_engine import LoopbackServer
from training_stacks import IMAGE, OUTPUT, training_config

from mlcc.config.aws.instances import GPU_COUNTS
from mlcc.engine_contract.names import release_table
from mlcc.facts import speculators_train
from mlcc.manifest import training_job, training_script
from mlcc.manifest.training_job import JobTarget, job_schema, render, schema_problems

REPO = Path(__file__).resolve().parents[2]
TARGET = JobTarget("inference", IMAGE, "hp-dev-hf-token")
OPTIONS = speculators_train.RELEASES["0.9.0"].options
VARIANTS = [
    {},
    {"hiddenStates": "online"},
    {"operator": "job"},
    {"trainerArgs": {"lr": 5e-4, "target-layer-ids": [2, 16, 29], "save-best": True}},
]


def container(document: dict[str, Any]) -> dict[str, Any]:
    spec = document["spec"]
    template = spec["replicaSpecs"][0]["template"] if "replicaSpecs" in spec else spec["template"]
    (found,) = template["spec"]["containers"]
    return dict(found)


def script_of(**changes: Any) -> str:
    return container(render(training_config(**changes), TARGET))["command"][2]


def test_the_schema_is_derived_from_sagemaker_hyperpod_with_its_source() -> None:
    found = job_schema()
    source = found["SOURCE"]
    assert (source["package"], source["version"]) == ("sagemaker-hyperpod", "3.12.0")
    assert source["class"] == "_HyperPodPytorchJob" and len(source["wheel_sha256"]) == 64
    assert (found["group"], found["version"], found["kind"], found["plural"]) == (
        "sagemaker.amazonaws.com",
        "v1",
        "HyperPodPyTorchJob",
        "hyperpodpytorchjobs",
    )
    jsonschema.Draft202012Validator.check_schema(found["schema"])


@pytest.mark.parametrize("changes", VARIANTS[:2] + VARIANTS[3:])
def test_the_hyperpod_job_conforms_to_the_derived_schema(changes: dict[str, Any]) -> None:
    document = render(training_config(**changes), TARGET)
    assert document["apiVersion"] == "sagemaker.amazonaws.com/v1"
    assert document["kind"] == "HyperPodPyTorchJob"
    assert schema_problems(document) == []


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (("spec", "replicaSpecs", 0, "replicas"), "one", "spec/replicaSpecs/0/replicas"),
        (("spec", "runPolicy", "restartEvery"), 3, "spec/runPolicy"),
        (("spec", "nprocPerNode"), 1, "spec/nprocPerNode"),
        (
            ("spec", "replicaSpecs", 0, "template", "spec", "containers", 0, "gpus"),
            4,
            "containers/0",
        ),
    ],
)
def test_the_schema_catches_what_the_operator_would_refuse_or_drop(
    path: tuple[Any, ...], value: object, where: str
) -> None:
    document = copy.deepcopy(render(training_config(), TARGET))
    node: Any = document
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    found = schema_problems(document)
    assert found and any(where in problem for problem in found)


def test_the_pod_holds_every_gpu_of_one_node_of_the_group_type() -> None:
    config = training_config()
    document = render(config, TARGET)
    pod = document["spec"]["replicaSpecs"][0]["template"]["spec"]
    assert document["spec"]["replicaSpecs"][0]["replicas"] == 1
    assert pod["nodeSelector"] == {"node.kubernetes.io/instance-type": "ml.g5.12xlarge"}
    resources = container(document)["resources"]
    gpus = str(GPU_COUNTS["ml.g5.12xlarge"])
    assert resources == {"requests": {"nvidia.com/gpu": gpus}, "limits": {"nvidia.com/gpu": gpus}}
    assert container(document)["image"] == IMAGE
    assert document["metadata"]["namespace"] == "inference"


def test_the_token_comes_from_the_stack_secret_and_never_from_the_manifest() -> None:
    env = container(render(training_config(), TARGET))["env"]
    (token,) = [e for e in env if e["name"] == "HF_TOKEN"]
    assert token == {
        "name": "HF_TOKEN",
        "valueFrom": {"secretKeyRef": {"name": "hp-dev-hf-token", "key": "token"}},
    }
    no_token = container(render(training_config(), JobTarget("inference", IMAGE, None)))["env"]
    assert "HF_TOKEN" not in {e["name"] for e in no_token}


def test_the_plain_job_runs_the_same_pod_and_its_pod_conforms_to_the_model() -> None:
    config = training_config(operator="job")
    document = render(config, TARGET)
    assert (document["apiVersion"], document["kind"]) == ("batch/v1", "Job")
    assert document["spec"]["backoffLimit"] == training_job.RETRIES
    pod = document["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    # The pod spec itself against the same model's pod spec definition.
    schema = {**job_schema()["schema"], "$ref": "#/$defs/Spec"}
    schema.pop("properties"), schema.pop("required"), schema.pop("additionalProperties")
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(pod)) == []
    hyperpod = render(training_config(), TARGET)
    assert container(document)["resources"] == container(hyperpod)["resources"]
    # Only the launcher differs: torchrun without the training operator, hyperpodrun under it.
    assert "torch.distributed.run" in container(document)["command"][2]
    assert "hyperpodrun" in container(hyperpod)["command"][2]
    assert training_script.ELASTIC_AGENT in container(hyperpod)["command"][2]


@pytest.mark.parametrize("changes", VARIANTS)
def test_the_script_passes_shellcheck(changes: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "train.sh"
    path.write_text(script_of(**changes))
    shellcheck = shutil.which("shellcheck", path=str(Path(sys.executable).parent)) or "shellcheck"
    result = subprocess.run(
        [shellcheck, "--shell=bash", "--severity=style", str(path)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout


def _first(script: str, *needles: str) -> list[int]:
    return [script.index(needle) for needle in needles]


def test_the_steps_run_in_order_offline() -> None:
    script = script_of()
    order = _first(
        script,
        "speculators==0.9.0",
        "s3 cp s3://traffic-bucket/datasets/run1/train.jsonl",
        "snapshot_download",
        f"s3 sync --no-follow-symlinks {OUTPUT}checkpoints/ /train/checkpoints",  # resume
        "vllm.entrypoints.cli.main serve",
        "speculators prepare-data",
        "speculators generate-offline-data",
        'kill "$SERVER"',
        "speculators.train",
        f"s3 sync --no-follow-symlinks /train/checkpoints {OUTPUT}checkpoints/\n",
    )
    assert order == sorted(order)
    for number in range(1, len(training_script.STEPS) + 1):
        assert training_script.step_line(number) in script


def test_only_complete_epoch_folders_are_synced_and_restored(tmp_path: Path) -> None:
    """A folder mid-save (no optimizer_state_dict.pt or training_state.json yet) is not uploaded
    while training runs, and one that reached S3 anyway is dropped on restore; a failed
    torchrun still uploads what was saved completely (the EXIT trap)."""
    text = script_of()
    assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0
    lines = text.splitlines()
    start = lines.index("sync_complete() {")
    function = "\n".join(lines[start : lines.index("}", start) + 1])
    restore = next(line for line in lines if line.startswith("for dir in /train/checkpoints/"))
    trap = lines.index("trap 'kill \"$SYNC\" 2>/dev/null || true; sync_complete || true' EXIT")
    train = next(i for i, line in enumerate(lines) if "speculators.train" in line)
    assert trap < train < lines.index("trap - EXIT")
    root = tmp_path / "checkpoints"
    for epoch, files in {"0": training_script.COMPLETE_FILES, "1": ("optimizer_state_dict.pt",),
                         "2": ("model.safetensors",)}.items():  # fmt: skip
        (root / epoch).mkdir(parents=True)
        for name in files:
            (root / epoch / name).write_text("x")
    (root / "epoch0_end").symlink_to("0")
    aws = tmp_path / "aws"
    aws.write_text(f"#!/bin/bash\nprintf '%s\\n' \"$@\" > {tmp_path}/argv\n")
    aws.chmod(0o755)
    body = "\n".join([function, "sync_complete", restore])
    body = body.replace("/train/venv/bin/aws", str(aws)).replace("/train/checkpoints", str(root))
    result = subprocess.run(["bash", "-c", "set -euo pipefail\n" + body], capture_output=True)
    assert result.returncode == 0, result.stderr
    argv = (tmp_path / "argv").read_text().split("\n")
    excluded = {argv[i + 1] for i, word in enumerate(argv) if word == "--exclude"}
    assert excluded == {"1/*", "2/*"} and str(root) in argv
    assert sorted(p.name for p in root.iterdir()) == ["0", "epoch0_end"]


def test_online_training_asks_the_server_and_splits_the_gpus() -> None:
    script = script_of(hiddenStates="online")
    assert "generate-offline-data" not in script
    assert "CUDA_VISIBLE_DEVICES=0 python3 -m vllm" in script
    assert "CUDA_VISIBLE_DEVICES=1,2,3 " in script and "--nproc-per-node=3" in script
    assert "--on-missing generate --vllm-endpoint http://127.0.0.1:8000/v1" in script


def test_the_server_is_started_with_the_release_flags_and_the_file_connector() -> None:
    config = training_config(trainerArgs={"target-layer-ids": [2, 16, 29]})
    script = script_of(trainerArgs={"target-layer-ids": [2, 16, 29]})
    serve = next(line for line in script.splitlines() if "vllm.entrypoints.cli.main serve" in line)
    flags = {w[2:] for w in shlex.split(serve.split("&")[0]) if w.startswith("--")}
    assert flags <= set(release_table("vllm", config.engine_version).long_options)
    words = shlex.split(serve.split("&")[0])
    kv = json.loads(words[words.index("--kv-transfer-config") + 1])
    assert kv["kv_connector"] == "ExampleHiddenStatesConnector" and kv["kv_role"] == "kv_producer"
    assert "'2 16 29'" in script  # the layer ids the trainer gets too, the last layer appended


def test_the_speculative_config_is_launch_vllm_s(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"num_hidden_layers": 32}))
    program = training_script._SPECULATIVE_CONFIG
    run = [sys.executable, "-c", program, str(tmp_path)]
    default = json.loads(
        subprocess.run([*run, ""], capture_output=True, text=True, check=True).stdout
    )
    given = json.loads(
        subprocess.run([*run, "2 16"], capture_output=True, text=True, check=True).stdout
    )
    assert default["method"] == "extract_hidden_states" and default["num_speculative_tokens"] == 1
    assert default["draft_model_config"]["hf_config"]["eagle_aux_hidden_state_layer_ids"] == [
        2,
        16,
        29,
        32,
    ]
    assert given["draft_model_config"]["hf_config"]["eagle_aux_hidden_state_layer_ids"] == [
        2,
        16,
        32,
    ]


def test_every_train_flag_is_a_full_name_of_the_release() -> None:
    config = training_config(hiddenStates="online", trainerArgs={"lr": 1e-4, "fc-norm": True})
    flags = [w for w in training_script.train_argv(config) if w.startswith("--")]
    assert {f.removeprefix("--") for f in flags} <= set(OPTIONS)
    assert "--no-resume-from-checkpoint" not in flags  # the release resumes by itself


def test_plan_lines_name_the_group_the_steps_and_the_output() -> None:
    lines = training_job.plan_lines(training_config())
    head = "draft training hp-dev-draft (HyperPodPyTorchJob): 1 x ml.g5.12xlarge"
    assert lines[0] == f"{head} (4 GPUs, group gpu)"
    assert "generate-offline-data" in "\n".join(lines)
    assert lines[-1] == f"  checkpoints: {OUTPUT}checkpoints/"
    assert all(len(line) <= 100 for line in lines)


@pytest.mark.parametrize(("version", "flag"), [("0.34.0", True), ("0.27.1", False)])
def test_the_render_endpoint_is_switched_on_where_the_release_gates_it(
    version: str, flag: bool
) -> None:
    from training_stacks import TRAINING, parsed

    config = parsed(TRAINING, engineVersion=version).config.draft_training
    assert config is not None and config.engine_version == version
    script = container(render(config, TARGET))["command"][2]
    serve = next(line for line in script.splitlines() if "cli.main serve" in line)
    assert ("--enable-scale-out" in serve) is flag
    assert ("enable-scale-out" in release_table("vllm", version).long_options) is flag


def test_the_server_wait_ends_when_health_answers_and_fails_at_its_deadline() -> None:
    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/health" else 404)
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    class HealthServer(LoopbackServer):
        def __init__(self) -> None:
            self._serve(Health)

    program = [sys.executable, "-c", training_script._WAIT_FOR_SERVER]
    with HealthServer() as server:
        ready = subprocess.run(
            [*program, f"{server.url}/health", "30"], capture_output=True, timeout=60
        )
        assert ready.returncode == 0
        missing = subprocess.run(
            [*program, f"{server.url}/missing", "0.5"], capture_output=True, text=True, timeout=60
        )
        assert missing.returncode == 1 and "did not become healthy" in missing.stderr
