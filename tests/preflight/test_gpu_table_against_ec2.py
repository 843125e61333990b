"""The vendored GPU table agrees with EC2 DescribeInstanceTypes for every type both know.

The EC2 side is a recorded real reply (tests/preflight/fixtures/describe_instance_types.json,
its source inside), which is also what the local AWS answers in the account tests; here it is
first checked against botocore's output shape, so it is a reply the API can give.
"""

from __future__ import annotations

from aws_accounts import RECORDED_EC2
from local_aws import MODELS, shape_violations

from mlcc.config.aws import instances
from mlcc.preflight.account.facts import ec2_twin
from mlcc.preflight.gpus import gpu_spec

RECORDED = RECORDED_EC2["reply"]["InstanceTypes"]


def test_the_recorded_reply_has_the_shape_of_describe_instance_types() -> None:
    shape = MODELS["ec2"].operation_model("DescribeInstanceTypes").output_shape
    assert shape_violations(RECORDED_EC2["reply"], shape, "DescribeInstanceTypes") == []


def test_every_type_both_know_has_the_same_gpu_memory_and_count() -> None:
    compared = []
    for item in RECORDED:
        instance_type = f"ml.{item['InstanceType']}"
        assert ec2_twin(instance_type) == item["InstanceType"]
        spec = gpu_spec(instance_type)
        if spec is None:
            continue
        (gpus,) = item["GpuInfo"]["Gpus"]
        assert (instance_type, spec.memory_mib) == (instance_type, gpus["MemoryInfo"]["SizeInMiB"])
        assert instances.gpu_count(instance_type) == gpus["Count"]
        assert gpus["Name"] in spec.name
        compared.append(instance_type)
    assert compared == ["ml.g4dn.8xlarge", "ml.g5.12xlarge", "ml.p5.48xlarge"]
