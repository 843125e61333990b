"""Read-only AWS calls that gather the account facts, in parallel, each with a short timeout.

boto3 does the work: the credential chain the Pulumi AWS provider also follows (the stack's
`aws:profile`, else the environment, shared files, SSO or an assumed role), the endpoint
overrides (`AWS_ENDPOINT_URL`, `AWS_ENDPOINT_URL_<SERVICE>`), botocore's paginators and its
`standard` retry mode (throttling and transient errors are retried a bounded number of times).
Every answer is read under a size limit and every list under a page guard
(mlcc/preflight/bounded/aws_answers.py); a value botocore parses but no account could hold (a
negative or fractional quota, a GPU count or memory below one, a version that is not one) is not
taken as a fact. Every failure becomes an `Unreached` naming the call, never an exception.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from mlcc.config.aws.environment import SetupProblem, setup_failure
from mlcc.preflight.account import readings
from mlcc.preflight.account.facts import (
    QUOTA_SERVICE,
    AddonVersion,
    EksFacts,
    GpuMemory,
    HyperPodFacts,
    InstalledAddon,
    InstanceGroupFacts,
    NodeFacts,
    Quota,
    Unreached,
    ec2_twin,
)
from mlcc.preflight.bounded import aws_answers, credential_process

if TYPE_CHECKING:
    import boto3

T = TypeVar("T")

CALL_TIMEOUT_S = 5.0  # connect and read timeout of one HTTP request
MAX_ATTEMPTS = 3  # botocore's standard retry mode: the first try and two retries
DENIED = frozenset(
    {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnauthorizedException"}
)
NOT_FOUND = frozenset({"ResourceNotFound", "ResourceNotFoundException", "NoSuchResourceException"})
# The codes AWS answers for credentials it no longer (or never) accepts (botocore's
# data/*/service-2.json error shapes and the STS/IAM documentation of expired tokens).
CREDENTIALS_REFUSED = frozenset(
    {
        "ExpiredToken",
        "ExpiredTokenException",
        "RequestExpired",
        "InvalidClientTokenId",
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "AuthFailure",
        "SignatureDoesNotMatch",
    }
)
MAX_GPUS = 64  # GPUs of one instance (the largest EC2 GPU instances have 8 or 16)
MAX_GPU_MIB = 1024 * 1024  # one GPU's memory (the largest today: 288 GB)


class NotFound(Exception):
    """AWS answered that the resource does not exist (a fact, not a failure)."""


class Denied(Exception):
    """AWS refused the call: the IAM action to grant."""

    def __init__(self, action: str, message: str) -> None:
        super().__init__(message)
        self.action, self.message = action, message


class Clients:
    """boto3 clients of one session in the stack's region, with preflight's timeouts.

    A boto3 session is not thread-safe, clients are: each service's client is made once,
    under a lock, and then shared by the threads.
    """

    def __init__(self, session: boto3.Session, timeout_s: float) -> None:
        self.session, self.timeout_s = session, timeout_s
        self._made: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._failed: SetupProblem | None = None  # credentials not had: each client says so
        self.profile, self.deadline_s = "", timeout_s  # for the profile's credential_process
        self._bounded = False

    def client(self, service: str) -> Any:
        from botocore.config import Config

        with self._lock:
            if self._failed is not None:  # the credential_process is not run again
                raise self._failed
            if service not in self._made:
                config = Config(
                    connect_timeout=self.timeout_s,
                    read_timeout=self.timeout_s,
                    retries={"mode": "standard", "total_max_attempts": MAX_ATTEMPTS},
                )
                try:
                    if not self._bounded:  # the credential chain, built here: botocore
                        credential_process.bound(self.session, self.profile, self.deadline_s)
                        self._bounded = True  # converts settings as for the client below
                    made = self.session.client(service, config=config)  # type: ignore[call-overload]
                except (ValueError, TypeError) as error:  # botocore converting a setting
                    raise SetupProblem(setup_failure(error)) from None
                except credential_process.CredentialProcessProblem as problem:
                    self._failed = problem
                    raise
                self._made[service] = aws_answers.bounded(made)
            return self._made[service]


def clients(region: str, profile: str, timeout_s: float) -> Clients | Unreached:
    """A session as the Pulumi AWS provider would build it: the stack's profile and region."""
    from botocore.exceptions import BotoCoreError

    from mlcc.config.aws.rules import boto3_session

    try:
        session = boto3_session(profile_name=profile or None, region_name=region)
    except BotoCoreError as failure:  # e.g. the profile is not in the AWS config files
        return Unreached("the AWS session", setup_failure(failure, profile))
    made = Clients(session, min(CALL_TIMEOUT_S, max(timeout_s, 0.5)))
    made.profile, made.deadline_s = profile, timeout_s
    return made


