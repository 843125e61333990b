"""Pure helpers of the infrastructure components: policies, image tags, kubeconfig, values."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlcc.components import operator
from mlcc.components.cluster import hyperpod, iam_policies
from mlcc.components.cluster.existing import Described, describe, kubeconfig
from mlcc.components.images import content_tag, context_files
from mlcc.serving.engines import Engine

REPO = Path(__file__).resolve().parents[2]
PROVIDER = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC"


def test_irsa_trust_names_exactly_one_service_account_and_the_audience() -> None:
    trust = iam_policies.irsa_trust(
        PROVIDER,
        "https://oidc.eks.us-east-1.amazonaws.com/id/ABC",
        ["system:serviceaccount:kube-system:s3-csi-driver-sa"],
    )
    assert trust == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Federated": PROVIDER},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        "oidc.eks.us-east-1.amazonaws.com/id/ABC:sub": (
                            "system:serviceaccount:kube-system:s3-csi-driver-sa"
                        ),
                        "oidc.eks.us-east-1.amazonaws.com/id/ABC:aud": "sts.amazonaws.com",
                    }
                },
            }
        ],
    }


def test_irsa_trust_can_also_trust_a_service() -> None:
    trust = iam_policies.irsa_trust(
        PROVIDER, "oidc.example/id/1", ["s"], services=["sagemaker.amazonaws.com"]
    )
    statements = trust["Statement"]
    assert isinstance(statements, list)
    assert statements[1] == {
        "Effect": "Allow",
        "Principal": {"Service": "sagemaker.amazonaws.com"},
        "Action": "sts:AssumeRole",
    }


@pytest.mark.parametrize(
    ("image", "arn"),
    [
        (
            "123456789012.dkr.ecr.us-east-1.amazonaws.com/hp-dev/vllm@sha256:" + "a" * 64,
            "arn:aws:ecr:us-east-1:123456789012:repository/hp-dev/vllm",
        ),
        (
            "763104351884.dkr.ecr.us-west-2.amazonaws.com/djl-inference:0.32.0",
            "arn:aws:ecr:us-west-2:763104351884:repository/djl-inference",
        ),
        ("vllm/vllm-openai:v0.27.1", None),
    ],
)
def test_ecr_repository_arn_of_an_image(image: str, arn: str | None) -> None:
    assert iam_policies.ecr_repository_arn(image) == arn


def test_ecr_pull_names_the_repositories_and_only_the_token_call_is_unscoped() -> None:
    statements = iam_policies.ecr_pull(["arn:aws:ecr:us-east-1:1:repository/a"])["Statement"]
    assert isinstance(statements, list)
    wildcard = [s for s in statements if s["Resource"] == "*"]
    assert [s["Action"] for s in wildcard] == ["ecr:GetAuthorizationToken"]
    assert statements[1]["Resource"] == ["arn:aws:ecr:us-east-1:1:repository/a"]


def _copy_context(tmp_path: Path) -> Path:
    """A repository-shaped build context: .dockerignore, the copied files, both image folders."""
    (tmp_path / ".dockerignore").write_text("*\n!images/serve/serve.py\n!mlcc/engine_contract.py\n")
    for part in ("images/serve", "images/vllm", "images/sglang", "mlcc"):
        (tmp_path / part).mkdir(parents=True)
    (tmp_path / "images" / "serve" / "serve.py").write_text("print('serve')\n")
    (tmp_path / "mlcc" / "engine_contract.py").write_text("VLLM = 'vllm'\n")
    (tmp_path / "mlcc" / "config.py").write_text("# not in the image\n")
    (tmp_path / "images" / "vllm" / "Dockerfile").write_text("FROM vllm/vllm-openai:v0.27.1\n")
    (tmp_path / "images" / "sglang" / "Dockerfile").write_text("FROM lmsysorg/sglang:v0.5.17\n")
    return tmp_path / "images"


def test_content_tag_is_stable_and_changes_with_what_goes_into_the_image(tmp_path: Path) -> None:
    images = _copy_context(tmp_path)
    args = {"ENGINE_VERSION": "0.27.1"}
    tag = content_tag(images, Engine.VLLM, args)
    assert tag.startswith("0.27.1-") and len(tag) == len("0.27.1-") + 16
    assert content_tag(images, Engine.VLLM, args) == tag
    (images / "sglang" / "Dockerfile").write_text("FROM lmsysorg/sglang:v0.5.23\n")
    (images / "serve" / "__pycache__").mkdir()
    (images / "serve" / "__pycache__" / "serve.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / "mlcc" / "config.py").write_text("# changed, still not in the image\n")
    assert content_tag(images, Engine.VLLM, args) == tag  # not in this image: no rebuild
    assert content_tag(images, Engine.VLLM, {"ENGINE_VERSION": "0.34.0"}) != tag
    (images / "serve" / "serve.py").write_text("print('serve v2')\n")
    tag_v2 = content_tag(images, Engine.VLLM, args)
    assert tag_v2 != tag
    (tmp_path / "mlcc" / "engine_contract.py").write_text("VLLM = 'vllm'  # v2\n")
    assert content_tag(images, Engine.VLLM, args) != tag_v2


def test_context_files_are_the_engine_folder_and_what_dockerignore_lets_in() -> None:
    names = [p.relative_to(REPO).as_posix() for p in context_files(REPO / "images", Engine.SGLANG)]
    assert names == [
        ".dockerignore",
        "images/serve/serve.py",
        "images/sglang/Dockerfile",
        *(
            f"mlcc/engine_contract/{name}"
            for name in (
                "__init__.py",
                "algorithms.py",
                "engine_flags.json",
                "env.py",
                "flag_tables.py",
                "flags.py",
                "names.py",
                "schedule.py",
                "validation.py",
                "values.py",
            )
        ),
    ]


def test_kubeconfig_uses_aws_eks_get_token_and_holds_no_credentials() -> None:
    config = kubeconfig(cluster_name="c", endpoint="https://e", ca_data="Q0E=", region="us-west-2")
    user = config["users"][0]["user"]
    assert user == {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "aws",
            "args": ["eks", "get-token", "--cluster-name", "c", "--region", "us-west-2"],
        }
    }
    assert config["clusters"][0]["cluster"] == {
        "server": "https://e",
        "certificate-authority-data": "Q0E=",
    }


def test_describe_reads_the_orchestrator_and_the_instance_groups() -> None:
    import boto3
    from botocore.stub import Stubber

    client = boto3.client(
        "sagemaker", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y"
    )
    eks_arn = "arn:aws:eks:us-east-1:123456789012:cluster/ml"
    role = "arn:aws:iam::123456789012:role/hp-nodes"
    group = {
        "InstanceGroupName": "g5",
        "InstanceType": "ml.g5.12xlarge",
        "CurrentCount": 1,
        "TargetCount": 1,
        "ExecutionRole": role,
        "LifeCycleConfig": {"SourceS3Uri": "s3://b/", "OnCreate": "on_create.sh"},
    }
    with Stubber(client) as stub:
        stub.add_response(
            "describe_cluster",
            {
                "ClusterArn": "arn:aws:sagemaker:us-east-1:123456789012:cluster/abc123",
                "ClusterStatus": "InService",
                "InstanceGroups": [group, {**group, "InstanceGroupName": "g5b"}],
                "Orchestrator": {"Eks": {"ClusterArn": eks_arn}},
            },
            {"ClusterName": "my-hyperpod"},
        )
        assert describe("my-hyperpod", client) == Described(eks_arn, [role], ["ml.g5.12xlarge"])


def test_repository_policy_lets_the_nodes_pull_and_denies_plain_http() -> None:
    role = "arn:aws:iam::123456789012:role/hp-nodes"
    statements = iam_policies.ecr_repository_pull([role, role])["Statement"]
    assert isinstance(statements, list)
    assert statements[0]["Effect"] == "Deny"
    assert statements[1]["Principal"] == {"AWS": [role]}
    assert statements[1]["Action"] == [
        "ecr:BatchCheckLayerAvailability",
        "ecr:BatchGetImage",
        "ecr:GetDownloadUrlForLayer",
    ]
    assert len(iam_policies.ecr_repository_pull([])["Statement"]) == 1  # type: ignore[arg-type]


def test_addon_configuration_has_the_documented_shape() -> None:
    assert operator.addon_configuration(
        execution_role_arn="arn:e",
        tls_bucket="tls",
        hyperpod_cluster_arn="arn:h",
        alb_role_arn="arn:alb",
        keda_role_arn="arn:keda",
    ) == {
        "executionRoleArn": "arn:e",
        "tlsCertificateS3Bucket": "tls",
        "hyperpodClusterArn": "arn:h",
        "alb": {"enabled": True, "serviceAccount": {"create": True, "roleArn": "arn:alb"}},
        "keda": {
            "enabled": True,
            "auth": {"aws": {"irsa": {"enabled": True, "roleArn": "arn:keda"}}},
        },
    }


def test_execution_role_name_keeps_the_add_on_prefix_within_64_characters() -> None:
    name = operator.execution_role_name("hp-" + "x" * 80)
    assert name.startswith("SageMakerHyperPodInference-") and len(name) == 64


def test_device_plugins_tolerate_the_health_taint_and_target_the_group_types() -> None:
    values = hyperpod.nvidia_plugin_values(["ml.g5.12xlarge", "ml.p5.48xlarge", "ml.g5.12xlarge"])
    assert hyperpod.HEALTH_TAINT_TOLERATION in values["tolerations"]  # type: ignore[operator]
    terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]  # type: ignore[index]
    assert terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == [
        "ml.g5.12xlarge",
        "ml.p5.48xlarge",
    ]
    assert hyperpod.efa_instance_types(["ml.g5.12xlarge", "ml.p5.48xlarge"]) == ["ml.p5.48xlarge"]


def test_lifecycle_script_passes_shellcheck() -> None:
    script = REPO / "infra" / "lifecycle" / "on_create.sh"
    shellcheck = shutil.which("shellcheck", path=str(Path(sys.executable).parent)) or "shellcheck"
    result = subprocess.run(
        [shellcheck, "--severity=style", str(script)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout
    assert script.read_text().startswith("#!/bin/bash\n")
    assert "set -euo pipefail" in script.read_text()


def test_a_cluster_name_that_cannot_be_looked_up_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import boto3
    import pulumi
    from botocore.stub import Stubber

    from mlcc.components.cluster import existing as existing_cluster

    client = boto3.client(
        "sagemaker", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y"
    )
    monkeypatch.setattr(boto3, "client", lambda *_args, **_kwargs: client)
    with Stubber(client) as stub:
        stub.add_client_error("describe_cluster", "ResourceNotFound", "Cluster not found")
        with pytest.raises(pulumi.RunError, match=r"^hp:clusterName: cannot look up"):
            existing_cluster.lookup("missing")


@pytest.mark.parametrize(
    "version", ["v1.18.3-eksbuild.1", "v1.20.4-eksbuild.2", "v2.0.0-eksbuild.1"]
)
def test_vpc_cni_versions_hyperpod_accepts(version: str) -> None:
    from mlcc.components.cluster.eks import supported_vpc_cni

    assert supported_vpc_cni(version) == version


@pytest.mark.parametrize("version", ["v1.18.2-eksbuild.1", "v1.9.30-eksbuild.1", "latest"])
def test_vpc_cni_versions_hyperpod_refuses(version: str) -> None:
    from mlcc.components.cluster.eks import supported_vpc_cni

    with pytest.raises(ValueError, match="HyperPod needs"):
        supported_vpc_cni(version)


def test_image_paths_are_relative_to_the_project_folder_and_absolute_outside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlcc.components.images import project_path

    monkeypatch.chdir(tmp_path)
    assert project_path(tmp_path) == "."
    assert project_path(tmp_path / "images" / "vllm" / "Dockerfile") == "images/vllm/Dockerfile"
    assert project_path(tmp_path.parent) == str(tmp_path.parent)
