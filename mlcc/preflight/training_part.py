"""hp:draftTraining's fit (mlcc/preflight/training_fit.py), checked inside the models part.

The target is the stack's first endpoint's hp:model at hp:modelRevision: the models part has
fetched its config.json already, and this module reads that same result (no second fetch).
The job's node is hp:draftTraining's instance type with all its GPUs; each GPU's memory is the
one the models part uses (the account's, measured by EC2, else the table's). vLLM's
tensor-parallel size is what the job's script gives it (mlcc/manifest/training_script.py):
every GPU of the node offline, 1 online. The trainer's arguments the fit depends on come from
hp:draftTraining.trainerArgs under their full `speculators train` names (--num-layers,
--draft-vocab-size, --optimizer, --fsdp-shard, --checkpoint-freq, --save-best, --ttt-steps,
--target-layer-ids: mlcc/facts/speculators_train.json), else the release's defaults.

The disk: the instance group's hp:instanceGroups[].ebsVolumeSizeGb (a cluster the stack does
not create has no group in the stack: not checked). The training tokens: `tokens.train` of
`<dataset>provenance.json`, which `mlcc draft regenerate` writes (the job reads train.jsonl
only; speculators splits it itself), read with preflight's AWS clients and s3_head's bounded
GetObject. A row longer than hp:draftTraining.seqLength is cut by prepare-data, so the count is
an upper bound of the hidden states' tokens; a dataset without it (not made by mlcc) leaves the disk
unchecked, and so does Kubernetes-only mode (no AWS call). The memory checks run regardless.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mlcc.config.draft_training import DraftTrainingConfig, HiddenStates
from mlcc.config.infrastructure import InfrastructureConfig, NewCluster
from mlcc.config.stack import StackConfig
from mlcc.config.trainer_args import typed_args
from mlcc.facts import speculators_train
from mlcc.preflight import s3_head
from mlcc.preflight.account import fetch as account_fetch
from mlcc.preflight.account.facts import Unreached
from mlcc.preflight.gpus import GpuSpec
from mlcc.preflight.hub import Fetched, FetchResult, Refused, Unreachable
from mlcc.preflight.outcome import Outcome, Unchecked, combine
from mlcc.preflight.training_fit import FitKeys, TrainingJob, check, disk_checked
from mlcc.serving import s3_draft
from mlcc.userfiles.reading import dig

KEY = "hp:draftTraining"
PROVENANCE = "provenance.json"
DISK_WHAT = "the training job's disk (hidden states, target weights, checkpoints)"
ClientsOf = Callable[[], "account_fetch.Clients | Unreached"]


@dataclass(frozen=True)
class Tokens:
    count: int | None  # None: unknown, for `why`
    why: str = ""


def start(
    stack: StackConfig, clients_of: ClientsOf
) -> Callable[[FetchResult, Callable[[str], GpuSpec | None], float], Outcome] | None:
    """None without hp:draftTraining; else the token read is started, and the returned call
    (the target's fetch, the GPU of an instance type, the seconds left) gives the outcome."""
    config = stack.draft_training
    if config is None:
        return None
    tokens = start_token_read(config, stack.infrastructure.calls_no_aws, clients_of)

    def finish(
        target: FetchResult, gpus: Callable[[str], GpuSpec | None], seconds: float
    ) -> Outcome:
        gpu = gpus(config.instance_type)
        return training_outcome(config, stack.infrastructure, target, gpu, tokens(seconds))

    return finish


def start_token_read(
    config: DraftTrainingConfig, no_aws: bool, clients_of: ClientsOf
) -> Callable[[float], Tokens]:
    """Reads the dataset's token count in a daemon thread; the returned call waits for it at
    most the given seconds."""
    if no_aws:
        found = Tokens(
            None,
            f"the stack makes no AWS calls (hp:kubeconfig mode), so {config.dataset}"
            f"{PROVENANCE} is not read for the dataset's token count",
        )
        return lambda _seconds: found
    answer: list[Tokens] = []
    thread = threading.Thread(
        target=lambda: answer.append(read_tokens(config.dataset, clients_of)),
        daemon=True,
        name="preflight draftTraining tokens",
    )
    thread.start()

    def wait(seconds: float) -> Tokens:
        thread.join(seconds)
        if answer:
            return answer[0]
        return Tokens(None, f"S3 did not answer within {seconds:.0f} s")

    return wait


def read_tokens(dataset: str, clients_of: ClientsOf) -> Tokens:
    """`tokens.train` of the dataset's provenance.json. Never raises."""
    clients = clients_of()
    if isinstance(clients, Unreached):
        return Tokens(None, f"{clients.source}: {clients.why}")
    folder = s3_draft.folder(dataset)
    read = s3_head.read_json(
        folder,
        PROVENANCE,
        clients,
        "no provenance.json: not a folder `mlcc draft regenerate` wrote",
    )
    if isinstance(read, Refused):
        return Tokens(None, read.message)
    if isinstance(read, Unreachable):
        return Tokens(None, read.why)
    train = dig(read.value, "tokens", "train")
    if isinstance(train, bool) or not isinstance(train, int) or train < 0:
        return Tokens(
            None,
            f"{folder.uri}{PROVENANCE} has no token count (tokens.train): it was not written "
            "by `mlcc draft regenerate`, which records it",
        )
    return Tokens(train)


def training_outcome(
    config: DraftTrainingConfig,
    infra: InfrastructureConfig,
    target: FetchResult,
    gpu: GpuSpec | None,
    tokens: Tokens,
) -> Outcome:
    """The fit of the job, its headline line under "draftTraining", and what was not checked."""
    keys = fit_keys(config, infra)
    if isinstance(target, Refused):
        return Outcome()  # the models part refuses hp:model already
    if not isinstance(target, Fetched):
        why = f"the target's config.json was not read: {target.why}"
        return Outcome(unchecked=(Unchecked(KEY, "the training job's fit", why),))
    if gpu is None:
        why = f"{config.instance_type} is not in the GPU table"
        return Outcome(unchecked=(Unchecked(keys.instance_group, "the training job's fit", why),))
    disk_gib, disk_why = _disk(config, infra)
    online = config.hidden_states is HiddenStates.ONLINE
    job = TrainingJob(
        target=target.facts,
        instance_type=config.instance_type,
        gpu=gpu,
        gpu_count=config.gpus,
        tokens=tokens.count,
        disk_gib=disk_gib,
        tensor_parallel=1 if online else config.gpus,
        mode="online" if online else "offline",
        total_seq_len=config.seq_length,
        epochs=config.epochs,
        keys=keys,
        **trainer_fields(config),
    )
    unchecked: list[Unchecked] = []
    if not disk_checked(job):
        why = disk_why or tokens.why
        where = keys.disk if disk_why else keys.tokens
        unchecked.append(Unchecked(where, DISK_WHAT, why))
    return combine([check(job), Outcome(unchecked=tuple(unchecked))])


def fit_keys(config: DraftTrainingConfig, infra: InfrastructureConfig) -> FitKeys:
    placement = "instanceGroup" if config.instance_group else "instanceType"
    disk = "hp:instanceGroups[].ebsVolumeSizeGb"
    cluster = infra.cluster
    if isinstance(cluster, NewCluster):
        names = [g.name for g in cluster.instance_groups]
        if config.instance_group in names:
            disk = f"hp:instanceGroups[{names.index(config.instance_group)}].ebsVolumeSizeGb"
    return FitKeys(instance_group=f"{KEY}.{placement}", disk=disk, tokens=f"{KEY}.dataset")


def _disk(config: DraftTrainingConfig, infra: InfrastructureConfig) -> tuple[float | None, str]:
    """(the node's volume in GiB, or None and why)."""
    cluster = infra.cluster
    if isinstance(cluster, NewCluster):
        for group in cluster.instance_groups:
            if group.name == config.instance_group:
                return float(group.ebs_volume_size_gb), ""
    return None, (
        "the cluster is not created by this stack, so its nodes' volume size is not in it "
        f"(the job writes to the {config.instance_type} node's disk)"
    )


def trainer_fields(config: DraftTrainingConfig) -> dict[str, Any]:
    """The TrainingJob fields hp:draftTraining.trainerArgs sets (full flag names)."""
    release = speculators_train.RELEASES[config.speculators_version]
    given = typed_args(config.trainer_args, release)  # `num-layers: "8"` is 8, as the job reads it
    found: dict[str, Any] = {}
    if isinstance(given.get("num-layers"), int):
        found["num_layers"] = given["num-layers"]
    if isinstance(given.get("draft-vocab-size"), int):
        found["draft_vocab_size"] = given["draft-vocab-size"]
    if given.get("optimizer") in ("muon", "adamw"):
        found["optimizer"] = given["optimizer"]
    if isinstance(given.get("ttt-steps"), int):
        found["ttt_steps"] = given["ttt-steps"]
    if isinstance(given.get("target-layer-ids"), (list, tuple)) and given["target-layer-ids"]:
        found["aux_layers"] = len(given["target-layer-ids"])  # core.py: fc reads one per id
    found["fsdp_shard"] = bool(given.get("fsdp-shard"))
    found["checkpoints"] = checkpoint_count(
        config.epochs, given.get("checkpoint-freq"), bool(given.get("save-best"))
    )
    return found


def checkpoint_count(epochs: int, freq: object, save_best: bool) -> int:
    """The epoch folders train/trainer.py maybe_save_checkpoint writes (speculators 0.9.0): with
    --save-best at most one per epoch; with --checkpoint-freq below 1 each epoch's saves go to
    that epoch's folder; with N >= 1, epoch 0 and each epoch e where (e + 1) % N == 0."""
    every = float(freq) if isinstance(freq, (int, float)) and not isinstance(freq, bool) else 1.0
    if save_best or every < 1 or not math.isfinite(every):
        return epochs
    step = int(every)
    return sum(1 for epoch in range(epochs) if epoch == 0 or (epoch + 1) % step == 0)
