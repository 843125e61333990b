"""An endpoint that serves a trained head copied from S3 (docs/draft-serving.md): its rendered
spec (the program's own init container and env), its pods, vLLM's log and the copy's log.

The copy's log is what the real copy script prints against a fake AWS CLI (draft_copy_run.py);
vLLM's is the 0.27.1 EAGLE-3 start of logs/ with the draft it loaded replaced.
"""

from __future__ import annotations

import copy
from typing import Any

import deploy_samples as d
import verify_samples as s
from draft_copy_run import copy_log

from mlcc.deploy.expectation import Expectation
from mlcc.deploy.snapshot import LogRequest, Target
from mlcc.manifest import draft_copy
from mlcc.serving import s3_draft

HEAD = "s3://team-drafts/llama-8b/run-3/checkpoint-best/"
OLD_HEAD = "s3://team-drafts/llama-8b/run-2/checkpoint-best/"
COPY_PATH = "/opt/ml/model/mlcc-draft"
COPY = s3_draft.INIT_CONTAINER
ENV = s.rendered_env(speculativeModel=HEAD)


def expectation() -> Expectation:
    return s.expectation(speculativeModel=HEAD)


TARGET = Target("inference", "hp-dev", expectation(), generation=2)


def vllm_log(draft: str = COPY_PATH) -> str:
    """vLLM's start, its engine config line naming `draft` as the model of its SpeculativeConfig."""
    return s.VLLM_EAGLE3_LOG.replace(f"model='{s.EAGLE3_DRAFT}'", f"model='{draft}'")


def endpoint(state: str | None = "DeploymentComplete", head: str = HEAD) -> dict[str, Any]:
    """As the operator shows it: the program's rendered copy in spec.kubernetes."""
    found = s.endpoint(ENV, state=state)
    found["metadata"]["generation"] = 2
    draft_copy.apply(found["spec"], head)
    return found


def pod(name: str = d.POD, *, head: str = HEAD, ready: bool = True) -> dict[str, Any]:
    """A pod of `endpoint(head=head)`: the copy done (Completed), the worker with the env."""
    found = d.pod(name, ready=ready)
    found["spec"]["containers"][1]["env"] = copy.deepcopy(ENV)
    spec = endpoint(head=head)["spec"]
    found["spec"]["initContainers"] = copy.deepcopy(spec["kubernetes"]["initContainers"])
    done = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": d.STARTED}}
    found["status"]["initContainerStatuses"] = [
        {"name": COPY, "image": draft_copy.AWS_CLI_IMAGE, "ready": True, "restartCount": 0}
        | {"state": done, "lastState": {}}
    ]
    return found


def logs(
    pod_name: str = d.POD, *, draft: str = COPY_PATH, copied: str | None = HEAD
) -> dict[tuple[str, str, bool], str]:
    """The fake API's logs of one pod: vLLM's, and the copy's of `copied` (None: none)."""
    found = {(pod_name, d.WORKER, False): vllm_log(draft)}
    if copied is not None:
        found[(pod_name, COPY, False)] = copy_log(copied)
    return found


def snapshot_logs(**kwargs: Any) -> dict[LogRequest, str]:
    return {LogRequest(p, c, prev): text for (p, c, prev), text in logs(**kwargs).items()}
