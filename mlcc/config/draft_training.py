"""hp:draftTraining: an EAGLE-3 head trained on the cluster for the stack's vLLM target.

Pure. `parse` reads the object and returns a frozen `DraftTrainingConfig` (or None when the key
is empty), recording every problem with its sub-key (hp:draftTraining.<field>). The target is
the stack's first endpoint (hp:model at hp:modelRevision), which must run vLLM: the hidden states
come from a vLLM server of the target's release, and only vLLM serves speculators-format heads.
The instance group is one of the cluster's GPU groups (hp:instanceGroups, or the groups the
endpoints imply); for a cluster the stack does not create, the groups are not in the stack, so
`instanceType` names the nodes instead. docs/draft-training.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from mlcc.config.aws import rules as aws_rules
from mlcc.config.aws.instances import GPU_COUNTS
from mlcc.config.endpoints import EndpointConfig
from mlcc.config.infrastructure import InfrastructureConfig, NewCluster
from mlcc.config.reader import Reader
from mlcc.config.trainer_args import TrainerArg, parse_trainer_args
from mlcc.engine_contract.names import SPECULATIVE_NAMES
from mlcc.engine_contract.values import printable
from mlcc.facts import speculators_train
from mlcc.serving.engines import Engine

KEY = "draftTraining"
# The speculative method a vLLM release needs to extract hidden states (its SpeculativeConfig's
# method names, engine_flags.json), from speculators' scripts/launch_vllm.py.
EXTRACT_METHOD = "extract_hidden_states"
DEFAULT_EPOCHS = 20  # speculators 0.9.0 TrainerArgs.epochs (train/config/schema.py)
DEFAULT_SEQ_LENGTH = 8192  # speculators 0.9.0 prepare-data --seq-length, DataArgs.total_seq_len
MAX_EPOCHS = 1000
JOB_SUFFIX = "-draft"
PINNED_SPECULATORS = speculators_train.PINNED_VERSION
# hp:image's shape (mlcc/config/stack_keys.py): a repository with a tag or a digest.
_IMAGE_REF = re.compile(
    r"^[a-z0-9][a-z0-9._/:-]*(@sha256:[0-9a-f]{64}|:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})$"
)
FIELDS = (
    "instanceGroup",
    "instanceType",
    "dataset",
    "output",
    "epochs",
    "seqLength",
    "trainerArgs",
    "hiddenStates",
    "operator",
    "speculatorsVersion",
    "image",
)


class HiddenStates(StrEnum):
    OFFLINE = "offline"  # generate-offline-data writes them to disk, then train reads them
    ONLINE = "online"  # train asks the job's vLLM server for them (--on-missing generate)


class JobOperator(StrEnum):
    HYPERPOD = "hyperpod"  # HyperPodPyTorchJob of the HyperPod training operator add-on
    JOB = "job"  # a plain batch/v1 Job, for clusters without the add-on


@dataclass(frozen=True)
class DraftTrainingConfig:
    name: str  # the job's Kubernetes name
    instance_group: str  # "" when the stack does not know the cluster's groups
    instance_type: str
    gpus: int  # every GPU of one node
    dataset: str  # s3:// prefix holding train.jsonl (mlcc draft dataset's output)
    output: str  # s3:// prefix for the checkpoints
    target_model: str
    target_revision: str
    engine_version: str  # the target's vLLM release: the job's vLLM server and image
    epochs: int = DEFAULT_EPOCHS
    seq_length: int = DEFAULT_SEQ_LENGTH
    hidden_states: HiddenStates = HiddenStates.OFFLINE
    operator: JobOperator = JobOperator.HYPERPOD
    speculators_version: str = speculators_train.PINNED_VERSION
    trainer_args: tuple[TrainerArg, ...] = ()
    image: str | None = None  # None: the stack's vLLM serve image of engine_version

    def trainer_argv(self) -> list[str]:
        release = speculators_train.RELEASES[self.speculators_version]
        return [w for arg in self.trainer_args for w in arg.argv(release.options[arg.name])]


def parse_draft_training(
    reader: Reader,
    endpoints: tuple[EndpointConfig, ...],
    infra: InfrastructureConfig,
    endpoint_name: str,
) -> DraftTrainingConfig | None:
    """`endpoint_name`: the stack's (single) endpoint name; the job is `<it>-draft`, within
    Kubernetes' 63 characters (a Job's name is also its pods' job-name label)."""
    raw = reader.structured(KEY)
    if raw is None or raw == {}:
        return None
    if not isinstance(raw, dict):
        reader.fail(KEY, "must be an object such as {instanceGroup: gpu, dataset: s3://...}")
        return None
    problems = len(reader.problems.errors)
    for unknown in sorted(set(map(str, raw)) - set(FIELDS)):
        reader.fail(
            f"{KEY}.{printable(unknown)[:40]}", f"unknown field; fields: {', '.join(FIELDS)}"
        )
    target = endpoints[0] if endpoints else None
    if target is not None and target.engine is not Engine.VLLM:
        reader.fail(
            KEY,
            f"trains a draft for a vLLM target, but hp:engine is {target.engine.value}: the "
            "hidden states come from a vLLM server, and SGLang does not load speculators-format "
            "heads",
        )
    elif target is not None and not _extracts(target):
        reader.fail(
            KEY,
            f"vLLM {target.engine_release.version} has no {EXTRACT_METHOD} speculative method; "
            "set hp:engineVersion to a release that has it",
        )
    group, instance_type = _placement(reader, raw, infra)
    version = _choice(
        reader,
        raw,
        "speculatorsVersion",
        speculators_train.SUPPORTED,
        speculators_train.PINNED_VERSION,
    )
    release = speculators_train.RELEASES.get(version)
    args: tuple[TrainerArg, ...] = ()
    if release is not None:
        args, arg_problems = parse_trainer_args(raw.get("trainerArgs"), release)
        for sub, message in arg_problems:
            reader.fail(f"{KEY}.trainerArgs" + (f".{sub}" if sub else ""), message)
    gpus = GPU_COUNTS.get(instance_type, 0)
    hidden = HiddenStates(_choice(reader, raw, "hiddenStates", tuple(HiddenStates), "offline"))
    if hidden is HiddenStates.ONLINE and instance_type and gpus < 2:
        reader.fail(
            f"{KEY}.hiddenStates",
            f"online needs a node with 2 or more GPUs (one serves the target, the others "
            f"train); {instance_type} has {gpus}. Use offline, or a larger instance type",
        )
    config = DraftTrainingConfig(
        name=f"{endpoint_name[: 63 - len(JOB_SUFFIX)].rstrip('-')}{JOB_SUFFIX}",
        instance_group=group,
        instance_type=instance_type,
        gpus=gpus,
        dataset=_s3(reader, raw, "dataset"),
        output=_s3(reader, raw, "output"),
        target_model=target.model if target else "",
        target_revision=target.model_revision if target else "",
        engine_version=target.engine_release.version if target else "",
        epochs=_whole(reader, raw, "epochs", DEFAULT_EPOCHS, MAX_EPOCHS),
        seq_length=_whole(reader, raw, "seqLength", DEFAULT_SEQ_LENGTH, 1 << 20),
        hidden_states=hidden,
        operator=JobOperator(_choice(reader, raw, "operator", tuple(JobOperator), "hyperpod")),
        speculators_version=version,
        trainer_args=args,
        image=_image(reader, raw),
    )
    if config.operator is JobOperator.HYPERPOD and isinstance(infra.cluster, NewCluster):
        reader.warn(
            f"{KEY}.operator",
            "hyperpod needs the HyperPod training operator add-on on the cluster, which this "
            "stack does not install: install it, or set operator: job",
        )
    _warn_without_room(reader, config, endpoints, infra)
    if config.dataset and config.dataset == config.output:
        reader.fail(f"{KEY}.output", "is the dataset's prefix; give the checkpoints their own")
    return config if len(reader.problems.errors) == problems else None


