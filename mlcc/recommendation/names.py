"""Names and tags of the recommendation jobs this project starts, and which stack a job is for.

A job name cannot hold a stack name (names are at most 63 characters, stack names up to 100, and
`dev` is a prefix of `dev-latency`), so the stack is recorded exactly in the `mlcc:stack` tag of
the job and its workload config. Names carry a digest of the stack only so that
ListAIRecommendationJobs(NameContains=...) can narrow the candidates; the tag decides.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PROJECT = "hp"
# AIRecommendationJobName / AIWorkloadConfigName in the botocore model.
NAME_PATTERN = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}")
MAX_NAME_LENGTH = 63
# Pulumi's own rule for stack names; every such name is also a valid tag value.
STACK_NAME_PATTERN = re.compile(r"[A-Za-z0-9_.\-]{1,100}")
STACK_TAG = "mlcc:stack"
STACK_DIGEST_LENGTH = 8
UNIQUE_DIGEST_LENGTH = 8
# Kind of the job in its name: a goal for `mlcc optimize`, this for the stack's own job.
STACK_JOB_KIND = "speculative"


@dataclass(frozen=True)
class JobNames:
    """The recommendation job and the workload config it uses (same name, different types)."""

    job: str
    workload_config: str


def stack_name_problem(stack: str) -> str | None:
    """Why `stack` is not a Pulumi stack name, or None."""
    if STACK_NAME_PATTERN.fullmatch(stack):
        return None
    return (
        f"{stack!r} is not a stack name (1 to 100 letters, digits, '-', '_' or '.', as in "
        "Pulumi.<stack>.yaml)"
    )


def job_name_problem(name: str) -> str | None:
    """Why `name` cannot be a recommendation job name, or None."""
    if len(name) <= MAX_NAME_LENGTH and NAME_PATTERN.fullmatch(name):
        return None
    return (
        f"{name!r} is not a recommendation job name (1 to {MAX_NAME_LENGTH} letters, digits "
        "and inner hyphens)"
    )


def stack_digest(stack: str) -> str:
    return _digest(stack, length=STACK_DIGEST_LENGTH)


def stack_name_filter(stack: str) -> str:
    """The NameContains value that finds every job named for `stack` (and rarely others)."""
    return f"{PROJECT}-{stack_digest(stack)}-"


def job_names(stack: str, kind: str, salt: str) -> JobNames:
    """`hp-<stack digest>-<stack>-<kind>-<digest of all three>`, shortened to 63 characters.

    The same (stack, kind, salt) always gives the same name, so an interrupted run finds its
    job again; the readable middle part is cut when long and is never used for matching.
    """
    head = stack_name_filter(stack)
    tail = "-" + _digest(stack, kind, salt, length=UNIQUE_DIGEST_LENGTH)
    readable = re.sub(r"[^a-zA-Z0-9]+", "-", f"{stack}-{kind}").strip("-")
    room = MAX_NAME_LENGTH - len(head) - len(tail)
    middle = readable[:room].rstrip("-") or "job"
    name = f"{head}{middle}{tail}"
    return JobNames(job=name, workload_config=name)


def stack_tags(stack: str) -> list[dict[str, str]]:
    """Tags for CreateAIRecommendationJob and CreateAIWorkloadConfig."""
    return [{"Key": STACK_TAG, "Value": stack}]


def tagged_stack(tags: Any) -> str | None:
    """The `mlcc:stack` value of a Tags list from a reply, or None (tolerates any shape)."""
    if not isinstance(tags, list):
        return None
    for tag in tags:
        if isinstance(tag, Mapping) and tag.get("Key") == STACK_TAG:
            value = tag.get("Value")
            return value if isinstance(value, str) else None
    return None


def _digest(*parts: str, length: int) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:length]
