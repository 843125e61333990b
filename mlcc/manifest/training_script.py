"""The shell script the draft-training pod runs: the pinned speculators release's steps in order.

Pure text. Each step prints one line `mlcc-draft-training step N/TOTAL: NAME` before it starts,
so the pod's log shows where the job is (docs/draft-training.md). The steps:

1. install: a venv beside the image's Python (`--system-site-packages`, so the image's vLLM and
   torch are seen) with the pinned speculators release and the AWS CLI;
2. fetch: train.jsonl from hp:draftTraining.dataset, the target's snapshot at hp:modelRevision
   (huggingface_hub, the image's; HF_TOKEN from the stack's Secret), and the checkpoints an
   earlier run of the job left under the output prefix (resume);
3. serve: a vLLM server of the target with hidden-state extraction, as speculators'
   scripts/launch_vllm.py starts it (speculative method `extract_hidden_states` with the
   auxiliary layer ids, and the file backend's `ExampleHiddenStatesConnector`, hs-connectors
   0.9.0 transfer.py FileBackend.build_kv_transfer_config);
4. prepare: `speculators prepare-data`, rendering the conversations through that server
   (`--render-endpoint`, required for natural-language conversations);
5. hidden states: offline, `speculators generate-offline-data` against the server, then the
   server stops and training gets every GPU; online, the server keeps GPU 0 and training asks it
   for hidden states on demand (`--on-missing generate`);
6. train: `speculators train` (torchrun, one process per training GPU), its checkpoints synced to
   the output prefix every SYNC_SECONDS while it runs (complete epoch folders only, and once more
   on a failed exit: COMPLETE_FILES); the release resumes by itself from the
   newest epoch folder under --save-path (TrainerArgs.no_resume_from_checkpoint is False by
   default; speculators/train/checkpointer.py `_get_previous_epoch`);
7. upload: the checkpoint folder to `<output>checkpoints/` (speculators writes local paths).
"""

from __future__ import annotations

import json
import shlex

from mlcc.config.draft_training import DraftTrainingConfig, HiddenStates, JobOperator
from mlcc.engine_contract.names import release_table

WORK = "/train"
VENV = f"{WORK}/venv"
MODEL_DIR = f"{WORK}/model"
DATA_DIR = f"{WORK}/data"
PREPARED_DIR = f"{WORK}/prepared"
HIDDEN_DIR = f"{WORK}/hidden_states"
SHARED_DIR = f"{WORK}/vllm_hidden_states"  # where the connector writes; moved from there
CHECKPOINTS_DIR = f"{WORK}/checkpoints"
VLLM_PORT = 8000
SYNC_SECONDS = 600
SERVER_WAIT_SECONDS = 3600
# The HyperPod training operator talks to its elastic agent in the pod: a HyperPodPyTorchJob's
# training is launched with the agent's `hyperpodrun` (torchrun's arguments and more;
# hyperpod-elastic-agent 1.1.3 README.md and pyproject.toml [project.scripts]).
ELASTIC_AGENT = "hyperpod-elastic-agent==1.1.3"
# An epoch folder is complete once both are written: speculators 0.9.0 Trainer.maybe_save_checkpoint
# (speculators/train/trainer.py) writes the model and optimizer_state_dict.pt (checkpointer.py
# save_checkpoint, optimizer_path), then the scheduler, then training_state.json
# (_training_state_path) last. The sync while training and the one on a failed exit upload only
# complete folders; a restore drops incomplete ones, so a resume never starts from half a save.
COMPLETE_FILES = ("optimizer_state_dict.pt", "training_state.json")
STEP_PREFIX = "mlcc-draft-training step"
STEPS = (
    "install speculators",
    "fetch dataset, target and earlier checkpoints",
    "start vLLM with hidden-state extraction",
    "speculators prepare-data",
    "hidden states",
    "speculators train",
    "upload checkpoints",
)
# prepare-data renders conversations through /v1/chat/completions/render
# (speculators/data_generation/render_client.py). vLLM 0.34.0 serves it only with this flag
# (vllm/entrypoints/scale_out/factories.py register_scale_out_api_routers: 403 otherwise); a
# release without the flag (0.27.1) is assumed to serve it as it is.
RENDER_FLAG = "enable-scale-out"
# The file backend's kv_transfer_config (hs-connectors 0.9.0, transfer.py).
KV_TRANSFER = {
    "kv_connector": "ExampleHiddenStatesConnector",
    "kv_role": "kv_producer",
    "kv_connector_extra_config": {"shared_storage_path": SHARED_DIR},
}
# scripts/launch_vllm.py's layer ids: the given ones plus the last layer, else
# [2, n // 2, n - 3, n]; read from the snapshot's config.json (text_config when nested).
_SPECULATIVE_CONFIG = """\
import json, sys
config = json.load(open(sys.argv[1] + "/config.json"))
config = config.get("text_config", config)
n = config["num_hidden_layers"]
given = [int(word) for word in sys.argv[2].split()]
ids = given + ([n] if n not in given else []) if given else [2, n // 2, n - 3, n]
print(json.dumps({"method": "extract_hidden_states", "num_speculative_tokens": 1,
                  "draft_model_config": {"hf_config": {"eagle_aux_hidden_state_layer_ids": ids}}}))
"""
_WAIT_FOR_SERVER = """\
import sys, time, urllib.request
deadline = time.monotonic() + float(sys.argv[2])
while time.monotonic() < deadline:
    try:
        with urllib.request.urlopen(sys.argv[1], timeout=5) as answer:
            if answer.status == 200:
                sys.exit(0)
    except OSError:
        pass
    time.sleep(5)
sys.exit("vLLM did not become healthy in time")
"""


