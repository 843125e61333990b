"""Create mode under Pulumi's mocks: every resource with its type token and key inputs.

`check_*` functions hold the assertions; `test_checks_catch_*` prove that they fail when an
input is missing or mistyped (the program is run again with a deliberate mistake).
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from program_runs import CR_TYPE, run_main

import mlcc.components.operator as operator_module
from mlcc.plan import mocks as offline
from mlcc.serving.engines import PINNED_VERSIONS, Engine

REPO = Path(__file__).resolve().parents[2]
ACCOUNT, REGION = offline.ACCOUNT_ID, offline.REGION
ISSUER = f"oidc.eks.{REGION}.amazonaws.com/id/MOCKOIDC0123456789"
OIDC_PROVIDER = f"arn:aws:iam::{ACCOUNT}:oidc-provider/{ISSUER}"
EKS_ARN = f"arn:aws:eks:{REGION}:{ACCOUNT}:cluster/hp-dev"
DEFAULT_TAGS = {"project": "hp", "stack": "dev", "managed-by": "pulumi", "team": "ml-platform"}


@pytest.fixture(scope="module")
def run() -> offline.OfflineRun:
    return run_main()


def named(run: offline.OfflineRun, type_token: str, name: str) -> offline.Registration:
    found = [r for r in run.of_type(type_token) if r.name == name]
    assert len(found) == 1, f"expected one {type_token} named {name}, found {len(found)}"
    return found[0]


def test_resources_and_type_tokens(run: offline.OfflineRun) -> None:
    counts = Counter(r.type for r in run.registrations)
    assert len(set((r.type, r.name) for r in run.registrations)) == len(run.registrations)
    expected = {
        "hp:index:Network": 1,
        "hp:index:EksCluster": 1,
        "hp:index:HyperPodCluster": 1,
        "hp:index:InferenceOperator": 1,
        "hp:index:ServeImage": 1,
        "hp:index:InferenceEndpoint": 1,
        "aws:ec2/vpc:Vpc": 1,
        "aws:ec2/subnet:Subnet": 4,
        "aws:ec2/internetGateway:InternetGateway": 1,
        "aws:ec2/natGateway:NatGateway": 1,
        "aws:ec2/eip:Eip": 1,
        "aws:ec2/routeTable:RouteTable": 3,
        "aws:ec2/routeTableAssociation:RouteTableAssociation": 4,
        "aws:ec2/vpcEndpoint:VpcEndpoint": 1,
        "eks:index:Cluster": 1,
        "eks:index:ManagedNodeGroup": 1,
        "pulumi:providers:kubernetes": 1,
        "aws:eks/addon:Addon": 6,
        "aws-native:sagemaker:Cluster": 1,
        "kubernetes:helm.sh/v3:Release": 1,
        "aws:s3/bucket:Bucket": 2,
        "aws:s3/bucketObjectv2:BucketObjectv2": 1,
        "aws:ecr/repository:Repository": 1,
        "docker-build:index:Image": 1,
        "aws:iam/role:Role": 7,
        CR_TYPE: 1,
    }
    assert {t: counts[t] for t in expected} == expected


def check_eks(run: offline.OfflineRun) -> None:
    cluster = run.one("eks:index:Cluster").inputs
    assert cluster["name"] == "hp-dev"
    assert cluster["authenticationMode"] == "API_AND_CONFIG_MAP"
    assert cluster["version"] == "1.33"
    assert cluster["createOidcProvider"] is True
    assert cluster["skipDefaultNodeGroup"] is True
    assert cluster["useDefaultVpcCni"] is False
    assert cluster["vpcCniOptions"]["addonVersion"] == "v1.20.4-eksbuild.2"
    assert cluster["corednsAddonOptions"]["enabled"] is True
    assert cluster["kubeProxyAddonOptions"]["enabled"] is True
    assert cluster["privateSubnetIds"] == ["network-private-0-id", "network-private-1-id"]
    nodes = run.one("eks:index:ManagedNodeGroup").inputs
    assert nodes["amiType"] == "AL2023_x86_64_STANDARD"
    assert nodes["instanceTypes"] == ["m5.xlarge"]
    assert nodes["scalingConfig"] == {"minSize": 2, "desiredSize": 2, "maxSize": 3}
    addons = {r.inputs["addonName"]: r.inputs for r in run.of_type("aws:eks/addon:Addon")}
    assert addons["eks-pod-identity-agent"]["clusterName"] == "hp-dev"


def test_eks(run: offline.OfflineRun) -> None:
    check_eks(run)


def check_hyperpod(run: offline.OfflineRun) -> None:
    cluster = run.one("aws-native:sagemaker:Cluster").inputs
    bucket = named(run, "aws:s3/bucket:Bucket", "hyperpod-lifecycle")
    bucket_name = f"{bucket.inputs['bucketPrefix']}hyperpod-lifecycle-mock"
    assert cluster["clusterName"] == "hp-dev"
    assert cluster["orchestrator"] == {"eks": {"clusterArn": EKS_ARN}}
    assert cluster["nodeRecovery"] == "Automatic"
    assert cluster["vpcConfig"] == {
        "securityGroupIds": ["hyperpod-nodes-id", "sg-eks-cluster-mock"],
        "subnets": ["network-private-0-id", "network-private-1-id"],
    }
    assert cluster["instanceGroups"] == [
        {
            "instanceGroupName": "g5-inference",
            "instanceType": "ml.g5.12xlarge",
            "instanceCount": 1,
            "executionRole": f"arn:aws:iam::{ACCOUNT}:role/hyperpod-execution-mock",
            "lifeCycleConfig": {
                "sourceS3Uri": f"s3://{bucket_name}/lifecycle/",
                "onCreate": "on_create.sh",
            },
            "instanceStorageConfigs": [{"ebsVolumeConfig": {"volumeSizeInGb": 500}}],
            "threadsPerCore": 1,
            "onStartDeepHealthChecks": ["InstanceStress", "InstanceConnectivity"],
        }
    ]
    script = run.one("aws:s3/bucketObjectv2:BucketObjectv2").inputs
    assert script["key"] == "lifecycle/on_create.sh"
    assert script["source"] == {"fileAsset": str(REPO / "infra" / "lifecycle" / "on_create.sh")}


def test_no_deep_health_checks_omits_the_field_aws_requires_nonempty() -> None:
    group = {"name": "g", "instanceType": "ml.g5.12xlarge", "instanceCount": 1}
    run = run_main({"instanceGroups": json.dumps([{**group, "deepHealthChecks": []}])})
    (created,) = run.one("aws-native:sagemaker:Cluster").inputs["instanceGroups"]
    assert "onStartDeepHealthChecks" not in created


def test_hyperpod_cluster(run: offline.OfflineRun) -> None:
    check_hyperpod(run)


def test_hyperpod_execution_role(run: offline.OfflineRun) -> None:
    role = named(run, "aws:iam/role:Role", "hyperpod-execution").inputs
    assert json.loads(role["assumeRolePolicy"])["Statement"] == [
        {
            "Effect": "Allow",
            "Principal": {"Service": "sagemaker.amazonaws.com"},
            "Action": "sts:AssumeRole",
        }
    ]
    attached = sorted(
        r.inputs["policyArn"]
        for r in run.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
        if r.name.startswith("hyperpod-execution")
    )
    assert attached == [
        "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
        "arn:aws:iam::aws:policy/AmazonSageMakerClusterInstanceRolePolicy",
    ]
    pull = json.loads(
        named(run, "aws:iam/rolePolicy:RolePolicy", "hyperpod-execution-ecr-pull").inputs["policy"]
    )
    assert pull["Statement"][1]["Resource"] == [
        f"arn:aws:ecr:{REGION}:{ACCOUNT}:repository/hp-dev/vllm"
    ]


def test_dependencies_are_installed_before_the_hyperpod_cluster(run: offline.OfflineRun) -> None:
    release = run.one("kubernetes:helm.sh/v3:Release")
    inputs = release.inputs
    assert (inputs["chart"], inputs["version"], inputs["namespace"]) == (
        "nvidia-device-plugin",
        "0.16.1",
        "kube-system",
    )
    assert inputs["repositoryOpts"] == {"repo": "https://nvidia.github.io/k8s-device-plugin"}
    expressions = inputs["values"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"][0]["matchExpressions"]
    assert expressions[0]["values"] == ["ml.g5.12xlarge"]
    assert release.urn in run.one("aws-native:sagemaker:Cluster").dependencies


def test_efa_plugin_and_full_chart_options(tmp_path: Path) -> None:
    p5 = json.dumps([{"name": "p5", "instanceType": "ml.p5.48xlarge", "instanceCount": 1}])
    efa = run_main({"instanceGroups": p5, "instanceType": "ml.p5.48xlarge"})
    chart = tmp_path / "HyperPodHelmChart"  # a checkout of AWS's chart: a folder with Chart.yaml
    chart.mkdir()
    (chart / "Chart.yaml").write_text("name: hyperpod-helm-chart\n")
    charts = sorted(r.inputs["chart"] for r in efa.of_type("kubernetes:helm.sh/v3:Release"))
    assert charts == ["aws-efa-k8s-device-plugin", "nvidia-device-plugin"]
    full = run_main({"hyperpodDependenciesChart": str(chart)})
    release = full.one("kubernetes:helm.sh/v3:Release").inputs
    assert release["chart"] == str(chart)
    assert (release["name"], release["dependencyUpdate"]) == ("hyperpod-dependencies", True)


def _trust_subject(role: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    statement = json.loads(role["assumeRolePolicy"])["Statement"][0]
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert statement["Principal"] == {"Federated": OIDC_PROVIDER}
    return statement["Condition"]["StringEquals"][f"{ISSUER}:sub"], statement["Condition"][
        "StringEquals"
    ]


def check_operator(run: offline.OfflineRun) -> None:
    roles = {r.name: r.inputs for r in run.of_type("aws:iam/role:Role")}
    subjects = {
        name: _trust_subject(roles[name])[0]
        for name in (
            "operator-execution",
            "operator-keda",
            "operator-alb",
            "operator-s3-csi",
            "operator-fsx-csi",
        )
    }
    operator_sa = "system:serviceaccount:hyperpod-inference-system"
    assert subjects == {
        "operator-execution": f"{operator_sa}:hyperpod-inference-controller-manager",
        "operator-keda": f"{operator_sa}:keda-operator",
        "operator-alb": f"{operator_sa}:aws-load-balancer-controller",
        "operator-s3-csi": "system:serviceaccount:kube-system:s3-csi-driver-sa",
        "operator-fsx-csi": "system:serviceaccount:kube-system:fsx-csi-controller-sa",
    }
    for name in subjects:
        assert _trust_subject(roles[name])[1][f"{ISSUER}:aud"] == "sts.amazonaws.com"
    assert roles["operator-execution"]["name"] == "SageMakerHyperPodInference-hp-dev"
    addons = {r.inputs["addonName"]: r.inputs for r in run.of_type("aws:eks/addon:Addon")}
    assert set(addons) == {
        "eks-pod-identity-agent",
        "cert-manager",
        "metrics-server",
        "aws-mountpoint-s3-csi-driver",
        "aws-fsx-csi-driver",
        "amazon-sagemaker-hyperpod-inference",
    }
    role = f"arn:aws:iam::{ACCOUNT}:role"
    assert (
        addons["aws-mountpoint-s3-csi-driver"]["serviceAccountRoleArn"]
        == f"{role}/operator-s3-csi-mock"
    )
    assert addons["aws-fsx-csi-driver"]["serviceAccountRoleArn"] == f"{role}/operator-fsx-csi-mock"
    operator = addons["amazon-sagemaker-hyperpod-inference"]
    tls = (
        named(run, "aws:s3/bucket:Bucket", "operator-tls").inputs["bucketPrefix"]
        + "operator-tls-mock"
    )
    assert json.loads(operator["configurationValues"]) == {
        "executionRoleArn": f"{role}/SageMakerHyperPodInference-hp-dev",
        "tlsCertificateS3Bucket": tls,
        "hyperpodClusterArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/mockhyperpod",
        "alb": {
            "enabled": True,
            "serviceAccount": {"create": True, "roleArn": f"{role}/operator-alb-mock"},
        },
        "keda": {
            "enabled": True,
            "auth": {"aws": {"irsa": {"enabled": True, "roleArn": f"{role}/operator-keda-mock"}}},
        },
    }
    assert (operator["clusterName"], operator["resolveConflictsOnCreate"]) == (
        "hp-dev",
        "OVERWRITE",
    )


def test_operator(run: offline.OfflineRun) -> None:
    check_operator(run)


def test_operator_waits_for_its_prerequisites_and_the_endpoint_for_the_operator(
    run: offline.OfflineRun,
) -> None:
    by_urn = {r.urn: r for r in run.registrations}
    addon = named(run, "aws:eks/addon:Addon", "operator-addon")
    waits_for = {by_urn[u].name for u in addon.dependencies if u in by_urn}
    assert {
        "operator-cert-manager",
        "operator-metrics-server",
        "operator-aws-mountpoint-s3-csi-driver",
        "operator-aws-fsx-csi-driver",
        "hyperpod",
    } <= waits_for
    assert addon.urn in run.one(CR_TYPE).dependencies
    provider = run.one("pulumi:providers:kubernetes")
    for resource in (run.one(CR_TYPE), run.one("kubernetes:helm.sh/v3:Release")):
        assert resource.provider is not None and resource.provider.startswith(provider.urn + "::")


def test_image_build_iam_and_s3_do_not_wait_for_the_cluster(run: offline.OfflineRun) -> None:
    cluster_urns = {
        r.urn
        for r in run.registrations
        if r.type in {"eks:index:Cluster", "aws-native:sagemaker:Cluster", "hp:index:EksCluster"}
    }
    independent = [
        *run.of_type("docker-build:index:Image"),
        *run.of_type("aws:ecr/repository:Repository"),
        *run.of_type("aws:s3/bucket:Bucket"),
        *run.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment"),
        named(run, "aws:iam/role:Role", "hyperpod-execution"),
    ]
    for registration in independent:
        assert not cluster_urns & set(registration.dependencies), registration.name


def check_images(run: offline.OfflineRun) -> None:
    repository = run.one("aws:ecr/repository:Repository").inputs
    assert repository["name"] == "hp-dev/vllm"
    assert repository["imageTagMutability"] == "IMMUTABLE"
    assert repository["imageScanningConfiguration"] == {"scanOnPush": True}
    assert repository["encryptionConfigurations"] == [{"encryptionType": "AES256"}]
    image = run.one("docker-build:index:Image").inputs
    assert image["platforms"] == ["linux/amd64"]
    # Relative to the project folder Pulumi runs the program in, so every checkout's state
    # holds the same paths; the context is narrowed by /.dockerignore.
    located = {
        key: (Path.cwd() / image[key]["location"]).resolve() for key in ("context", "dockerfile")
    }
    assert located == {"context": REPO, "dockerfile": REPO / "images" / "vllm" / "Dockerfile"}
    assert image["buildArgs"] == {"ENGINE_VERSION": PINNED_VERSIONS[Engine.VLLM]}
    assert image["push"] is True and image["buildOnPreview"] is False
    [tag] = image["tags"]
    assert tag.startswith(
        f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/hp-dev/vllm:{PINNED_VERSIONS[Engine.VLLM]}-"
    )
    assert image["registries"][0]["username"] == "AWS"
    cr = run.one(CR_TYPE).inputs
    assert cr["spec"]["worker"]["image"] == run.outputs["image"]
    assert "@sha256:" in run.outputs["image"]


def test_images(run: offline.OfflineRun) -> None:
    check_images(run)


def test_only_the_selected_engine_is_built() -> None:
    sglang = run_main(
        {
            "engine": "sglang",
            "engineArgs": None,
            "speculativeAlgorithm": None,
            "speculativeModel": None,
        }
    )
    image = sglang.one("docker-build:index:Image").inputs
    assert image["dockerfile"]["location"].endswith("images/sglang/Dockerfile")
    assert sglang.one("aws:ecr/repository:Repository").inputs["name"] == "hp-dev/sglang"


def test_prebuilt_image_skips_the_build() -> None:
    prebuilt = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/team/vllm@sha256:" + "b" * 64
    run = run_main({"image": prebuilt})
    assert not run.of_type("docker-build:index:Image") and not run.of_type(
        "aws:ecr/repository:Repository"
    )
    assert run.one(CR_TYPE).inputs["spec"]["worker"]["image"] == prebuilt
    pull = json.loads(
        named(run, "aws:iam/rolePolicy:RolePolicy", "hyperpod-execution-ecr-pull").inputs["policy"]
    )
    assert pull["Statement"][1]["Resource"] == [
        f"arn:aws:ecr:{REGION}:{ACCOUNT}:repository/team/vllm"
    ]


def _resource_class(type_token: str) -> type | None:
    package, module_path, name = type_token.split(":")
    if package != "aws":
        return None
    module = importlib.import_module(f"pulumi_aws.{module_path.split('/')[0]}")
    return getattr(module, name, None)


def test_every_taggable_aws_resource_carries_the_tags(run: offline.OfflineRun) -> None:
    checked = 0
    for registration in run.registrations:
        cls = _resource_class(registration.type)
        if cls is None or "tags" not in inspect.signature(cls._internal_init).parameters:
            continue
        tags = registration.inputs.get("tags") or {}
        assert DEFAULT_TAGS.items() <= tags.items(), registration.name
        checked += 1
    assert checked >= 30
    for token in ("eks:index:Cluster", "eks:index:ManagedNodeGroup"):
        assert DEFAULT_TAGS.items() <= run.one(token).inputs["tags"].items()
    hyperpod_tags = {
        t["key"]: t["value"] for t in run.one("aws-native:sagemaker:Cluster").inputs["tags"]
    }
    assert DEFAULT_TAGS.items() <= hyperpod_tags.items()


def test_every_resource_is_a_child_of_a_component(run: offline.OfflineRun) -> None:
    components = {r.urn for r in run.registrations if r.type.startswith("hp:index:")}
    orphans = [
        r.name
        for r in run.registrations
        if not r.type.startswith("hp:index:") and r.parent not in components
    ]
    assert orphans == []


def test_no_wildcard_resource_except_for_actions_without_resource_arns(
    run: offline.OfflineRun,
) -> None:
    allowed = {"ecr:GetAuthorizationToken", "cloudwatch:GetMetricData", "ec2:DescribeVpcs"}
    for policy in run.of_type("aws:iam/rolePolicy:RolePolicy"):
        for statement in json.loads(policy.inputs["policy"])["Statement"]:
            if statement["Resource"] == "*":
                actions = (
                    statement["Action"]
                    if isinstance(statement["Action"], list)
                    else [statement["Action"]]
                )
                assert allowed & set(actions), (policy.name, actions)
                assert all(":Describe" in a or ":Get" in a or ":List" in a for a in actions), (
                    policy.name
                )


def test_checks_catch_a_mistyped_service_account(monkeypatch: pytest.MonkeyPatch) -> None:
    accounts = dict(operator_module.SERVICE_ACCOUNTS)
    accounts["s3-csi"] = ("kube-system", "s3-csi-driver")  # the Helm-era name, wrong for the add-on
    monkeypatch.setattr(operator_module, "SERVICE_ACCOUNTS", accounts)
    with pytest.raises(AssertionError):
        check_operator(run_main())


def test_checks_catch_a_missing_instance_group_input(monkeypatch: pytest.MonkeyPatch) -> None:
    import mlcc.components.cluster.hyperpod as hyperpod_module

    original = hyperpod_module.instance_group_args

    def without_lifecycle(*args: Any, **kwargs: Any) -> Any:
        group = original(*args, **kwargs)
        group.life_cycle_config = None
        return group

    monkeypatch.setattr(hyperpod_module, "instance_group_args", without_lifecycle)
    with pytest.raises(AssertionError):
        check_hyperpod(run_main())


def test_checks_catch_a_wrong_eks_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    import mlcc.components.cluster.eks as eks_module

    monkeypatch.setattr(
        eks_module.eks, "AuthenticationMode", type("M", (), {"API_AND_CONFIG_MAP": "CONFIG_MAP"})
    )
    with pytest.raises(AssertionError):
        check_eks(run_main())


def test_add_ons_wait_for_the_system_nodes_their_pods_run_on(run: offline.OfflineRun) -> None:
    nodes = run.one("eks:index:ManagedNodeGroup").urn
    for addon in run.of_type("aws:eks/addon:Addon"):
        assert nodes in addon.dependencies, addon.name


def test_one_nat_gateway_per_az_when_asked() -> None:
    run = run_main({"natGatewayPerAz": "true"})
    nats = {r.name: r.inputs["subnetId"] for r in run.of_type("aws:ec2/natGateway:NatGateway")}
    assert nats == {"network-nat-0": "network-public-0-id", "network-nat-1": "network-public-1-id"}
    routes = {
        r.name: r.inputs["routes"][0]["natGatewayId"]
        for r in run.of_type("aws:ec2/routeTable:RouteTable")
        if r.name.startswith("network-private")
    }
    assert routes == {
        "network-private-0": "network-nat-0-id",
        "network-private-1": "network-nat-1-id",
    }


def test_network_plan_reaches_the_vpc_and_subnets(run: offline.OfflineRun) -> None:
    assert run.one("aws:ec2/vpc:Vpc").inputs["cidrBlock"] == "10.0.0.0/16"
    subnets = {r.name: r.inputs for r in run.of_type("aws:ec2/subnet:Subnet")}
    assert subnets["network-private-0"]["cidrBlock"] == "10.0.0.0/18"
    assert subnets["network-private-1"]["availabilityZone"] == f"{REGION}b"
    assert subnets["network-private-0"]["tags"]["kubernetes.io/role/internal-elb"] == "1"
    assert subnets["network-public-0"]["tags"]["kubernetes.io/role/elb"] == "1"
    endpoint = run.one("aws:ec2/vpcEndpoint:VpcEndpoint").inputs
    assert endpoint["serviceName"] == f"com.amazonaws.{REGION}.s3"
    assert endpoint["routeTableIds"] == ["network-private-0-id", "network-private-1-id"]


def test_existing_subnets_replace_the_network_component() -> None:
    private = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
    run = run_main({"vpcId": "vpc-0123456789abcdef0", "privateSubnetIds": json.dumps(private)})
    assert not [
        r
        for r in run.registrations
        if r.type.startswith("aws:ec2/") and r.type != "aws:ec2/securityGroup:SecurityGroup"
    ]
    assert not run.of_type("hp:index:Network")
    cluster = run.one("eks:index:Cluster").inputs
    assert (cluster["vpcId"], cluster["privateSubnetIds"]) == ("vpc-0123456789abcdef0", private)
    assert "publicSubnetIds" not in cluster
    assert run.one("aws-native:sagemaker:Cluster").inputs["vpcConfig"]["subnets"] == private
    assert run.one("aws:ec2/securityGroup:SecurityGroup").inputs["vpcId"] == "vpc-0123456789abcdef0"