def guarded(source: str, call: Callable[[], T]) -> Callable[[], T | Unreached]:
    """`call`, with every AWS failure turned into an Unreached for `source`."""

    def run() -> T | Unreached:
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            ConnectTimeoutError,
            EndpointConnectionError,
            NoCredentialsError,
            ReadTimeoutError,
        )

        try:
            return call()
        except Denied as denied:
            return Unreached(source, one_line(denied.message), denied_action=denied.action)
        except (aws_answers.AnswerProblem, SetupProblem) as problem:
            return Unreached(source, str(problem))
        except ClientError as failure:
            details = failure.response.get("Error", {})
            code, message = str(details.get("Code", "")), str(details.get("Message", ""))
            if _throttled(failure):
                return Unreached(source, f"throttled ({code}) after {MAX_ATTEMPTS} attempts")
            if code in CREDENTIALS_REFUSED:
                return Unreached(
                    source,
                    f"AWS refused the credentials ({one_line(code)}: {one_line(message)}); "
                    "refresh them (aws sso login, or new keys) and run again",
                )
            return Unreached(source, one_line(f"{code or 'error'}: {message}"))
        except (ConnectTimeoutError, ReadTimeoutError, EndpointConnectionError) as failure:
            return Unreached(source, one_line(f"no answer ({failure})"))
        except NoCredentialsError:
            return Unreached(source, "no AWS credentials (profile, environment or role)")
        except BotoCoreError as failure:
            return Unreached(source, one_line(f"{type(failure).__name__}: {failure}"))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return Unreached(source, "an answer with fields of the wrong type or missing")

    return run


def one_line(text: str, most: int = 200) -> str:
    """The first line of `text`, at most `most` characters, control characters escaped."""
    lines = text.strip().splitlines()
    first = lines[0] if lines else ""
    cleaned = "".join(c if c.isprintable() else repr(c)[1:-1] for c in first)
    return cleaned if len(cleaned) <= most else f"{cleaned[: most - 3]}..."


def _throttled(failure: Any) -> bool:
    """Whether botocore's standard retry mode counts the error as throttling."""
    from botocore.retries.standard import RetryContext, ThrottledRetryableChecker

    context = RetryContext(attempt_number=MAX_ATTEMPTS, parsed_response=failure.response)
    return bool(ThrottledRetryableChecker().is_retryable(context))


def _pages(client: Any, operation: str, **params: Any) -> list[dict[str, Any]]:
    return _answer(client, lambda: list(aws_answers.pages(client, operation, **params)))


def _call(client: Any, operation: str, **params: Any) -> dict[str, Any]:
    reply: dict[str, Any] = _answer(client, lambda: getattr(client, operation)(**params))
    return reply


def _answer(client: Any, call: Callable[[], T]) -> T:
    """`call`'s reply; "not found" and "access denied" become NotFound and Denied."""
    from botocore.exceptions import ClientError

    try:
        return call()
    except ClientError as failure:
        details = failure.response.get("Error", {})
        code, message = str(details.get("Code", "")), str(details.get("Message", ""))
        if code in NOT_FOUND:
            raise NotFound(code) from None
        if code in DENIED:
            action = f"{client.meta.service_model.signing_name}:{failure.operation_name}"
            raise Denied(action, f"{code}: {message}") from None
        raise


# The facts, one function per call (or paginated call).


def quota_list(clients: Clients, operation: str) -> dict[str, Quota]:
    """Every SageMaker quota from `list_service_quotas` (applied) or
    `list_aws_default_service_quotas`, keyed by case-folded name."""
    client = clients.client("service-quotas")
    applied = operation == "list_service_quotas"
    found: dict[str, Quota] = {}
    for page in _pages(client, operation, ServiceCode=QUOTA_SERVICE):
        for item in page["Quotas"]:  # a reply without the list is not an empty list
            if (quota := readings.quota(item, applied)) is not None:
                found[quota.name.strip().casefold()] = quota
    return found


