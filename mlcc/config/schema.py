"""The one declaration of every `hp:*` key: its CLI type, default, scope and description.

Pulumi.yaml's `config:` block is generated from `KEYS` (`make schema`, checked by `make test`),
the offline stack-file reader applies Pulumi.yaml as the CLI does, and the program parses the
values with `mlcc.config.stack`. See docs/architecture.md ("Where each rule lives").
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal

import yaml

from mlcc.config import cluster_keys
from mlcc.config.operator import keys as operator_keys
from mlcc.engine_contract import SUPPORTED_VERSIONS

PROJECT = "hp"
PROJECT_DESCRIPTION = "Speculative-decoding LLM endpoints on SageMaker HyperPod (EKS)"
REQUIRED = object()
DEFAULT_NUM_TOKENS = 5

CliType = Literal["string", "integer", "boolean"] | None


class Scope(StrEnum):
    STACK = "stack"  # one value for the whole stack
    ENDPOINT = "endpoint"  # a default that each hp:endpoints entry may override
    CREATE = "create"  # read only in create mode (ignored when hp:clusterName is set)


@dataclass(frozen=True)
class Key:
    name: str
    type: CliType
    default: object
    description: str
    scope: Scope = Scope.STACK

    @property
    def qualified(self) -> str:
        return f"{PROJECT}:{self.name}"

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


_E, _C = Scope.ENDPOINT, Scope.CREATE

_ENDPOINT_KEYS: tuple[Key, ...] = (
    Key("engine", "string", "vllm", "Serving engine: vllm or sglang.", _E),
    Key(
        "engineVersion",
        "string",
        "",
        "Engine release of the endpoint (supported: "
        + "; ".join(f"{e} {', '.join(v)}" for e, v in SUPPORTED_VERSIONS.items())
        + "); empty = the pinned, DLC-aligned release. Its own flags, speculative names and "
        "preflight lists are checked, and the image is built from it (or hp:image carries it).",
        _E,
    ),
    Key("model", "string", REQUIRED, "Hugging Face model id of the target model (org/name).", _E),
    Key(
        "modelRevision",
        "string",
        "main",
        "Revision of hp:model on the Hub (branch, tag or commit); passed to the engine "
        "(--revision) and read by preflight.",
        _E,
    ),
    Key(
        "instanceType", "string", "ml.g5.12xlarge", "SageMaker instance type of the GPU nodes.", _E
    ),
    Key(
        "gpuCount",
        None,
        "",
        "GPUs per model pod (integer, at most the instance type has); empty = all GPUs of "
        "hp:instanceType (required for a type this project does not know).",
        _E,
    ),
    Key("replicas", "integer", 1, "Number of model pods.", _E),
    Key(
        "maxModelLen",
        None,
        "",
        "Longest sequence (prompt + output) in tokens (integer); empty = the model's own. "
        "vLLM --max-model-len, SGLang --context-length.",
        _E,
    ),
    Key(
        "engineArgs",
        None,
        {},
        "Extra flags of the selected engine as a map, e.g. {enforce-eager: true}; speculative "
        "flags go in the hp:speculative* keys, secrets in hp:hfToken.",
        _E,
    ),
    Key(
        "speculativeAlgorithm",
        "string",
        "",
        "draft-model, eagle, eagle2, eagle3, ngram, mtp, ngram-gpu, suffix, dflash or dspark; "
        "empty = speculation off.",
        _E,
    ),
    Key(
        "speculativeModel",
        "string",
        "",
        "Draft model: Hugging Face id, absolute path in the image, or (vLLM) the s3:// "
        "folder of a trained head, copied into the pod (draft-model, eagle*, dflash; "
        "optional for dspark).",
        _E,
    ),
    Key(
        "speculativeModelRevision",
        "string",
        "main",
        "Revision of hp:speculativeModel on the Hub; passed to the engine (vLLM "
        "speculative-config revision, SGLang --speculative-draft-model-revision).",
        _E,
    ),
    Key(
        "speculativeNumTokens",
        "integer",
        DEFAULT_NUM_TOKENS,
        "Tokens drafted per step (vLLM num_speculative_tokens, SGLang num_steps).",
        _E,
    ),
    Key(
        "speculativeEagleTopk",
        None,
        "",
        "EAGLE branching per step (integer, SGLang); empty = 1, or 4 for eagle2.",
        _E,
    ),
    Key(
        "speculativeNumDraftTokens",
        None,
        "",
        "SGLang tokens verified per step for an EAGLE tree (integer); empty = derived.",
        _E,
    ),
    Key(
        "speculativeOptions",
        None,
        {},
        "Method knobs as a map of whole numbers (vLLM): promptLookupMin, promptLookupMax "
        "(ngram, ngram-gpu), suffixMaxTreeDepth, suffixMaxCachedRequests, suffixCorpusTokens "
        "(suffix).",
        _E,
    ),
    Key(
        "speculativeSchedule",
        None,
        [],
        "Load-aware speculation: a list of batch-size ranges [{from, to, tokens}] in ascending "
        "order, from 1, `to` optional on the last; tokens 0 = off there "
        "(docs/speculative-schedule.md).",
        _E,
    ),
    Key(
        "autoscaling",
        None,
        {},
        "Autoscaling of the model pods: {minReplicas, maxReplicas, ...} (docs/scaling.md); "
        "empty = a fixed hp:replicas.",
        _E,
    ),
    Key(
        "baseline",
        "boolean",
        False,
        "Also deploy <name>-baseline: the same model, engine and instances without "
        "speculation, to measure the speedup (mlcc bench --baseline).",
        _E,
    ),
)
_STACK_KEYS: tuple[Key, ...] = (
    Key(
        "endpoints",
        None,
        [],
        "Several endpoints: a list of {name, ...} where ... overrides any endpoint key above "
        "(model, engine, replicas, speculativeAlgorithm, ...); the top-level keys are the "
        "defaults. Empty = one endpoint from the top-level keys.",
    ),
    Key("namespace", "string", "default", "Kubernetes namespace of the endpoints."),
    Key(
        "endpointName",
        "string",
        "",
        "Name of the single endpoint (CR and SageMaker endpoint); empty = hp-<stack>. With "
        "hp:endpoints each entry's name is used instead.",
    ),
    Key(
        "hfToken",
        "string",
        "",
        "Hugging Face token for gated models; set with --secret. Empty = no token.",
    ),
    Key(
        "optimize",
        None,
        {},
        "SageMaker AI recommendation job for the speculative settings: {goal "
        "(latency|throughput|cost), modelS3Uri, roleArn, dataset, instanceTypes, "
        "timeoutMinutes, outputS3Uri}; empty = no job. Explicit hp:speculative* keys win.",
    ),
    Key(
        "image",
        "string",
        "",
        "Prebuilt serve image URI of hp:engine (pin it by digest); empty = build "
        "images/<engine> and push it to this stack's ECR repository.",
    ),
    Key(
        "waitForEndpoints",
        "boolean",
        True,
        "`pulumi up` waits until every endpoint serves (state DeploymentComplete, replicas "
        "ready, speculation as configured) and fails fast with the reason (docs/deploy.md); "
        "false = done once the endpoints are applied.",
    ),
    Key(
        "deployTimeoutMinutes",
        "integer",
        120,
        "How long `pulumi up` waits for the endpoints to serve; also each endpoint's "
        "maxDeployTimeInSeconds, the operator's own deadline.",
    ),
)
_LATER_STACK_KEYS: tuple[Key, ...] = (
    Key("tags", None, {}, "Extra AWS tags for every taggable resource (a map)."),
    Key(
        "preflight",
        "string",
        "auto",
        "Checks of the models (config.json on the Hub) and the AWS account (quotas, the "
        "inference add-on, an existing cluster) before anything is created "
        "(docs/preflight.md): auto (a source that cannot be reached is a warning), strict "
        "(an error), off. mlcc plan runs them only with --preflight.",
    ),
    Key(
        "observability",
        None,
        {},
        "Speculation dashboard and alert rules (docs/observability.md): off, file (only the "
        "importable files of mlcc plan --out), prometheus-operator (a PrometheusRule and a "
        "Grafana dashboard ConfigMap) or amp (an AMP rule groups namespace), or a map {target, "
        "ampWorkspace, namespace, ruleLabels, acceptanceFloor, ...}. Empty = off.",
    ),
    Key(
        "budget",
        "string",
        "",
        "The most the stack may cost: <USD>/hour or <USD>/month (730 h), e.g. 40/hour. A plan "
        "over it is refused at preview, naming the total and the largest parts (docs/cost.md). "
        "Empty = no budget.",
    ),
    Key(
        "draftTraining",
        None,
        {},
        "Train an EAGLE-3 head for hp:model (vLLM) on the cluster (docs/draft-training.md): "
        "{instanceGroup, dataset (s3:// of mlcc draft dataset's train.jsonl), output (s3:// for "
        "the checkpoints), epochs, seqLength, trainerArgs (speculators train flags, full "
        "names), hiddenStates (offline|online), operator (hyperpod|job), speculatorsVersion, "
        "instanceType, image}. Empty = no training job.",
    ),
)
_OPERATOR_KEYS = tuple(
    Key(name, cli_type, default, description, Scope.ENDPOINT if per_endpoint else Scope.STACK)
    for name, cli_type, default, description, per_endpoint in operator_keys.ROWS
)
_CLUSTER_KEYS = tuple(
    Key(name, cli_type, default, description, Scope.CREATE if create_only else Scope.STACK)
    for name, cli_type, default, description, create_only in cluster_keys.ROWS
)
KEYS: tuple[Key, ...] = (
    *_ENDPOINT_KEYS,
    *_OPERATOR_KEYS,
    *_STACK_KEYS,
    *_CLUSTER_KEYS,
    *_LATER_STACK_KEYS,
)
KEYS_BY_NAME: dict[str, Key] = {key.name: key for key in KEYS}
KEYS_BY_QUALIFIED: dict[str, Key] = {key.qualified: key for key in KEYS}
ENDPOINT_KEYS: tuple[str, ...] = tuple(k.name for k in KEYS if k.scope is Scope.ENDPOINT)
CREATE_KEYS: tuple[str, ...] = tuple(k.name for k in KEYS if k.scope is Scope.CREATE)

_HEADER = """\
# Generated from mlcc/config/schema.py by `make schema`; edit the key table there, not here.
# Keys without a type take values the CLI cannot type (maps, lists, optional integers);
# the program validates them (mlcc/config/stack.py).
"""


def config_block() -> dict[str, dict[str, object]]:
    """Pulumi.yaml's `config:` block: what the Pulumi CLI checks before the program runs."""
    block: dict[str, dict[str, object]] = {}
    for key in KEYS:
        entry: dict[str, object] = {}
        if key.type is not None:
            entry["type"] = key.type
        if not key.required:
            entry["default"] = key.default
        entry["description"] = key.description
        block[key.name] = entry
    return block


def pulumi_yaml() -> str:
    project = {
        "name": PROJECT,
        "description": PROJECT_DESCRIPTION,
        "runtime": {
            "name": "python",
            "options": {"toolchain": "pip", "virtualenv": ".venv"},
        },
    }
    body = yaml.safe_dump(project, sort_keys=False)
    config = yaml.safe_dump({"config": config_block()}, sort_keys=False, width=88)
    return f"{body}{_HEADER}{config}"


def main(argv: list[str]) -> int:
    """`python -m mlcc.config.schema [--check] PATH`: write (or check) the generated Pulumi.yaml."""
    check = "--check" in argv
    paths = [a for a in argv if a != "--check"]
    path = Path(paths[0] if paths else "Pulumi.yaml")
    wanted = pulumi_yaml()
    if check:
        if not path.is_file() or path.read_text() != wanted:
            print(f"{path} is out of date; run `make schema`", file=sys.stderr)
            return 1
        return 0
    path.write_text(wanted)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
