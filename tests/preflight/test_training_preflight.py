"""hp:draftTraining's fit in preflight's models part (mlcc/preflight/training_part.py): the target
from the fake Hub (the models part's own fetch), the dataset's token count from its
provenance.json on the local S3 (checked against botocore's S3 model), the node's volume from
hp:instanceGroups; a missing provenance and Kubernetes-only mode leave the disk unchecked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_hub import FakeHub
from local_aws import LocalAWS, Reply, error
from preview_run import hub_served
from training_stacks import DATASET, TRAINING, parsed

from mlcc.preflight.facts import model_facts
from mlcc.preflight.gpus import gpu_spec
from mlcc.preflight.models import models_part
from mlcc.preflight.outcome import Mode, Outcome, settle
from mlcc.preflight.training_fit import TrainingJob, estimate
from mlcc.preflight.training_part import checkpoint_count, fit_keys, trainer_fields

hub = pytest.fixture(hub_served, name="hub")
BUCKET, PREFIX = "traffic-bucket", "datasets/run1/"
GIB = 1024**3
SMALL_VOCAB = {"draft-vocab-size": 32000}
LLAMA = Path(__file__).resolve().parent / "models" / "meta-llama" / "Llama-3.1-8B-Instruct"
LLAMA_8B = model_facts(
    json.loads((LLAMA / "config.json").read_text()),
    int(json.loads((LLAMA / "model.safetensors.index.json").read_text())["metadata"]["total_size"]),
)
A10G = gpu_spec("ml.g5.12xlarge")
assert A10G is not None


def serve_provenance(fake: LocalAWS, record: dict[str, Any] | None) -> None:
    """GetObject of the dataset's provenance.json (absent when `record` is None)."""

    def get(request: dict[str, Any]) -> Reply:
        if request["Bucket"] != BUCKET:
            return error("NoSuchBucket", "The specified bucket does not exist", 404)
        if request["Key"] != f"{PREFIX}provenance.json" or record is None:
            return error("NoSuchKey", "The specified key does not exist.", 404)
        data = json.dumps(record).encode()
        first, _, last = str(request["Range"]).removeprefix("bytes=").partition("-")
        end = min(int(last), len(data) - 1)
        headers = {"Content-Range": f"bytes {first}-{end}/{len(data)}"}
        return Reply(206, data[int(first) : end + 1], headers=headers)

    fake.on("GetObject", get, service="s3")


def regenerated(train: int, validation: int = 0) -> dict[str, Any]:
    """What `mlcc draft regenerate` records (mlcc/cli/draft/regenerate.py `tokens`)."""
    return {
        "tool": {"name": "mlcc draft regenerate"},
        "tokens": {"train": train, "validation": validation, "total": train + validation},
    }


def training_outcome(training: dict[str, Any], **values: str) -> Outcome:
    return models_part(parsed(training, **values).config, 5)


def errors_and_warnings(outcome: Outcome) -> tuple[list[str], list[str]]:
    errors, warnings = settle(outcome, Mode.AUTO)
    return [str(e) for e in errors], [str(w) for w in warnings]


def test_a_job_that_fits_shows_its_line_and_reads_the_provenance_once(
    hub: FakeHub, aws: LocalAWS
) -> None:
    serve_provenance(aws, regenerated(900_000, 100_000))
    outcome = training_outcome({**TRAINING, "trainerArgs": SMALL_VOCAB})
    assert errors_and_warnings(outcome) == ([], [])
    (line,) = outcome.lines["draftTraining"]
    assert line.startswith("training fit: vLLM ")
    # 900,000 train tokens (the job reads train.jsonl only) of the 8B's hidden states
    # (4 x 4096 x 2 + 8 bytes each), its 16 GB of weights and 20 checkpoints: under 500 GiB
    assert "disk " in line and line.endswith("of 500.0 GiB")
    job = TrainingJob(
        target=LLAMA_8B,
        instance_type="ml.g5.12xlarge",
        gpu=A10G,
        gpu_count=4,
        tokens=900_000,
        disk_gib=500,
        tensor_parallel=4,
        draft_vocab_size=32000,
    )
    assert f"disk {estimate(job).disk_needed / GIB:.1f} GiB of 500.0 GiB" in line
    gets = [c for c in aws.calls if c.operation == "GetObject"]
    assert [(c.params["Bucket"], c.params["Key"]) for c in gets] == [
        (BUCKET, f"{PREFIX}provenance.json")
    ]
    # the target's config.json was fetched once, by the models part
    configs = [p for m, p, _ in hub.requests if m == "GET" and p.endswith("/config.json")]
    assert len(configs) == 1 and "Llama-3.1-8B-Instruct" in configs[0]