def addon_versions(clients: Clients, addon: str) -> tuple[AddonVersion, ...]:
    client = clients.client("eks")
    try:
        return readings.addon_versions(
            _pages(client, "describe_addon_versions", addonName=addon), addon
        )
    except NotFound:
        return ()


def hyperpod_cluster(clients: Clients, name_or_arn: str) -> HyperPodFacts | None:
    client = clients.client("sagemaker")
    try:
        reply = _call(client, "describe_cluster", ClusterName=name_or_arn)
    except NotFound:
        return None
    groups = tuple(
        InstanceGroupFacts(
            name=str(g.get("InstanceGroupName", "")),
            instance_type=str(g.get("InstanceType", "")),
            current_count=_count(g.get("CurrentCount", 0)),
            target_count=_count(g.get("TargetCount", 0)),
            status=str(g.get("Status", "")),
        )
        for g in reply.get("InstanceGroups", [])
    )
    eks = (reply.get("Orchestrator") or {}).get("Eks") or {}
    return HyperPodFacts(
        name=str(reply.get("ClusterName", name_or_arn)),
        status=str(reply["ClusterStatus"]),
        failure_message=str(reply.get("FailureMessage", "")),
        eks_cluster_arn=str(eks.get("ClusterArn", "")),
        groups=groups,
    )


def cluster_nodes(clients: Clients, name_or_arn: str) -> tuple[NodeFacts, ...]:
    client = clients.client("sagemaker")
    try:
        pages = _pages(client, "list_cluster_nodes", ClusterName=name_or_arn)
    except NotFound:
        return ()
    return tuple(
        NodeFacts(
            group=str(node.get("InstanceGroupName", "")),
            instance_type=str(node.get("InstanceType", "")),
            status=str((node.get("InstanceStatus") or {}).get("Status", "")),
        )
        for page in pages
        for node in page["ClusterNodeSummaries"]
    )


def eks_cluster(clients: Clients, name: str) -> EksFacts | None:
    client = clients.client("eks")
    try:
        cluster = _call(client, "describe_cluster", name=name)["cluster"]
    except NotFound:
        return None
    return EksFacts(name, str(cluster["version"]), str(cluster.get("status", "")))


def installed_addon(clients: Clients, cluster: str, addon: str) -> InstalledAddon | None:
    client = clients.client("eks")
    try:
        names = {
            name
            for page in _pages(client, "list_addons", clusterName=cluster)
            for name in page["addons"]
        }
        if addon not in names:
            return None
        found = _call(client, "describe_addon", clusterName=cluster, addonName=addon)["addon"]
    except NotFound:
        return None
    issues = tuple(
        f"{issue.get('code', '')}: {issue.get('message', '')}"
        for issue in (found.get("health") or {}).get("issues", [])
    )
    return InstalledAddon(addon, str(found.get("addonVersion", "")), str(found["status"]), issues)


def gpu_memory(clients: Clients, instance_type: str) -> GpuMemory | None:
    """GPU count and memory per GPU of the type's EC2 twin; None when EC2 has no GPU figures."""
    from botocore.exceptions import ClientError

    client = clients.client("ec2")
    try:
        reply = _call(client, "describe_instance_types", InstanceTypes=[ec2_twin(instance_type)])
    except ClientError as failure:  # a type EC2 does not have is a fact, not a failure
        if failure.response.get("Error", {}).get("Code") == "InvalidInstanceType":
            return None
        raise
    for item in reply["InstanceTypes"]:
        if item.get("InstanceType") != ec2_twin(instance_type):
            continue  # an answer about another type says nothing of this one
        gpus = (item.get("GpuInfo") or {}).get("Gpus") or []
        if gpus:
            memory = gpus[0].get("MemoryInfo", {}).get("SizeInMiB")
            counts = [g.get("Count") for g in gpus]
            if not all(_whole(c, 1, MAX_GPUS) for c in counts):
                return None  # zero, negative or absurd GPU counts: EC2's figure is not used
            count = sum(counts)
            if _whole(memory, 1024, MAX_GPU_MIB) and count <= MAX_GPUS:
                return GpuMemory(count, memory)
    return None


def _count(value: object) -> int:
    """An instance count; a negative or non-whole one makes the answer unreadable."""
    if not _whole(value, 0, 10**6):
        raise ValueError(f"{value!r} is not a count")
    assert isinstance(value, int)
    return value


def _whole(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