def _warn_without_room(
    reader: Reader,
    config: DraftTrainingConfig,
    endpoints: tuple[EndpointConfig, ...],
    infra: InfrastructureConfig,
) -> None:
    """The job's pod takes every GPU of one node: on a group the endpoints fill, it stays
    Pending until they shrink. Groups of one instance type are counted together, as the
    endpoints (which name a type, not a group) may land on any of them."""
    cluster = infra.cluster
    if not isinstance(cluster, NewCluster) or not config.gpus:
        return
    kind = config.instance_type
    nodes = sum(g.instance_count for g in cluster.instance_groups if g.instance_type == kind)
    used = sum(e.replicas * e.gpu_count for e in endpoints if e.instance_type == kind)
    free = nodes * config.gpus - used
    if free < config.gpus:
        reader.warn(
            f"{KEY}.instanceGroup",
            f"the job takes all {config.gpus} GPUs of one {kind} node, and the endpoints use "
            f"{used} of the {nodes * config.gpus} GPUs of the {kind} nodes: its pod waits "
            "(Pending) until a node is free; raise hp:instanceGroups[].instanceCount of group "
            f"{config.instance_group}, or train on another group",
        )


def _extracts(endpoint: EndpointConfig) -> bool:
    """The release's SpeculativeConfig methods (engine_flags.json, from its wheel)."""
    names = SPECULATIVE_NAMES[endpoint.engine.value].get(endpoint.engine_release.version, ())
    return EXTRACT_METHOD in names


