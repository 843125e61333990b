"""The stack-wide keys every endpoint shares: hp:namespace, hp:hfToken, hp:image, hp:preflight,
hp:budget, hp:optimize and hp:observability.

Pure: each reader records its problems on the `Reader` and returns the typed value;
`mlcc.config.stack.parse` puts them into the `StackConfig`.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from mlcc.config.budget import Budget, parse_budget
from mlcc.config.endpoints import EndpointConfig
from mlcc.config.observability import ObservabilitySettings, parse_observability
from mlcc.config.optimize import OptimizeSettings, parse_optimize_settings
from mlcc.config.reader import Reader
from mlcc.config.schema import PROJECT
from mlcc.facts.operator import OPERATOR_NAMESPACE
from mlcc.serving.speculative import Problem

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_IMAGE_REF = re.compile(
    r"^[a-z0-9][a-z0-9._/:-]*(@sha256:[0-9a-f]{64}|:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})$"
)
# Namespaces Kubernetes, the inference operator and its add-ons own: an endpoint there would be
# mixed up with (or deleted along with) the system's own objects.
SYSTEM_NAMESPACES = frozenset(
    {OPERATOR_NAMESPACE, "aws-hyperpod", "cert-manager", "keda", "amazon-cloudwatch"}
)
PREFLIGHT_MODES = ("auto", "strict", "off")


@dataclass(frozen=True)
class Secret:
    """A secret string whose repr never shows the value."""

    value: str = field(repr=False)

    def __repr__(self) -> str:
        return "Secret([redacted])"


def read_namespace(reader: Reader) -> str:
    namespace = reader.string("namespace")
    if len(namespace) > 63 or not _DNS_LABEL.match(namespace):
        reader.fail(
            "namespace",
            f"must be a Kubernetes namespace name (lowercase letters, digits, '-', at most 63), "
            f"got {namespace!r}",
        )
    elif namespace.startswith("kube-") or namespace in SYSTEM_NAMESPACES:
        reader.fail(
            "namespace",
            f"{namespace} belongs to Kubernetes or the inference operator; use a namespace of "
            "your own, such as inference",
        )
    return namespace


def read_hf_token(reader: Reader, secret_keys: Collection[str]) -> Secret | None:
    token = reader.raw("hfToken")
    if not token.strip():
        return None
    if f"{PROJECT}:hfToken" not in secret_keys:
        reader.fail(
            "hfToken",
            "is stored in plaintext; set it again with "
            "`pulumi config set --secret hp:hfToken <token>`",
        )
    return Secret(token.strip())


def read_image(reader: Reader) -> str | None:
    image = reader.string("image")
    if not image:
        return None  # build ours from images/<engine>
    if not _IMAGE_REF.match(image):
        reader.fail("image", f"is not an image reference with a tag or digest: {image!r}")
    elif "@sha256:" not in image:
        reader.warn(
            "image",
            "is pinned by a mutable tag; pods will not roll when the tag is "
            "re-pushed. Pin it by digest (@sha256:...)",
        )
    return image


def read_observability(
    reader: Reader, endpoints: tuple[EndpointConfig, ...]
) -> ObservabilitySettings:
    # An endpoint without hp:speculative* keys speculates when hp:optimize's job recommends it.
    optimized = bool(reader.structured("optimize"))
    speculative = [e.name for e in endpoints if may_speculate(e, optimized=optimized)]
    settings, issues = parse_observability(
        reader.structured("observability"), reader.key("observability"), speculative
    )
    for key, message in issues:
        reader.problems.errors.append(Problem(key, message))
    return settings


def may_speculate(endpoint: EndpointConfig, *, optimized: bool) -> bool:
    """Explicit hp:speculative* keys, or (not a twin) a recommendation job's choice."""
    return endpoint.speculative is not None or (optimized and not endpoint.baseline_of)


def read_budget(reader: Reader) -> Budget | None:
    text = reader.string("budget")
    if not text.strip():
        return None
    budget = parse_budget(text)
    if isinstance(budget, str):
        reader.fail("budget", budget)
        return None
    return budget


def read_preflight(reader: Reader) -> str:
    mode = reader.string("preflight").lower() or "auto"
    if mode not in PREFLIGHT_MODES:
        reader.fail("preflight", f"must be auto, strict or off, got {mode!r}")
        return "auto"
    return mode


def read_optimize(reader: Reader) -> OptimizeSettings | None:
    """hp:optimize, validated by the same rules as the recommendation provider's check."""
    value = reader.structured("optimize")
    if value is None:
        return None
    if not isinstance(value, dict):
        reader.fail("optimize", "must be an object such as {goal: latency, modelS3Uri: s3://...}")
        return None
    settings, errors = parse_optimize_settings(value) if value else (None, [])
    for error in errors:
        reader.fail(f"optimize.{error.key}", error.message)
    return settings