def test_a_disk_too_small_names_the_groups_volume(hub: FakeHub, aws: LocalAWS) -> None:
    serve_provenance(aws, regenerated(50_000_000))
    groups = [{"name": "gpu", "instanceType": "ml.g5.12xlarge", "instanceCount": 1}]
    outcome = training_outcome(
        {**TRAINING, "trainerArgs": SMALL_VOCAB}, instanceGroups=json.dumps(groups)
    )
    errors, _ = errors_and_warnings(outcome)
    (refusal,) = errors
    assert (
        refusal.startswith("hp:instanceGroups[0].ebsVolumeSizeGb: the job needs 1")
        and "(50,000,000 tokens x 32.0 KiB)" in refusal
    )
    assert refusal.endswith("tokens (hp:draftTraining.dataset)")
    assert "and the node has 500.0 GiB" in refusal


def test_a_dataset_without_provenance_leaves_the_disk_unchecked(
    hub: FakeHub, aws: LocalAWS
) -> None:
    serve_provenance(aws, None)
    outcome = training_outcome({**TRAINING, "trainerArgs": SMALL_VOCAB})
    errors, warnings = errors_and_warnings(outcome)
    assert errors == []
    assert warnings == [
        "hp:draftTraining.dataset: not checked: the training job's disk (hidden states, target "
        f"weights, checkpoints) ({DATASET}provenance.json does not exist: no provenance.json: "
        "not a folder `mlcc draft regenerate` wrote)"
    ]
    (line,) = outcome.lines["draftTraining"]  # the memory was checked
    assert line.endswith("disk not checked")
    # a provenance without a token count (not written by mlcc draft regenerate) says so
    serve_provenance(aws, {"tool": {"name": "someone else's"}})
    _, warnings = errors_and_warnings(training_outcome({**TRAINING, "trainerArgs": SMALL_VOCAB}))
    assert warnings[0].endswith(
        "provenance.json has no token count (tokens.train): it was not written by `mlcc draft "
        "regenerate`, which records it)"
    )


def test_memory_refusals_name_the_instance_group(hub: FakeHub, aws: LocalAWS) -> None:
    serve_provenance(aws, regenerated(1000))
    # the full 128,256-token vocabulary over 16,384-token sequences does not fit an A10G
    errors, _ = errors_and_warnings(training_outcome({**TRAINING, "seqLength": 16384}))
    assert [e.split(": ")[0] for e in errors] == ["hp:draftTraining.instanceGroup"]
    assert "the draft's training does not fit one GPU of ml.g5.12xlarge" in errors[0]


