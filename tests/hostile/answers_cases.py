"""Round three of the hostile corpus (issue #43, item 8): answers that were misread, from AWS
(a body that never ends, a credential_process that hangs or prints without end, a quota as
text, add-on lists null or spelled otherwise, Price List items that are not JSON) and from the
Hub (a cached copy too large or unreadable, a lock held on the cache, a config without
architectures, a total_size written as a float). `aws_cases` and `hub_cases` add them."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aws_accounts import quota_page
from classify import Case, Oracle, all_of, never, says
from fake_hub import COMMIT, MODELS, HubAnswer, HubBehaviour
from local_aws import LocalAWS, Reply
from plan_cases import CONFIG, INDEX, TARGET, exit_in, one_line, plan_case

QUOTA = "ml.g5.12xlarge for cluster usage"
ADDON = "amazon-sagemaker-hyperpod-inference"
REPO_FOLDER = "models--meta-llama--Llama-3.1-8B-Instruct"


def unchecked(*texts: str) -> Oracle:
    return all_of(exit_in(0), one_line("warning: hp:", "not checked", *texts))


def _on(operation: str, reply: Reply, service: str) -> Callable[[LocalAWS], None]:
    def script(aws: LocalAWS) -> None:
        aws.on(operation, reply, service)

    return script


def _addon(**version: Any) -> Reply:
    listed = {"addonVersion": "v1.2.0-eksbuild.1", **version}
    return Reply(body={"addons": [{"addonName": ADDON, "addonVersions": [listed]}]})


NOT_REFUSED_ADDON = never("EKS offers no", "its versions support", kind="accepted-bad")


def _credential_process(name: str, code: str, said: str) -> Case:
    """The default profile's credential_process runs `code`; no credentials in the
    environment, so botocore runs it."""

    def prepare(cache: Path, _url: str) -> None:
        line = shlex.join([sys.executable, "-c", code])
        config = cache.parent / "aws-config"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(f"[default]\ncredential_process = {line}\n")

    env = {
        "AWS_ACCESS_KEY_ID": "",
        "AWS_SECRET_ACCESS_KEY": "",
        "AWS_CONFIG_FILE": "{case}/aws-config",
    }
    oracle = all_of(
        unchecked("the credential_process of the default AWS profile", said),
        never(r"no answer within", kind="accepted-bad"),
    )
    return plan_case(f"credential_process {name}", "aws", oracle, env=env, prepare=prepare)


def aws() -> list[Case]:
    endless = b'{"Quotas": [' + b" " * 65536
    return [
        plan_case(
            "quota body never ends, chunked",
            "aws",
            unchecked("ListServiceQuotas", "an answer of more than 16 MiB (not read)"),
            account=_on(
                "ListServiceQuotas", Reply(endless=endless, chunked=True), "service-quotas"
            ),
        ),
        plan_case(
            "quota body never ends, no length",
            "aws",
            unchecked("ListServiceQuotas", "an answer of more than 16 MiB (not read)"),
            account=_on("ListServiceQuotas", Reply(endless=endless), "service-quotas"),
        ),
        _credential_process(
            "prints without end",
            "import itertools, sys; [sys.stdout.write('x' * 65536) for _ in itertools.count()]",
            "printed more than 64 KiB",
        ),
        _credential_process("hangs", "import time; time.sleep(600)", "did not finish within"),
        _credential_process("garbled", "print('<html>sso</html>')", "printed no credentials"),
        plan_case(
            "quota as text",
            "aws",
            all_of(
                unchecked(f"quota {QUOTA}", "Value is '12', where the model has a double"),
                never(r"^error: hp:instanceGroups", kind="accepted-bad"),
            ),
            account=_on("ListServiceQuotas", quota_page("12"), "service-quotas"),
        ),
        plan_case(
            "add-on compatibilities null",
            "aws",
            all_of(unchecked("DescribeAddonVersions", "null or missing"), NOT_REFUSED_ADDON),
            account=_on("DescribeAddonVersions", _addon(compatibilities=None), "eks"),
        ),
        plan_case(
            "add-on cluster version a number",
            "aws",
            all_of(
                unchecked("clusterVersion is 1.33, where the model has a string"), NOT_REFUSED_ADDON
            ),
            account=_on(
                "DescribeAddonVersions", _addon(compatibilities=[{"clusterVersion": 1.33}]), "eks"
            ),
        ),
        plan_case(
            "add-on cluster version 1.33.0",
            "aws",
            all_of(
                exit_in(0),
                says("for Kubernetes 1.33"),
                NOT_REFUSED_ADDON,
                never("not checked", kind="accepted-bad"),
            ),
            account=_on(
                "DescribeAddonVersions",
                _addon(compatibilities=[{"clusterVersion": "1.33.0", "defaultVersion": True}]),
                "eks",
            ),
        ),
        plan_case(
            "add-on versions null",
            "aws",
            all_of(unchecked("DescribeAddonVersions", "without its versions"), NOT_REFUSED_ADDON),
            account=_on(
                "DescribeAddonVersions",
                Reply(body={"addons": [{"addonName": ADDON, "addonVersions": None}]}),
                "eks",
            ),
        ),
    ]


PRICE_NOT_READ = all_of(
    unchecked("the AWS Price List could not be read"),
    never(r"the rest: \$0\.00", kind="wrong figure"),
)


def _cache_blob(cache: Path) -> Path:
    """The cache filled as an earlier good run left it; config.json's blob."""
    snapshot = cache / REPO_FOLDER / "snapshots" / COMMIT
    blobs, refs = cache / REPO_FOLDER / "blobs", cache / REPO_FOLDER / "refs"
    for folder in (snapshot, blobs, refs):
        folder.mkdir(parents=True, exist_ok=True)
    (refs / "main").write_text(COMMIT)
    body = (MODELS / TARGET / "config.json").read_bytes()
    blob = blobs / hashlib.sha256(body).hexdigest()
    (snapshot / "config.json").symlink_to(blob)
    return blob


