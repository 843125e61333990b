"""AWS facts taken from the botocore data boto3 ships: regions, tag limits, name patterns.

Nothing here is retyped from documentation: patterns, lengths, counts and the HyperPod instance
types are read from the SageMaker service model (the strictest of the services this stack tags),
regions from botocore's endpoint data. Pure apart from reading that data once.
"""

from __future__ import annotations

import difflib
import gc
import gzip
import json
import os
import re
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

import botocore.loaders
import botocore.model
import botocore.regions

if TYPE_CHECKING:
    import boto3

# Tags this program adds to every resource itself (mlcc.config.infrastructure); they count against
# AWS's per-resource limit.
OWN_TAGS = 3
# \p{...} classes of AWS patterns that Python's re lacks, by Unicode category prefix.
_UNICODE_CLASSES = {"L": "L", "Z": "Z", "N": "N"}


@contextmanager
def _no_gc_pauses() -> Iterator[None]:
    """Decoding botocore's JSON (megabytes of fresh dicts) triggers the cyclic collector again
    and again, and each full pass walks every object the Pulumi SDKs created: paused, the same
    data loads several times faster. The decoded data holds no cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class DictFileLoader(botocore.loaders.JSONFileLoader):
    """botocore's JSON file loader, decoding into plain dicts instead of OrderedDicts: the same
    keys in the same order, built in half the time from the megabytes of service models."""

    _OPENERS = ((".json", open), (".json.gz", gzip.open))  # botocore's order

    def load_file(self, file_path: str) -> Any:
        for extension, opener in self._OPENERS:
            if os.path.isfile(file_path + extension):
                with opener(file_path + extension, "rb") as stream:
                    return json.loads(stream.read().decode("utf-8"))
        return None


@cache
def shared_loader(data_path: str | None) -> botocore.loaders.Loader:
    """One botocore data loader per search path for the whole process, made by botocore's own
    `create_loader` as a session makes its own (`data_path` first, then ~/.aws/models and the data
    botocore ships). The loader caches what it parses, and the model files do not change while the
    process runs: each session it is registered on (as its "data_loader" component) skips parsing
    the megabytes of service models and endpoints again. botocore's endpoint resolver fills the
    defaults into the endpoint entries it resolves, in place, as within any one session: the
    sessions sharing the data see the same filled-in entries a single session would."""
    loader = botocore.loaders.create_loader(data_path)
    loader.file_loader = DictFileLoader()
    return loader


def boto3_session(**options: Any) -> boto3.Session:
    """`boto3.Session(**options)` whose service models and endpoints come from `shared_loader`.
    The loader is registered after boto3's own set-up, which appends its resource data to the
    loader it finds (the session's own): the shared one stays as botocore made it."""
    import boto3
    import botocore.session

    core = botocore.session.get_session()
    session = boto3.Session(botocore_session=core, **options)
    core.register_component("data_loader", shared_loader(core.get_config_variable("data_path")))
    return session


def _loader() -> botocore.loaders.Loader:
    """The loader of AWS_DATA_PATH; only the files read below are loaded, not a whole session."""
    return shared_loader(os.environ.get("AWS_DATA_PATH"))


@cache
def _service_model(service: str) -> botocore.model.ServiceModel:
    with _no_gc_pauses():
        data = _loader().load_service_model(service, "service-2")
    return botocore.model.ServiceModel(data, service_name=service)


@cache
def _shape_metadata(service: str, shape: str) -> dict[str, Any]:
    metadata: dict[str, Any] = _service_model(service).shape_for(shape).metadata
    return metadata


@cache
def known_regions() -> frozenset[str]:
    """Every region of every partition in which SageMaker (and so HyperPod) has an endpoint:
    what botocore's `Session.get_available_regions("sagemaker", partition)` answers, read from
    the same endpoints.json by botocore's own resolver."""
    with _no_gc_pauses():
        resolver = botocore.regions.EndpointResolver(_loader().load_data("endpoints"))
    prefix = _service_model("sagemaker").metadata.get("endpointPrefix", "sagemaker")
    return frozenset(
        region
        for partition in resolver.get_available_partitions()
        for region in resolver.get_available_endpoints(prefix, partition)
    )


@cache
def endpoint_regions(endpoint_prefix: str, region: str) -> tuple[str, ...]:
    """The regions botocore's endpoints.json lists for `endpoint_prefix` (e.g. `api.pricing`,
    the Price List API) in `region`'s partition, in botocore's order."""
    with _no_gc_pauses():
        resolver = botocore.regions.EndpointResolver(_loader().load_data("endpoints"))
    partition = resolver.get_partition_for_region(region)
    return tuple(resolver.get_available_endpoints(endpoint_prefix, partition))


@cache
def hyperpod_instance_types() -> frozenset[str]:
    """The instance types a HyperPod cluster takes: the SageMaker model's ClusterInstanceType."""
    shape = _service_model("sagemaker").shape_for("ClusterInstanceType")
    assert isinstance(shape, botocore.model.StringShape)
    return frozenset(shape.enum)


def hyperpod_type_problem(instance_type: str) -> str | None:
    """Why HyperPod refuses `instance_type` for an instance group (so for an endpoint's pods)."""
    types = hyperpod_instance_types()
    if instance_type in types:
        return None
    parts = instance_type.split(".")
    family = sorted(t for t in types if len(parts) == 3 and t.split(".")[1] == parts[1])
    close = difflib.get_close_matches(instance_type, sorted(types), n=2, cutoff=0.9)
    if family:
        sizes = sorted((t.split(".")[2] for t in family), key=_size_order)
        hint = f"; its {parts[1]} sizes: {', '.join(sizes)}"
    else:
        hint = f"; did you mean {' or '.join(close)}?" if close else " (e.g. ml.g5.12xlarge)"
    shown = instance_type if len(instance_type) <= 60 else f"{instance_type[:60]}..."
    return (
        f"{shown!r} is not a HyperPod instance type (SageMaker's ClusterInstanceType in "
        f"botocore's service model){hint}"
    )


def _size_order(size: str) -> tuple[int, str]:
    """medium, large, xlarge, 2xlarge, ..., 48xlarge."""
    digits = re.match(r"\d*", size)
    return (int(digits[0]) if digits and digits[0] else 1 if "xlarge" in size else 0), size


@cache
def integer_bounds(shape: str) -> tuple[int, int]:
    """(min, max) of an integer or list shape of the SageMaker model, e.g. ClusterInstanceCount
    (0-6758 nodes per instance group in botocore 1.44) or ClusterThreadsPerCore."""
    metadata = _shape_metadata("sagemaker", shape)
    return int(metadata["min"]), int(metadata["max"])


def region_problem(region: str) -> str | None:
    if not region:
        return "is not set; set it with `pulumi config set aws:region us-east-1`"
    if region not in known_regions():
        close = sorted(r for r in known_regions() if r.split("-")[0] == region.split("-")[0])
        hint = f" (e.g. {', '.join(close[:4])})" if close else ""
        return f"{region!r} is not an AWS region with SageMaker{hint}"
    return None


def _pattern_matches(pattern: str, value: str) -> bool:
    """Full match of an AWS pattern, with \\p{L}/\\p{Z}/\\p{N} classes checked by category."""
    classes = re.findall(r"\\p\{(\w)\}", pattern)
    if not classes:
        return re.fullmatch(pattern.strip("^$"), value) is not None
    # The tag patterns are one bracket class repeated: [\p{L}\p{Z}\p{N}_.:/=+\-@]*
    literals = re.sub(r"\\p\{\w\}", "", pattern.split("[", 1)[1].rsplit("]", 1)[0])
    allowed = set(literals.replace("\\", ""))
    categories = tuple(_UNICODE_CLASSES[c] for c in classes if c in _UNICODE_CLASSES)
    return all(ch in allowed or unicodedata.category(ch).startswith(categories) for ch in value)


def string_problem(service: str, shape: str, value: str, what: str) -> str | None:
    """Why `value` breaks the model's min/max/pattern for `shape`, or None."""
    metadata = _shape_metadata(service, shape)
    low, high = metadata.get("min", 0), metadata.get("max")
    if len(value) < low or (high is not None and len(value) > high):
        bounds = f"{low}-{high}" if high is not None else f"at least {low}"
        return f"{what} must be {bounds} characters long, got {len(value)}"
    pattern = metadata.get("pattern")
    if pattern and not _pattern_matches(pattern, value):
        return f"{what} {value!r} does not match AWS's pattern {pattern}"
    return None


def tag_problems(tags: dict[str, object]) -> list[tuple[str | None, str]]:
    """(tag key, message) for each tag AWS would refuse, plus the count limit (key None)."""
    problems: list[tuple[str | None, str]] = []
    limit = int(_shape_metadata("sagemaker", "TagList")["max"]) - OWN_TAGS
    if len(tags) > limit:
        problems.append((None, f"has {len(tags)} tags; AWS allows {limit} besides the program's"))
    for key, value in tags.items():
        problem = _tag_problem(str(key), value)
        if problem:
            problems.append((str(key), problem))
    return problems


def _tag_problem(key: str, value: object) -> str | None:
    if key.lower().startswith("aws:"):
        return "tag names starting with 'aws:' are reserved by AWS"
    if isinstance(value, dict | list) or value is None:
        return "tag values must be strings"
    text = "true" if value is True else "false" if value is False else str(value)
    return string_problem("sagemaker", "TagKey", key, "the tag name") or string_problem(
        "sagemaker", "TagValue", text, "the tag value"
    )


def cluster_reference_problem(value: str) -> str | None:
    """A HyperPod cluster name or ARN as SageMaker's DescribeCluster accepts it."""
    if value.startswith("arn:"):
        return string_problem("sagemaker", "ClusterArn", value, "the cluster ARN")
    return string_problem("sagemaker", "ClusterName", value, "the cluster name")


def arn_region(arn: str) -> str:
    parts = arn.split(":")
    return parts[3] if len(parts) > 3 else ""


def s3_uri_problem(uri: str) -> str | None:
    """An `s3://bucket/prefix` URI with a bucket name S3 accepts (SageMaker's BucketName shape)."""
    if not uri.startswith("s3://"):
        return f"must be an s3://bucket/prefix URI, got {uri!r}"
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    problem = string_problem("sagemaker", "BucketName", bucket, "the bucket name")
    if problem is None and (".." in bucket or re.fullmatch(r"[0-9.]+", bucket)):
        problem = f"the bucket name {bucket!r} has '..' or is an IP address; S3 refuses it"
    if problem is None and len(prefix.encode()) > 1024:
        problem = "the prefix is longer than S3's 1024-byte key limit"
    empty_segment = "//" in prefix or prefix.startswith("/")
    if problem is None and (empty_segment or any(ord(c) < 32 for c in prefix)):
        problem = f"the prefix {prefix!r} has an empty path segment or a control character"
    return problem