def test_kubernetes_only_mode_calls_no_aws(hub: FakeHub, aws: LocalAWS, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    training = {**TRAINING, "instanceType": "ml.g5.12xlarge", "trainerArgs": SMALL_VOCAB}
    del training["instanceGroup"]
    outcome = training_outcome(training, kubeconfig=str(kubeconfig))
    assert aws.calls == []
    _, warnings = errors_and_warnings(outcome)
    assert warnings == [
        "hp:instanceGroups[].ebsVolumeSizeGb: not checked: the training job's disk (hidden "
        "states, target weights, checkpoints) (the cluster is not created by this stack, so its "
        "nodes' volume size is not in it (the job writes to the ml.g5.12xlarge node's disk))"
    ]
    (line,) = outcome.lines["draftTraining"]
    assert "training" in line and line.endswith("disk not checked")


def test_checkpoints_follow_the_trainers_rule() -> None:
    # train/trainer.py maybe_save_checkpoint: epoch 0, then each epoch e with (e + 1) % N == 0
    assert checkpoint_count(20, None, False) == 20
    assert checkpoint_count(20, 5.0, False) == 1 + 4  # 0, 4, 9, 14, 19
    assert checkpoint_count(20, 0.5, False) == 20  # sub-epoch saves share the epoch's folder
    assert checkpoint_count(20, 5.0, True) == 20


def test_the_trainer_args_and_keys_the_fit_reads() -> None:
    args = {"optimizer": "adamw", "num-layers": 2, "fsdp-shard": True, "checkpoint-freq": 5.0}
    config = parsed({**TRAINING, "trainerArgs": args}).config
    training = config.draft_training
    assert training is not None
    fields = trainer_fields(training)
    assert fields == {
        "optimizer": "adamw",
        "num_layers": 2,
        "fsdp_shard": True,
        "checkpoints": 5,
    }
    keys = fit_keys(training, config.infrastructure)
    assert keys.instance_group == "hp:draftTraining.instanceGroup"
    assert keys.disk == "hp:instanceGroups[0].ebsVolumeSizeGb"


def test_numbers_given_as_text_reach_the_fit_as_the_job_reads_them() -> None:
    """trainer_args accepts `num-layers: "8"` as good as 8 (the parser converts each word): the
    fit reads the converted values, not the defaults."""
    args = {
        "num-layers": "8",
        "ttt-steps": "6",
        "checkpoint-freq": "5",
        "draft-vocab-size": "32000",
    }
    training = parsed({**TRAINING, "epochs": 20, "trainerArgs": args}).config.draft_training
    assert training is not None
    fields = trainer_fields(training)
    assert fields["num_layers"] == 8 and fields["ttt_steps"] == 6
    assert fields["draft_vocab_size"] == 32000
    assert fields["checkpoints"] == 1 + 4  # epochs 0, 4, 9, 14, 19
    listed = parsed({**TRAINING, "trainerArgs": {"target-layer-ids": ["2", "16"]}}).config
    assert listed.draft_training is not None
    assert trainer_fields(listed.draft_training)["aux_layers"] == 2


def test_plan_preflight_prints_the_fit_under_the_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`mlcc plan --preflight` of the dev stack with hp:draftTraining: the program's preflight
    reads the provenance and the fit's line is printed under the job's lines."""
    from aws_accounts import account_served, example_account
    from fake_hub import TOKEN, FakeHub, HubBehaviour
    from program_runs import IMAGE, REPO

    from mlcc.cli import main

    training = {
        "instanceGroup": "g5-inference",
        "dataset": DATASET,
        "output": "s3://heads-bucket/x/",
    }
    training["trainerArgs"] = SMALL_VOCAB
    with account_served(monkeypatch, example_account()) as fake:
        serve_provenance(fake, regenerated(2_000_000))
        with FakeHub(HubBehaviour(gated={"meta-llama/Llama-3.1-8B-Instruct"})) as served:
            monkeypatch.setenv("HF_ENDPOINT", served.url)
            monkeypatch.setenv("HF_TOKEN", TOKEN)
            monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
            monkeypatch.chdir(REPO)
            argv = ["plan", "--stack", "dev", "--out", str(tmp_path / "out"), "--preflight"]
            argv += [
                "--set",
                f"hp:image={IMAGE}",
                "--set",
                f"hp:draftTraining={json.dumps(training)}",
            ]
            assert main(argv) == 0
        assert ("s3", "GetObject") in {(c.service, c.operation) for c in fake.calls}
    lines = capsys.readouterr().out.splitlines()
    job = next(i for i, line in enumerate(lines) if line.startswith("draft training "))
    fit = next(line for line in lines[job:] if line.startswith("  preflight: training fit: "))
    assert "disk " in fit and "not checked" not in fit
