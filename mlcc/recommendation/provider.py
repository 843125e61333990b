"""The dynamic provider behind `RecommendationJobRun` (declared in
mlcc/components/recommendation_job.py): it runs a SageMaker AI recommendation job and returns
its top recommendation's speculative-decoding settings as outputs.

Lifecycle:
- check: every bad input becomes a CheckFailure naming the input.
- create: find a job under the name derived from the inputs (an interrupted `pulumi up` resumes
  it; a Completed one is adopted; a Failed/Stopped one is deleted and rerun), otherwise create the
  workload config (with the dataset) and the job, both tagged with the stack; poll with capped
  backoff; a Failed job fails the update with the API's FailureReason; a timeout stops the job
  and fails.
- diff: any input except timeout_minutes and stack replaces (reruns the job); those two alone
  update in place and keep the result.
- delete: stop the job if it runs, wait for a terminal state, delete it and its workload config.

The provider is dill-pickled into the state at construction (pulumi/dynamic). It holds only plain
values and module-level functions: boto3 clients are created inside each method. The class is
pickled by reference, so the provider process must be able to import `mlcc` (run `pulumi` from
the project directory with the project's virtualenv).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pulumi import dynamic

from mlcc.config.optimize import (
    ENGINE_FRAMEWORKS,
    FieldError,
    OptimizeSettings,
    parse_optimize_settings,
)
from mlcc.recommendation import api
from mlcc.recommendation.names import STACK_JOB_KIND, JobNames, job_names, stack_name_problem
from mlcc.recommendation.parsing import TERMINAL_STATUSES, JobStatus, top_recommendation
from mlcc.recommendation.polling import (
    Backoff,
    RecommendationJobError,
    require_completed,
    wait_for_job,
)

if TYPE_CHECKING:
    from mypy_boto3_sagemaker.client import SageMakerClient
else:
    SageMakerClient = Any

ClientFactory = Callable[[str | None], SageMakerClient]

# Provider input name -> key inside hp:optimize (validated by mlcc.config.optimize).
SETTINGS_INPUTS: dict[str, str] = {
    "goal": "goal",
    "dataset": "dataset",
    "model_s3_uri": "modelS3Uri",
    "role_arn": "roleArn",
    "instance_types": "instanceTypes",
    "timeout_minutes": "timeoutMinutes",
    "output_s3_uri": "outputS3Uri",
}
OTHER_INPUTS = ("engine", "stack")
INPUT_KEYS = (*SETTINGS_INPUTS, *OTHER_INPUTS)
# Changing these reruns the job. timeout_minutes only changes how long we would wait, and a
# renamed stack keeps the result it paid for.
REPLACE_KEYS = tuple(key for key in INPUT_KEYS if key not in ("timeout_minutes", "stack"))
OUTPUT_KEYS = (
    "job_name",
    "job_arn",
    "workload_config_name",
    "status",
    "algorithm",
    "draft_model",
    "num_tokens",
    "usable",
    "reason",
    "notes",
    "optimization_types",
    "optimization_config",
    "environment_variables",
    "description",
    "expected_performance",
    "instance_type",
    "model_package_arn",
    "artifact_uris",
)
STOP_WAIT_SECONDS = 15 * 60


def default_client_factory(region: str | None) -> SageMakerClient:
    from mlcc.recommendation.api import sagemaker_client  # bounded answers, timeouts, retries

    return sagemaker_client(region)


def _is_unknown(value: Any) -> bool:
    from pulumi.runtime import rpc

    return isinstance(value, str) and value == rpc.UNKNOWN


def settings_from_props(
    props: Mapping[str, Any],
) -> tuple[OptimizeSettings | None, list[FieldError]]:
    """Validate provider inputs with the same rules as hp:optimize; errors name the input."""
    raw = {camel: props.get(snake) for snake, camel in SETTINGS_INPUTS.items()}
    settings, errors = parse_optimize_settings({k: v for k, v in raw.items() if v is not None})
    to_input = {camel: snake for snake, camel in SETTINGS_INPUTS.items()}
    return settings, [FieldError(to_input.get(e.key, e.key), e.message) for e in errors]


def engine_error(engine: Any) -> str | None:
    if engine is None or str(engine).lower() not in ENGINE_FRAMEWORKS:
        return f"{engine!r} is not an engine; one of {', '.join(ENGINE_FRAMEWORKS)}"
    return None


class RecommendationJobProvider(dynamic.ResourceProvider):
    """CRUD for one recommendation job. Injectables exist for tests; defaults pickle by name."""

    def __init__(
        self,
        client_factory: ClientFactory | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        backoff: Backoff | None = None,
    ) -> None:
        super().__init__()
        self._client_factory = client_factory
        self._clock = clock
        self._sleep = sleep
        self._backoff = backoff or Backoff()
        self._region: str | None = None

    def configure(self, req: dynamic.ConfigureRequest) -> None:
        region = req.config.get("aws:region")
        self._region = str(region) if region else None

    # -- check / diff / update ---------------------------------------------------------------

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> dynamic.CheckResult:
        known = {k: v for k, v in news.items() if not _is_unknown(v)}
        failures: list[dynamic.CheckFailure] = []
        if all(not _is_unknown(news.get(key)) for key in SETTINGS_INPUTS):
            settings, errors = settings_from_props(known)
            failures += [dynamic.CheckFailure(e.key, e.message) for e in errors]
            if settings is not None:
                news = {**news, **_settings_props(settings)}
        if "engine" in known and (message := engine_error(known.get("engine"))):
            failures.append(dynamic.CheckFailure("engine", message))
        elif "engine" in known:
            news = {**news, "engine": str(known["engine"]).lower()}
        if "stack" in known and (message := stack_name_problem(str(known.get("stack") or ""))):
            failures.append(dynamic.CheckFailure("stack", message))
        return dynamic.CheckResult(news, failures)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> dynamic.DiffResult:
        replaces = [k for k in REPLACE_KEYS if _normalised(olds.get(k)) != _normalised(news.get(k))]
        changed = replaces or [
            k for k in INPUT_KEYS if _normalised(olds.get(k)) != _normalised(news.get(k))
        ]
        return dynamic.DiffResult(
            changes=bool(changed), replaces=replaces, delete_before_replace=False
        )

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> dynamic.UpdateResult:
        # Only inputs that do not rerun the job reach update (see diff): keep the result.
        outs = {key: olds.get(key) for key in OUTPUT_KEYS}
        return dynamic.UpdateResult({**news, **outs})

    # -- create / delete ---------------------------------------------------------------------

    def create(self, props: dict[str, Any]) -> dynamic.CreateResult:
        request = job_request(props)
        settings, names = request.settings, request.names
        client = self._client()
        response = self._resume_or_start(client, request)
        if response.get("AIRecommendationJobStatus") not in TERMINAL_STATUSES:
            response = wait_for_job(
                names.job,
                lambda: _describe_existing(client, names.job),
                timeout_seconds=settings.timeout_minutes * 60,
                clock=self._clock,
                sleep=self._sleep,
                stop=lambda: api.stop_job(client, names.job),
                backoff=self._backoff,
            )
        require_completed(response)
        result = top_recommendation(response)
        outs = {
            **{k: props.get(k) for k in INPUT_KEYS},
            **result.outputs(),
            "workload_config_name": names.workload_config,
        }
        return dynamic.CreateResult(names.job, outs)

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        client = self._client()
        job = str(props.get("job_name") or _id)
        response = api.describe_job(client, job)
        if (
            response is not None
            and response.get("AIRecommendationJobStatus") == JobStatus.IN_PROGRESS
        ):
            api.stop_job(client, job)
        if (
            response is not None
            and response.get("AIRecommendationJobStatus") != JobStatus.COMPLETED
        ):
            self._wait_until_terminal(client, job)
        api.delete_job(client, job)
        workload = props.get("workload_config_name")
        if workload:
            api.delete_workload_config(client, str(workload))

    # -- helpers -----------------------------------------------------------------------------

    def _client(self) -> SageMakerClient:
        region = (
            self._region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        )
        if not region:
            raise RuntimeError(
                "no AWS region for the recommendation job: set aws:region in the stack "
                "(pulumi config set aws:region us-east-1) or AWS_REGION"
            )
        factory = self._client_factory or default_client_factory
        return factory(region)

    def _resume_or_start(self, client: SageMakerClient, request: JobRequest) -> Mapping[str, Any]:
        names = request.names
        existing = api.describe_job(client, names.job)
        status = existing.get("AIRecommendationJobStatus") if existing else None
        if existing is not None and status in (JobStatus.IN_PROGRESS, JobStatus.COMPLETED):
            return existing
        if status == JobStatus.STOPPING:
            raise RecommendationJobError(
                f"recommendation job {names.job} from an earlier run is still stopping; "
                "run the update again in a few minutes"
            )
        if status in (JobStatus.FAILED, JobStatus.STOPPED):
            api.delete_job(client, names.job)
            api.delete_workload_config(client, names.workload_config)
        api.start_job(client, names, request.settings, request.engine, request.stack)
        return {
            "AIRecommendationJobName": names.job,
            "AIRecommendationJobStatus": JobStatus.IN_PROGRESS,
        }

    def _wait_until_terminal(self, client: SageMakerClient, job: str) -> None:
        def stop_gave_up() -> None:
            raise RecommendationJobError(
                f"recommendation job {job} did not stop within {STOP_WAIT_SECONDS // 60} "
                "minutes; run the delete again later"
            )

        wait_for_job(
            job,
            lambda: (
                api.describe_job(client, job) or {"AIRecommendationJobStatus": JobStatus.STOPPED}
            ),
            timeout_seconds=STOP_WAIT_SECONDS,
            clock=self._clock,
            sleep=self._sleep,
            stop=stop_gave_up,
            backoff=self._backoff,
        )


@dataclass(frozen=True)
class JobRequest:
    """Validated provider inputs and the job names they give."""

    settings: OptimizeSettings
    engine: str
    stack: str
    names: JobNames


def job_request(props: Mapping[str, Any]) -> JobRequest:
    settings, errors = settings_from_props(props)
    engine = str(props.get("engine", "")).lower()
    stack = str(props.get("stack") or "")
    problems = [f"{e.key}: {e.message}" for e in errors]
    if message := engine_error(engine):
        problems.append(f"engine: {message}")
    if message := stack_name_problem(stack):
        problems.append(f"stack: {message}")
    if settings is None or problems:
        raise ValueError("invalid recommendation inputs: " + "; ".join(problems))
    names = job_names(stack, STACK_JOB_KIND, job_salt(settings, engine))
    return JobRequest(settings, engine, stack, names)


def _describe_existing(client: SageMakerClient, job: str) -> Mapping[str, Any]:
    response = api.describe_job(client, job)
    if response is None:
        raise RecommendationJobError(
            f"recommendation job {job} disappeared while we waited (deleted outside Pulumi?)"
        )
    return response


def job_salt(settings: OptimizeSettings, engine: str) -> str:
    """What makes a job different: everything except how long we wait for it."""
    import json

    fields = {**settings.to_mapping(), "engine": engine}
    fields.pop("timeoutMinutes")
    return json.dumps(fields, sort_keys=True)


def job_inputs(settings: OptimizeSettings, engine: str, stack: str) -> dict[str, Any]:
    """The provider inputs for one job, plus every output as None (pulumi/pulumi#6678: only
    keys present in the inputs are exposed as outputs)."""
    return {
        **_settings_props(settings),
        "engine": engine,
        "stack": stack,
        **dict.fromkeys(OUTPUT_KEYS),
    }


def _settings_props(settings: OptimizeSettings) -> dict[str, Any]:
    mapping = settings.to_mapping()
    return {snake: mapping.get(camel) for snake, camel in SETTINGS_INPUTS.items()}


def _normalised(value: Any) -> Any:
    if value in ("", None, [], ()):
        return None
    if isinstance(value, (list, tuple)):
        return tuple(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