def step_line(number: int) -> str:
    return f"{STEP_PREFIX} {number}/{len(STEPS)}: {STEPS[number - 1]}"


def layer_ids(config: DraftTrainingConfig) -> list[int]:
    """The auxiliary layer ids given in trainerArgs (empty: launch_vllm.py's defaults)."""
    for arg in config.trainer_args:
        if arg.name == "target-layer-ids":
            return [int(v) for v in arg.value]
    return []


def train_argv(config: DraftTrainingConfig) -> list[str]:
    """`speculators train`'s arguments: the job's own, then hp:draftTraining.trainerArgs."""
    argv = [
        "--speculator-type",
        "eagle3",
        "--verifier-name-or-path",
        MODEL_DIR,
        "--data-path",
        PREPARED_DIR,
        "--save-path",
        CHECKPOINTS_DIR,
        "--epochs",
        str(config.epochs),
        "--total-seq-len",
        str(config.seq_length),
        "--hidden-states-backend",
        "file",
        "--hidden-states-path",
        HIDDEN_DIR,
    ]
    if config.hidden_states is HiddenStates.ONLINE:
        argv += ["--on-missing", "generate", "--vllm-endpoint", _endpoint() + "/v1"]
    else:
        argv += ["--on-missing", "raise"]
    return argv + config.trainer_argv()


def training_gpus(config: DraftTrainingConfig) -> int:
    """Online keeps GPU 0 for the vLLM server."""
    return config.gpus - 1 if config.hidden_states is HiddenStates.ONLINE else config.gpus


def packages(config: DraftTrainingConfig) -> list[str]:
    """What step 1 installs: the pinned speculators, the AWS CLI, and for a
    HyperPodPyTorchJob the training operator's elastic agent."""
    found = [f"speculators=={config.speculators_version}", "awscli"]
    return found + ([ELASTIC_AGENT] if config.operator is JobOperator.HYPERPOD else [])


def launcher(config: DraftTrainingConfig) -> list[str]:
    """hyperpodrun under the training operator, torchrun (torch.distributed.run) otherwise."""
    if config.operator is JobOperator.HYPERPOD:
        return [f"{VENV}/bin/hyperpodrun", "--nnodes=1"]
    return [f"{VENV}/bin/python", "-m", "torch.distributed.run", "--standalone"]


def _endpoint() -> str:
    return f"http://127.0.0.1:{VLLM_PORT}"


def _complete(folder: str) -> str:
    """The shell test that `folder` (ending in /) holds every COMPLETE_FILES file."""
    return "{ " + " && ".join(f'[ -f "{folder}{name}" ]' for name in COMPLETE_FILES) + "; }"


