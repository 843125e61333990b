"""`SpeculativeRecommendation`: a Pulumi dynamic resource that runs a SageMaker AI recommendation
job and exposes its top recommendation's speculative-decoding settings.

Lifecycle:
- check: every bad input becomes a CheckFailure naming the input.
- create: find a job under the name derived from the inputs (an interrupted `pulumi up` resumes
  it; a Completed one is adopted; a Failed/Stopped one is deleted and rerun), otherwise create the
  workload config (with the dataset) and the job; poll with capped backoff; a Failed job fails the
  update with the API's FailureReason; a timeout stops the job and fails.
- diff: any input except timeoutMinutes replaces (reruns the job); timeoutMinutes alone updates.
- delete: stop the job if it runs, wait for a terminal state, delete it and its workload config.

The provider is dill-pickled into the state at construction (pulumi/dynamic). It holds only plain
values and module-level functions: boto3 clients are created inside each method. The class is
pickled by reference, so the provider process must be able to import `mlcc` (run `pulumi` from
the project directory with the project's virtualenv).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi import dynamic

from mlcc import recommendation as rec
from mlcc import recommendation_jobs as jobs

if TYPE_CHECKING:
    from mypy_boto3_sagemaker.client import SageMakerClient
else:
    SageMakerClient = Any

ClientFactory = Callable[[str | None], SageMakerClient]

# Provider input name -> key inside hp:optimize (validated by mlcc.recommendation).
SETTINGS_INPUTS: dict[str, str] = {
    "goal": "goal",
    "dataset": "dataset",
    "model_s3_uri": "modelS3Uri",
    "role_arn": "roleArn",
    "instance_types": "instanceTypes",
    "timeout_minutes": "timeoutMinutes",
    "output_s3_uri": "outputS3Uri",
}
OTHER_INPUTS = ("engine", "name_prefix")
INPUT_KEYS = (*SETTINGS_INPUTS, *OTHER_INPUTS)
# Changing these reruns the job; timeout_minutes only changes how long we would wait.
REPLACE_KEYS = tuple(key for key in INPUT_KEYS if key != "timeout_minutes")
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
DEFAULT_NAME_PREFIX = "mlcc-speculative"
STOP_WAIT_SECONDS = 15 * 60


def default_client_factory(region: str | None) -> SageMakerClient:
    import boto3

    return boto3.client("sagemaker", region_name=region)


def _is_unknown(value: Any) -> bool:
    from pulumi.runtime import rpc

    return isinstance(value, str) and value == rpc.UNKNOWN


def settings_from_props(
    props: Mapping[str, Any],
) -> tuple[rec.OptimizeSettings | None, list[rec.FieldError]]:
    """Validate provider inputs with the same rules as hp:optimize; errors name the input."""
    raw = {camel: props.get(snake) for snake, camel in SETTINGS_INPUTS.items()}
    settings, errors = rec.parse_optimize_settings({k: v for k, v in raw.items() if v is not None})
    to_input = {camel: snake for snake, camel in SETTINGS_INPUTS.items()}
    return settings, [rec.FieldError(to_input.get(e.key, e.key), e.message) for e in errors]


def engine_error(engine: Any) -> str | None:
    if engine is None or str(engine).lower() not in rec.ENGINE_FRAMEWORKS:
        return f"{engine!r} is not an engine; one of {', '.join(rec.ENGINE_FRAMEWORKS)}"
    return None


class RecommendationProvider(dynamic.ResourceProvider):
    """CRUD for one recommendation job. Injectables exist for tests; defaults pickle by name."""

    def __init__(
        self,
        client_factory: ClientFactory | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        backoff: rec.Backoff | None = None,
    ) -> None:
        super().__init__()
        self._client_factory = client_factory
        self._clock = clock
        self._sleep = sleep
        self._backoff = backoff or rec.Backoff()
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
        settings, engine, names = self._request(props)
        client = self._client()
        response = self._resume_or_start(client, names, settings, engine)
        if response.get("AIRecommendationJobStatus") not in rec.TERMINAL_STATUSES:
            response = rec.wait_for_job(
                names.job,
                lambda: _describe_existing(client, names.job),
                timeout_seconds=settings.timeout_minutes * 60,
                clock=self._clock,
                sleep=self._sleep,
                stop=lambda: jobs.stop_job(client, names.job),
                backoff=self._backoff,
            )
        rec.require_completed(response)
        result = rec.top_recommendation(response)
        outs = {
            **{k: props.get(k) for k in INPUT_KEYS},
            **result.outputs(),
            "workload_config_name": names.workload_config,
        }
        return dynamic.CreateResult(names.job, outs)

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        client = self._client()
        job = str(props.get("job_name") or _id)
        response = jobs.describe_job(client, job)
        if (
            response is not None
            and response.get("AIRecommendationJobStatus") == rec.JobStatus.IN_PROGRESS
        ):
            jobs.stop_job(client, job)
        if (
            response is not None
            and response.get("AIRecommendationJobStatus") != rec.JobStatus.COMPLETED
        ):
            self._wait_until_terminal(client, job)
        jobs.delete_job(client, job)
        workload = props.get("workload_config_name")
        if workload:
            jobs.delete_workload_config(client, str(workload))

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

    def _request(self, props: Mapping[str, Any]) -> tuple[rec.OptimizeSettings, str, jobs.JobNames]:
        settings, errors = settings_from_props(props)
        engine = str(props.get("engine", "")).lower()
        problems = [f"{e.key}: {e.message}" for e in errors]
        if message := engine_error(engine):
            problems.append(f"engine: {message}")
        if settings is None or problems:
            raise ValueError("invalid recommendation inputs: " + "; ".join(problems))
        base = str(props.get("name_prefix") or DEFAULT_NAME_PREFIX)
        return settings, engine, jobs.JobNames.derive(base, job_salt(settings, engine))

    def _resume_or_start(
        self,
        client: SageMakerClient,
        names: jobs.JobNames,
        settings: rec.OptimizeSettings,
        engine: str,
    ) -> Mapping[str, Any]:
        existing = jobs.describe_job(client, names.job)
        status = existing.get("AIRecommendationJobStatus") if existing else None
        if existing is not None and status in (rec.JobStatus.IN_PROGRESS, rec.JobStatus.COMPLETED):
            return existing
        if status == rec.JobStatus.STOPPING:
            raise rec.RecommendationJobError(
                f"recommendation job {names.job} from an earlier run is still stopping; "
                "run the update again in a few minutes"
            )
        if status in (rec.JobStatus.FAILED, rec.JobStatus.STOPPED):
            jobs.delete_job(client, names.job)
            jobs.delete_workload_config(client, names.workload_config)
        jobs.start_job(client, names, settings, engine)
        return {
            "AIRecommendationJobName": names.job,
            "AIRecommendationJobStatus": rec.JobStatus.IN_PROGRESS,
        }

    def _wait_until_terminal(self, client: SageMakerClient, job: str) -> None:
        def stop_gave_up() -> None:
            raise rec.RecommendationJobError(
                f"recommendation job {job} did not stop within {STOP_WAIT_SECONDS // 60} "
                "minutes; run the delete again later"
            )

        rec.wait_for_job(
            job,
            lambda: (
                jobs.describe_job(client, job)
                or {"AIRecommendationJobStatus": rec.JobStatus.STOPPED}
            ),
            timeout_seconds=STOP_WAIT_SECONDS,
            clock=self._clock,
            sleep=self._sleep,
            stop=stop_gave_up,
            backoff=self._backoff,
        )


def _describe_existing(client: SageMakerClient, job: str) -> Mapping[str, Any]:
    response = jobs.describe_job(client, job)
    if response is None:
        raise rec.RecommendationJobError(
            f"recommendation job {job} disappeared while we waited (deleted outside Pulumi?)"
        )
    return response


def job_salt(settings: rec.OptimizeSettings, engine: str) -> str:
    """What makes a job different: everything except how long we wait for it."""
    import json

    fields = {**settings.to_mapping(), "engine": engine}
    fields.pop("timeoutMinutes")
    return json.dumps(fields, sort_keys=True)


def _settings_props(settings: rec.OptimizeSettings) -> dict[str, Any]:
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


class SpeculativeRecommendationArgs:
    """Inputs of SpeculativeRecommendation; Pulumi inputs are accepted where it makes sense."""

    def __init__(
        self,
        *,
        goal: pulumi.Input[str],
        model_s3_uri: pulumi.Input[str],
        role_arn: pulumi.Input[str],
        engine: pulumi.Input[str],
        dataset: pulumi.Input[str] | None = None,
        instance_types: Sequence[str] = (),
        timeout_minutes: int = rec.DEFAULT_TIMEOUT_MINUTES,
        output_s3_uri: pulumi.Input[str] | None = None,
        name_prefix: str = DEFAULT_NAME_PREFIX,
    ) -> None:
        self.goal = goal
        self.model_s3_uri = model_s3_uri
        self.role_arn = role_arn
        self.engine = engine
        self.dataset = dataset
        self.instance_types = list(instance_types)
        self.timeout_minutes = timeout_minutes
        self.output_s3_uri = output_s3_uri
        self.name_prefix = name_prefix

    @staticmethod
    def from_settings(
        settings: rec.OptimizeSettings, engine: str, name_prefix: str = DEFAULT_NAME_PREFIX
    ) -> SpeculativeRecommendationArgs:
        return SpeculativeRecommendationArgs(
            goal=settings.goal.value,
            model_s3_uri=settings.model_s3_uri,
            role_arn=settings.role_arn,
            engine=engine,
            dataset=settings.dataset,
            instance_types=settings.instance_types,
            timeout_minutes=settings.timeout_minutes,
            output_s3_uri=settings.output_s3_uri,
            name_prefix=name_prefix,
        )

    def to_props(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in INPUT_KEYS}


class SpeculativeRecommendation(dynamic.Resource, module="hp", name="SpeculativeRecommendation"):
    """The top recommendation of a SageMaker AI recommendation job, in speculative terms."""

    job_name: pulumi.Output[str]
    job_arn: pulumi.Output[str]
    workload_config_name: pulumi.Output[str]
    status: pulumi.Output[str]
    algorithm: pulumi.Output[str | None]
    draft_model: pulumi.Output[str | None]
    num_tokens: pulumi.Output[int | None]
    usable: pulumi.Output[bool]
    reason: pulumi.Output[str | None]
    notes: pulumi.Output[list[str]]
    optimization_types: pulumi.Output[list[str]]
    optimization_config: pulumi.Output[dict[str, str]]
    environment_variables: pulumi.Output[dict[str, str]]
    description: pulumi.Output[str | None]
    expected_performance: pulumi.Output[list[dict[str, Any]]]
    instance_type: pulumi.Output[str | None]
    model_package_arn: pulumi.Output[str | None]
    artifact_uris: pulumi.Output[list[str]]

    def __init__(
        self,
        resource_name: str,
        args: SpeculativeRecommendationArgs,
        opts: pulumi.ResourceOptions | None = None,
        provider: RecommendationProvider | None = None,
    ) -> None:
        # Outputs must be present (as None) in props to be exposed (pulumi/pulumi#6678).
        props = {**args.to_props(), **dict.fromkeys(OUTPUT_KEYS)}
        super().__init__(provider or RecommendationProvider(), resource_name, props, opts)