def _placement(reader: Reader, raw: dict[str, Any], infra: InfrastructureConfig) -> tuple[str, str]:
    group = _text(raw.get("instanceGroup"))
    given_type = _text(raw.get("instanceType"))
    cluster = infra.cluster
    if isinstance(cluster, NewCluster):
        groups = {g.name: g for g in cluster.instance_groups}
        gpu_groups = sorted(n for n, g in groups.items() if GPU_COUNTS.get(g.instance_type, 0))
        if group not in groups or group not in gpu_groups:
            what = "is required" if not group else f"{group!r} is not a GPU instance group"
            reader.fail(
                f"{KEY}.instanceGroup",
                f"{what}: name one of the cluster's GPU groups ({', '.join(gpu_groups) or 'none'})",
            )
            return group, given_type
        instance_type = groups[group].instance_type
        if given_type and given_type != instance_type:
            reader.fail(
                f"{KEY}.instanceType",
                f"is {given_type}, but group {group} runs {instance_type}; leave it out",
            )
        return group, instance_type
    if not given_type:
        reader.fail(
            f"{KEY}.instanceType",
            "is required for a cluster this stack does not create (its instance groups are not "
            "in the stack): the GPU instance type the job runs on, e.g. ml.g5.12xlarge",
        )
    elif not GPU_COUNTS.get(given_type):
        reader.fail(f"{KEY}.instanceType", f"{given_type!r} is not a GPU instance type mlcc knows")
    return group, given_type


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _s3(reader: Reader, raw: dict[str, Any], field: str) -> str:
    value = raw.get(field)
    what = {
        "dataset": "the folder `mlcc draft dataset` wrote (train.jsonl)",
        "output": "where the checkpoints go",
    }[field]
    if not isinstance(value, str) or not value.strip():
        reader.fail(f"{KEY}.{field}", f"is required: an s3://bucket/prefix/ URI, {what}")
        return ""
    uri = value.strip()
    problem = aws_rules.s3_uri_problem(uri)
    if problem:
        reader.fail(f"{KEY}.{field}", problem)
        return ""
    wild = sorted({c for c in uri if c in "*?"})
    if wild:
        # The prefix goes into the node role's IAM policy (components/cluster/iam_draft_loop.py),
        # where * and ? are wildcards: s3://bkt/d*/ would grant every prefix starting with d.
        reader.fail(
            f"{KEY}.{field}",
            f"must not contain {' or '.join(wild)}: the stack writes this prefix into the node "
            "role's IAM policy, where they are wildcards granting other prefixes too",
        )
        return ""
    return uri.rstrip("/") + "/"


def _whole(reader: Reader, raw: dict[str, Any], field: str, default: int, most: int) -> int:
    value = raw.get(field, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        reader.fail(f"{KEY}.{field}", f"must be a whole number from 1 to {most}, got {value!r}")
        return default
    return value


def _choice(
    reader: Reader, raw: dict[str, Any], field: str, allowed: tuple[str, ...], default: str
) -> str:
    value = raw.get(field, default)
    if value not in allowed:
        reader.fail(f"{KEY}.{field}", f"must be one of {', '.join(allowed)}, got {value!r}")
        return default
    return str(value)


def _image(reader: Reader, raw: dict[str, Any]) -> str | None:
    value = raw.get("image")
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not _IMAGE_REF.match(value.strip()):
        reader.fail(
            f"{KEY}.image", f"must be an image reference with a tag or digest, got {value!r}"
        )
        return None
    return value.strip()