def script(config: DraftTrainingConfig) -> str:
    q = shlex.quote
    aws = f"{VENV}/bin/aws"
    output = config.output + "checkpoints/"
    online = config.hidden_states is HiddenStates.ONLINE
    server_gpus = 1 if online else config.gpus
    train_devices = ",".join(
        str(i) for i in range(config.gpus - training_gpus(config), config.gpus)
    )
    serve = [
        "python3", "-m", "vllm.entrypoints.cli.main", "serve", MODEL_DIR,
        "--port", str(VLLM_PORT), "--host", "127.0.0.1",
        "--tensor-parallel-size", str(server_gpus),
        "--max-model-len", str(config.seq_length),
        "--kv-transfer-config", json.dumps(KV_TRANSFER, separators=(",", ":")),
    ]  # fmt: skip
    if RENDER_FLAG in release_table("vllm", config.engine_version).long_options:
        serve.append(f"--{RENDER_FLAG}")
    torchrun = [
        *launcher(config), f"--nproc-per-node={training_gpus(config)}", "-m",
        "speculators.train", *train_argv(config),
    ]  # fmt: skip
    lines = [
        "set -euo pipefail",
        f"mkdir -p {DATA_DIR} {HIDDEN_DIR} {SHARED_DIR} {CHECKPOINTS_DIR}",
        f"echo {q(step_line(1))}",
        f"python3 -m venv --system-site-packages {VENV}",
        f"{VENV}/bin/pip install --no-cache-dir --disable-pip-version-check "
        f"{shlex.join(packages(config))}",
        f"echo {q(step_line(2))}",
        f"{aws} s3 cp {q(config.dataset + 'train.jsonl')} {DATA_DIR}/train.jsonl",
        "python3 -c "
        + q(
            "import sys; from huggingface_hub import snapshot_download; "
            "snapshot_download(repo_id=sys.argv[1], revision=sys.argv[2], local_dir=sys.argv[3])"
        )
        + f" {q(config.target_model)} {q(config.target_revision)} {MODEL_DIR}",
        f"{aws} s3 sync --no-follow-symlinks {q(output)} {CHECKPOINTS_DIR}",
        f'for dir in {CHECKPOINTS_DIR}/*/; do if [ -d "$dir" ] && [ ! -L "${{dir%/}}" ] && '
        f"! {_complete('${dir}')}; "
        'then rm -rf "$dir"; fi; done',
        f"echo {q(step_line(3))}",
        f"SPECULATIVE=$(python3 -c {q(_SPECULATIVE_CONFIG)} {MODEL_DIR} "
        f"{q(' '.join(map(str, layer_ids(config))))})",
        f"CUDA_VISIBLE_DEVICES={','.join(map(str, range(server_gpus)))} "
        f'{shlex.join(serve)} --speculative-config "$SPECULATIVE" &',
        "SERVER=$!",
        f"python3 -c {q(_WAIT_FOR_SERVER)} {_endpoint()}/health {SERVER_WAIT_SECONDS}",
        f"echo {q(step_line(4))}",
        f"{VENV}/bin/speculators prepare-data --model {MODEL_DIR} --data {DATA_DIR}/train.jsonl "
        f"--output {PREPARED_DIR} --seq-length {config.seq_length} "
        f"--render-endpoint {_endpoint()}",
        f"echo {q(step_line(5))}",
    ]
    if not online:
        lines += [
            f"{VENV}/bin/speculators generate-offline-data --endpoint {_endpoint()}/v1 "
            f"--preprocessed-data {PREPARED_DIR} --output {HIDDEN_DIR}",
            'kill "$SERVER"; wait "$SERVER" || true',
        ]
    lines += [
        f"echo {q(step_line(6))}",
        "sync_complete() {",
        "  local skip=() dir",
        f"  for dir in {CHECKPOINTS_DIR}/*/; do",
        f'    if [ -d "$dir" ] && [ ! -L "${{dir%/}}" ] && ! {_complete("${dir}")}; then',
        '      dir=${dir%/}; skip+=(--exclude "${dir##*/}/*")',
        "    fi",
        "  done",
        f'  {aws} s3 sync --no-follow-symlinks ${{skip[@]+"${{skip[@]}}"}} '
        f"{CHECKPOINTS_DIR} {q(output)}",
        "}",
        f"(while sleep {SYNC_SECONDS}; do sync_complete || true; done) &",
        "SYNC=$!",
        # torchrun failing ends the script (set -e): what was saved completely is uploaded first.
        "trap 'kill \"$SYNC\" 2>/dev/null || true; sync_complete || true' EXIT",
        f"CUDA_VISIBLE_DEVICES={train_devices} {shlex.join(torchrun)}",
        "trap - EXIT",
        'kill "$SYNC" || true',
        f"echo {q(step_line(7))}",
        f"{aws} s3 sync --no-follow-symlinks {CHECKPOINTS_DIR} {q(output)}",
    ]
    if online:
        lines.append('kill "$SERVER" || true')
    lines.append("echo 'mlcc-draft-training done'")
    return "\n".join(lines) + "\n"
