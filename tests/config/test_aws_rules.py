"""The AWS facts `mlcc.config.aws.rules` reads with botocore's loader (not a whole session) are
the ones a botocore session answers: the same regions, shapes and instance types."""

from __future__ import annotations

import gc
import gzip
import json
from pathlib import Path

import botocore.loaders
import botocore.session
import pytest

from mlcc.config.aws import rules as aws_rules

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


@pytest.mark.parametrize("name", ["sagemaker/2017-07-24/service-2", "endpoints"])
def test_the_dict_file_loader_reads_what_botocores_reads(name: str) -> None:
    """Same keys in the same order at every depth: plain dicts for botocore's OrderedDicts.
    Both loaded afresh: the shared loader's endpoints are filled in by the sessions using it."""
    botocores = botocore.loaders.create_loader().load_data(name)
    ours = aws_rules.shared_loader.__wrapped__(None).load_data(name)  # made as shared ones are
    assert json.dumps(ours) == json.dumps(botocores)
    assert type(ours) is dict


def test_a_gzipped_and_a_plain_model_load_alike(tmp_path: Path) -> None:
    data = {"b": 1, "a": {"z": [1, 2], "y": None}}
    (tmp_path / "plain.json").write_text(json.dumps(data), encoding="utf-8")
    with gzip.open(tmp_path / "packed.json.gz", "wt", encoding="utf-8") as packed:
        json.dump(data, packed)
    loader = aws_rules.DictFileLoader()
    for stem in ("plain", "packed"):
        loaded = loader.load_file(str(tmp_path / stem))
        assert json.dumps(loaded) == json.dumps(data)
    assert loader.load_file(str(tmp_path / "absent")) is None