def _oversized(cache: Path, _url: str) -> None:
    blob = _cache_blob(cache)
    blob.write_bytes(b"{" + b" " * (5 * 1024 * 1024) + b"}")
    an_hour_ago = time.time() - 3600
    os.utime(blob, (an_hour_ago, an_hour_ago))


def _unreadable(cache: Path, _url: str) -> None:
    _cache_blob(cache).mkdir()  # root reads any file: a folder is what cannot be read


def _locked(cache: Path, _url: str) -> Callable[[], None]:
    """The lock huggingface_hub takes to download config.json, held (as another process
    downloading it would) until the run is over."""
    etag = hashlib.sha256((MODELS / TARGET / "config.json").read_bytes()).hexdigest()
    lock = cache / ".locks" / REPO_FOLDER / f"{etag}.lock"
    lock.parent.mkdir(parents=True)
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    return lambda: os.close(descriptor)


def _config(**changes: Any) -> HubBehaviour:
    body = json.dumps({**CONFIG, **changes}).encode()
    return HubBehaviour(answers={(TARGET, "config.json"): HubAnswer(body)})


def hub() -> list[Case]:
    not_the_model = never(r"^error: hp:model", kind="accepted-bad")
    index = json.dumps({**INDEX, "metadata": {"total_size": 16060522496.0}}).encode()
    no_architectures = all_of(
        exit_in(1), one_line("error: hp:model: ", "config.json has no architectures")
    )
    return [
        plan_case(
            "cache copy over 4 MiB",
            "hub",
            all_of(unchecked("the Hub cache's", "is over 4 MiB"), not_the_model),
            prepare=_oversized,
        ),
        plan_case(
            "cache file unreadable",
            "hub",
            all_of(unchecked("the Hub cache's", "is a folder, not a file"), not_the_model),
            prepare=_unreadable,
        ),
        plan_case(
            "cache lock held",
            "hub",
            all_of(unchecked("the Hub cache's lock", "held by another process"), not_the_model),
            prepare=_locked,
        ),
        plan_case("architectures empty", "hub", no_architectures, _config(architectures=[])),
        plan_case("architectures null", "hub", no_architectures, _config(architectures=None)),
        plan_case(
            "index total_size a whole float",
            "hub",
            all_of(exit_in(0), says("GiB usable per GPU"), never("not a size of weights")),
            HubBehaviour(answers={(TARGET, "model.safetensors.index.json"): HubAnswer(index)}),
        ),
    ]
