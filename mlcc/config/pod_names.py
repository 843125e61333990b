"""The names Kubernetes gives a Deployment's pods, as a regex that selects one endpoint's pods.

Pure. The operator runs each endpoint's model pods in a Deployment named after the endpoint
(docs/operator-facts.md). A Deployment's pods are named `<replicaset>-<5 random characters>`,
and its ReplicaSets `<deployment>-<pod-template-hash>`, so `pod=~"llama-.*"` also selects the
pods of `llama-baseline` (the twin) or of any endpoint whose name starts with `llama-`. The
regex here follows the naming exactly:

- the pod-template-hash is `rand.SafeEncodeString(fmt.Sprint(<uint32 hash>))`: 1 to 10
  characters (a uint32 has at most 10 decimal digits) of the alphabet below (kubernetes
  pkg/controller/controller_utils.go `ComputeHash`, pkg/controller/deployment/sync.go);
- the pod name is the generateName `<replicaset>-` cut to 58 characters, then 5 random
  characters of the same alphabet (k8s.io/apiserver/pkg/storage/names/generate.go:
  `maxNameLength` 63, `randomLength` 5, `MaxGeneratedNameLength` 58);
- the alphabet has no vowels (k8s.io/apimachinery/pkg/util/rand/rand.go `alphanums`), so the
  `-baseline` of a twin (its `a`) can never stand where the hash does.

For a name over 45 characters Kubernetes cuts the hash (and from 58 characters the name), so
another endpoint named `<name>-` plus vowel-less characters could own pods of the same shape;
the twin's `-baseline` still cannot. PromQL's `=~` anchors the regex at both ends (RE2
syntax); Python's `re.fullmatch` reads it the same way, which the tests use.
"""

from __future__ import annotations

import re

POD_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
HASH_LENGTHS = range(1, 11)
MAX_GENERATED_PREFIX = 58
RANDOM_SUFFIX_LENGTH = 5
_CHAR = f"[{POD_NAME_ALPHABET}]"
_DEPLOYMENT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def deployment_pods_regex(deployment: str) -> str:
    """A regex that fully matches the names of `deployment`'s pods and, for names up to 45
    characters, of no other Deployment's."""
    if not _DEPLOYMENT_NAME.match(deployment) or len(deployment) > 63:
        raise ValueError(f"not a Deployment name: {deployment!r}")
    alternatives = dict.fromkeys(_prefix(deployment, length) for length in HASH_LENGTHS)
    suffix = f"{_CHAR}{{{RANDOM_SUFFIX_LENGTH}}}"
    if len(alternatives) == len(HASH_LENGTHS):  # never cut: one pattern says it
        first, last = HASH_LENGTHS[0], HASH_LENGTHS[-1]
        return f"{deployment}-{_CHAR}{{{first},{last}}}-{suffix}"
    return "|".join(f"{prefix}{suffix}" for prefix in alternatives)


def _prefix(deployment: str, hash_length: int) -> str:
    """`<deployment>-<hash>-` cut to 58 characters, each hash character a class."""
    pieces = [*deployment, "-", *[_CHAR] * hash_length, "-"][:MAX_GENERATED_PREFIX]
    text = "".join(pieces)
    return re.sub(
        rf"(?:{re.escape(_CHAR)})+",
        lambda run: f"{_CHAR}{{{len(run[0]) // len(_CHAR)}}}",
        text,
    )


def pod_matchers(namespace: str, deployment: str) -> str:
    """The PromQL label matchers of `deployment`'s pods in `namespace`, the same for the KEDA
    trigger, the dashboard, the alerts and `mlcc verify`'s live figures."""
    return f'namespace="{namespace}",pod=~"{deployment_pods_regex(deployment)}"'
