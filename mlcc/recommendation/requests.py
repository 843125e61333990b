"""Request bodies of CreateAIWorkloadConfig and CreateAIRecommendationJob (pure).

Shapes follow the botocore sagemaker model; the tests send them through botocore's Stubber and a
local endpoint that validates them against that model. See docs/optimize.md.
"""

from __future__ import annotations

import json
from typing import Any

from mlcc.config.optimize import OptimizeSettings, framework_for_engine
from mlcc.recommendation.names import JobNames, stack_tags

DATASET_CHANNEL = "dataset"
# `benchmark.type` accepts only aiperf (dev guide, workload config page).
DEFAULT_WORKLOAD_SPEC = json.dumps({"benchmark": {"type": "aiperf"}}, separators=(",", ":"))


def workload_config_request(
    names: JobNames, settings: OptimizeSettings, stack: str
) -> dict[str, Any]:
    request: dict[str, Any] = {
        "AIWorkloadConfigName": names.workload_config,
        "AIWorkloadConfigs": {"WorkloadSpec": {"Inline": DEFAULT_WORKLOAD_SPEC}},
        "Tags": stack_tags(stack),
    }
    if settings.dataset:
        request["DatasetConfig"] = {
            "InputDataConfig": [
                {
                    "ChannelName": DATASET_CHANNEL,
                    "DataSource": {"S3DataSource": {"S3Uri": settings.dataset}},
                }
            ]
        }
    return request


def recommendation_job_request(
    names: JobNames, settings: OptimizeSettings, engine: str, stack: str
) -> dict[str, Any]:
    framework, _ = framework_for_engine(engine)
    request: dict[str, Any] = {
        "AIRecommendationJobName": names.job,
        "ModelSource": {"S3": {"S3Uri": settings.model_s3_uri}},
        "OutputConfig": {"S3OutputLocation": settings.output_location},
        "AIWorkloadConfigIdentifier": names.workload_config,
        "PerformanceTarget": {"Constraints": [{"Metric": settings.metric}]},
        "RoleArn": settings.role_arn,
        "OptimizeModel": True,
        "Tags": stack_tags(stack),
    }
    if framework:
        request["InferenceSpecification"] = {"Framework": framework}
    if settings.instance_types:
        request["ComputeSpec"] = {"InstanceTypes": list(settings.instance_types)}
    return request
