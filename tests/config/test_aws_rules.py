"""The AWS facts `mlcc.config.aws_rules` reads with botocore's loader (not a whole session) are
the ones a botocore session answers: the same regions, shapes and instance types."""

from __future__ import annotations

import gc

import botocore.session
import pytest

from mlcc.config import aws_rules

SHAPES = ("TagList", "TagKey", "TagValue", "ClusterArn", "ClusterName", "BucketName")


@pytest.fixture(scope="module")
def session() -> botocore.session.Session:
    return botocore.session.get_session()


def test_regions_are_the_sessions_sagemaker_regions(session: botocore.session.Session) -> None:
    expected = {
        region
        for partition in session.get_available_partitions()
        for region in session.get_available_regions("sagemaker", partition)
    }
    assert aws_rules.known_regions() == expected
    assert "us-east-1" in expected


@pytest.mark.parametrize("shape", SHAPES)
def test_shape_limits_are_the_sessions(session: botocore.session.Session, shape: str) -> None:
    model = session.get_service_model("sagemaker")
    assert aws_rules._shape_metadata("sagemaker", shape) == model.shape_for(shape).metadata


def test_hyperpod_instance_types_are_the_sessions(session: botocore.session.Session) -> None:
    shape = session.get_service_model("sagemaker").shape_for("ClusterInstanceType")
    assert aws_rules.hyperpod_instance_types() == frozenset(shape.enum)


def test_loading_leaves_the_collector_as_it_was() -> None:
    aws_rules._service_model.cache_clear()
    aws_rules._service_model("sagemaker")
    assert gc.isenabled()
    gc.disable()
    try:
        aws_rules._service_model.cache_clear()
        aws_rules._service_model("sagemaker")
        assert not gc.isenabled()
    finally:
        gc.enable()
