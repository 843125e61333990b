"""`mlcc plan`: the real program evaluated offline, through the command line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from crd_schema import assert_valid_manifest
from env_contract import DRAFT, ENGINE_SETTINGS, SPECULATIVE_ENV
from program_runs import CR_TYPE, IMAGE, REPO

from mlcc.cli import main


def plan(
    tmp_path: Path,
    *sets: str,
    monkeypatch: pytest.MonkeyPatch,
    stack: str = "dev",
    diff: Path | None = None,
) -> int:
    monkeypatch.chdir(REPO)
    argv = ["plan", "--stack", stack, "--out", str(tmp_path), "--set", f"hp:image={IMAGE}"]
    argv += ["--diff", str(diff)] if diff else []
    for assignment in sets:
        argv += ["--set", assignment]
    return main(argv)


def cr_manifest(out: Path) -> dict[str, Any]:
    (path,) = (out / "manifests").glob("*-inferenceendpointconfig-*.yaml")
    manifest: dict[str, Any] = yaml.safe_load(path.read_text())
    return manifest


def test_the_written_manifest_is_a_valid_cr_with_the_contract_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The algorithm x engine matrix runs through InferenceEndpoint (test_endpoint_component);
    this is one case of it through the whole program and the written manifest file."""
    sets = ["engine=sglang", "speculativeAlgorithm=eagle2"]  # hp:maxModelLen follows the engine
    assert plan(tmp_path, *sets, f"speculativeModel={DRAFT}", monkeypatch=monkeypatch) == 0
    manifest = cr_manifest(tmp_path)
    assert_valid_manifest(manifest, "inferenceendpointconfigs.yaml")
    env = {e["name"]: e["value"] for e in manifest["spec"]["worker"]["environmentVariables"]}
    assert env == {
        "HP_SPECULATIVE_ALGORITHM": "eagle2",
        **SPECULATIVE_ENV["eagle2"],
        **ENGINE_SETTINGS["sglang"],
    }


def test_speculation_off_renders_no_speculative_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        plan(tmp_path, "speculativeAlgorithm=", "speculativeModel=", monkeypatch=monkeypatch) == 0
    )
    env = cr_manifest(tmp_path)["spec"]["worker"]["environmentVariables"]
    assert not [e for e in env if "SPECULATIVE" in e["name"]]
    assert "  speculative: off" in capsys.readouterr().out.splitlines()


@pytest.mark.parametrize(
    ("sets", "key"),
    [
        (["speculativeAlgorithm=medusa"], "hp:speculativeAlgorithm"),
        (["speculativeModel="], "hp:speculativeModel"),
        (["speculativeModel=gs://bucket/eagle3"], "hp:speculativeModel"),
        (["engine=sglang", "speculativeModel=s3://bucket/eagle3"], "hp:speculativeModel"),
        (["speculativeModel=arn:aws:sagemaker:us-east-1:1:model/x"], "hp:speculativeModel"),
        (["speculativeNumTokens=0"], "hp:speculativeNumTokens"),
        (["speculativeNumTokens=-2"], "hp:speculativeNumTokens"),
        (["speculativeNumTokens=2.5"], "hp:speculativeNumTokens"),
        (["speculativeNumTokens=100000"], "hp:speculativeNumTokens"),
        (["speculativeAlgorithm=eagle2", "speculativeEagleTopk=0"], "hp:speculativeEagleTopk"),
        (["engine=tensorrt"], "hp:engine"),
        (["model=llama"], "hp:model"),
        (["instanceType=g5.12xlarge"], "hp:instanceType"),
        (["endpointName=Endpoint_1"], "hp:endpointName"),
        (
            [
                "engine=sglang",
                "engineVersion=0.5.2",
                "speculativeAlgorithm=ngram",
                "speculativeModel=",
            ],
            "hp:engineVersion",
        ),
        (["model="], "hp:model"),
    ],
)
def test_bad_input_exits_1_naming_the_key(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    sets: list[str],
    key: str,
) -> None:
    assert plan(tmp_path, *sets, monkeypatch=monkeypatch) == 1
    err = capsys.readouterr().err
    assert f"error: {key}: " in err
    assert "nothing would be created" in err
    assert not (tmp_path / "plan.json").exists()


def test_warnings_do_not_fail_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = plan(
        tmp_path, "speculativeAlgorithm=ngram", "speculativeEagleTopk=4", monkeypatch=monkeypatch
    )
    assert code == 0
    err = capsys.readouterr().err
    assert "warning: hp:speculativeModel: ignored: ngram takes no draft model" in err
    assert "warning: hp:speculativeEagleTopk: ignored" in err


def project_copy(tmp_path: Path, stack: str, config: dict[str, Any]) -> Path:
    """A project folder that links to the repo's files but has its own stack file."""
    project = tmp_path / "project"
    project.mkdir()
    for entry in REPO.iterdir():
        if not entry.name.startswith("Pulumi.") or entry.name == "Pulumi.yaml":
            (project / entry.name).symlink_to(entry)
    (project / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": config}))
    return project


def test_plan_json_and_secrets_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stack_config = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())["config"]
    stack_config["hp:hfToken"] = {"secure": "v1:ciphertextThatCannotBeDecrypted"}
    stack_config["hp:image"] = IMAGE
    project = project_copy(tmp_path, "secret", stack_config)
    monkeypatch.chdir(project)
    out = tmp_path / "out"
    assert main(["plan", "--stack", "secret", "--out", str(out)]) == 0
    document = json.loads((out / "plan.json").read_text())
    secret = next(r for r in document["resources"] if r["type"] == "kubernetes:core/v1:Secret")
    assert secret["inputs"]["stringData"] == {"token": "[secret]"}
    assert secret["parent"] == "hp:index:EndpointNamespace::namespace"
    rendered = "".join(p.read_text() for p in (out / "manifests").glob("*.yaml"))
    assert "ciphertext" not in rendered and "ciphertext" not in json.dumps(document)
    (manifest_path,) = (out / "manifests").glob("*-secret-*.yaml")
    manifest = yaml.safe_load(manifest_path.read_text())
    # Still a valid Secret: stringData is a map of strings (keys kept, values redacted).
    assert manifest["apiVersion"] == "v1" and manifest["kind"] == "Secret"
    assert manifest["stringData"] == {"token": "[secret]"}
    assert manifest["metadata"]["name"] == "hp-secret-hf-token"


def test_usage_errors_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert plan(tmp_path, "no-equals-sign", monkeypatch=monkeypatch) == 2
    assert plan(tmp_path, monkeypatch=monkeypatch, stack="nosuchstack") == 2
    with pytest.raises(SystemExit) as raised:
        main(["plan", "--bogus"])
    assert raised.value.code == 2


def test_console_script_end_to_end(tmp_path: Path) -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "mlcc",
            "plan",
            "--out",
            str(tmp_path),
            "--set",
            f"hp:image={IMAGE}",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert (
        "kubernetes:inference.sagemaker.aws.amazon.com/v1:InferenceEndpointConfig"
        in completed.stdout
    )
    assert '--speculative-config {"method":"eagle3"' in completed.stdout
    assert "--speculative-algorithm EAGLE3" in completed.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "mlcc", "plan", "--out", str(tmp_path), "--set", "engine=tgi"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 1 and "error: hp:engine: must be vllm or sglang" in bad.stderr


def test_the_command_freezes_its_heap_before_exit_and_atexit_still_runs(tmp_path: Path) -> None:
    """The interpreter's last collections would scan every SDK object (about 0.5 s): `mlcc`
    freezes what is alive first; what atexit does is still done, the exit code still kept."""
    script = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"
        f"sys.argv = ['mlcc', 'plan', '--out', {str(tmp_path)!r}, '--set', 'engine=tgi']\n"
        "from mlcc.cli import entry\n"
        "entry()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1 and "error: hp:engine: must be vllm or sglang" in done.stderr
    assert done.stdout.splitlines() == ["frozen at exit: True"]


# --- --set like `pulumi config set --path` --------------------------------------------------


def planned(out: Path) -> list[dict[str, Any]]:
    resources: list[dict[str, Any]] = json.loads((out / "plan.json").read_text())["resources"]
    return resources


def one(out: Path, type_token: str) -> dict[str, Any]:
    (found,) = [r for r in planned(out) if r["type"] == type_token]
    return found


def cr_env(out: Path) -> dict[str, str]:
    variables = cr_manifest(out)["spec"]["worker"]["environmentVariables"]
    return {e["name"]: e["value"] for e in variables if "value" in e}


def test_path_style_sets_land_in_the_planned_resources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = plan(
        tmp_path,
        "hp:tags.owner=alice",
        "hp:instanceGroups[0].instanceCount=2",
        "hp:engineArgs.enforce-eager=true",
        monkeypatch=monkeypatch,
    )
    assert code == 0
    hyperpod = one(tmp_path, "aws-native:sagemaker:Cluster")["inputs"]
    assert hyperpod["instanceGroups"][0]["instanceCount"] == 2
    assert hyperpod["instanceGroups"][0]["instanceType"] == "ml.g5.12xlarge"  # kept
    vpc = one(tmp_path, "aws:ec2/vpc:Vpc")["inputs"]
    assert vpc["tags"]["owner"] == "alice" and vpc["tags"]["team"] == "ml-platform"
    env = cr_env(tmp_path)
    assert env["SM_VLLM_ENFORCE_EAGER"] == "true"
    assert env["SM_VLLM_MAX_MODEL_LEN"] == "8192"  # the stack's other engine arg is kept


@pytest.mark.parametrize(
    "value", ["{max-model-len: 4096, seed: 7}", '{"max-model-len": 4096, "seed": 7}']
)
def test_map_values_are_accepted_as_yaml_flow_or_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    # hp:maxModelLen= removes the dev stack's key, so the flag may come from hp:engineArgs.
    sets = ("hp:maxModelLen=", f"hp:engineArgs={value}")
    assert plan(tmp_path, *sets, monkeypatch=monkeypatch) == 0
    env = cr_env(tmp_path)
    assert (env["SM_VLLM_MAX_MODEL_LEN"], env["SM_VLLM_SEED"]) == ("4096", "7")


@pytest.mark.parametrize(
    "assignment",
    [
        "hp:engineArgs={max-model-len 8192",
        "hp:engineArgs=[1, 2",
        "hp:engineArgs={a: 1e999}",
        "hp:tags[=x",
        "hp:instanceGroups[5].instanceCount=2",
        "hp:model.name=x",
    ],
)
def test_a_malformed_set_is_one_usage_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    assignment: str,
) -> None:
    assert plan(tmp_path, assignment, monkeypatch=monkeypatch) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"mlcc plan: error: --set {assignment.partition('=')[0]}")
    assert not (tmp_path / "plan.json").exists()


def test_a_malformed_map_says_which_forms_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert plan(tmp_path, "hp:engineArgs={max-model-len 8192", monkeypatch=monkeypatch) == 2
    err = capsys.readouterr().err
    assert 'JSON ({"max-model-len": 8192}) or YAML flow syntax ({max-model-len: 8192}' in err


# --- what a person reads and a reviewer diffs ---------------------------------------------


def test_two_runs_write_identical_plans_and_print_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = []
    for _ in range(2):
        assert plan(tmp_path, monkeypatch=monkeypatch) == 0
        manifests = {p.name: p.read_bytes() for p in (tmp_path / "manifests").iterdir()}
        runs.append(((tmp_path / "plan.json").read_bytes(), manifests, capsys.readouterr().out))
    assert runs[0] == runs[1]
    assert str(REPO) not in runs[0][0].decode()  # paths relative: plans diff across clones


def test_the_headline_names_stack_mode_region_engine_model_and_instances(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    regions = ("aws:region=eu-west-1", "aws-native:region=eu-west-1")
    # Two replicas need two nodes (one alone is refused: the second pod would stay Pending).
    nodes = "hp:instanceGroups[0].instanceCount=2"
    code = plan(tmp_path, *regions, "replicas=2", nodes, monkeypatch=monkeypatch)
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "stack dev: create mode (new VPC, EKS and HyperPod cluster), region eu-west-1"
    )
    assert lines[1] == "GPU nodes: ml.g5.12xlarge x 2 (group g5-inference)"
    assert lines[2] == "endpoint hp-dev (inference): vllm 0.27.1, meta-llama/Llama-3.1-8B-Instruct"
    assert lines[3] == "  instances: ml.g5.12xlarge x 2"
    assert lines[4] == "  speculative: eagle3"


def test_the_resources_print_as_a_tree_of_at_most_100_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert plan(tmp_path, "endpointName=" + "e" * 63, monkeypatch=monkeypatch) == 0
    out = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(out) if line.startswith("resources ("))
    tree = out[start + 1 : out.index("", start)]
    assert len(tree) == len(planned(tmp_path)) == int(out[start].split("(")[1].split(")")[0])
    assert all(len(line) <= 100 for line in tree)
    endpoint_at = tree.index("endpoint  hp:index:InferenceEndpoint")
    assert tree[endpoint_at + 1].startswith("└─ endpoint  kubernetes:")  # its only child: the CR
    children = [
        r for r in planned(tmp_path) if r["parent"] == "hp:index:InferenceEndpoint::endpoint"
    ]
    assert len(children) == 1


def test_the_diff_marks_only_the_endpoint_after_a_speculative_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    assert plan(base, monkeypatch=monkeypatch) == 0
    capsys.readouterr()
    code = plan(head, "speculativeNumTokens=3", monkeypatch=monkeypatch, diff=base)
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    marked = [line for line in lines if line[:2] in {"+ ", "- ", "~ "}]
    assert marked == [f"~ {CR_TYPE}  endpoint"]
    paths = lines[lines.index(marked[0]) + 1 :]
    assert "    spec.worker.environmentVariables[name=SM_VLLM_SPECULATIVE_CONFIG].value" in paths
    assert "0 to create, 1 to change, 0 to delete" in "\n".join(lines)


def test_the_diff_marks_a_resource_that_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "base"
    assert plan(base, monkeypatch=monkeypatch) == 0
    capsys.readouterr()
    assert plan(tmp_path / "head", "namespace=default", monkeypatch=monkeypatch, diff=base) == 0
    marked = [line for line in capsys.readouterr().out.splitlines() if line[:2] in {"- ", "+ "}]
    assert marked == ["- kubernetes:core/v1:Namespace  endpoint-namespace"]


def plan_args(tmp_path: Path, *argv: str, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.chdir(REPO)
    return main(["plan", "--set", f"hp:image={IMAGE}", *argv])


def test_diff_without_an_earlier_plan_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--out", str(tmp_path / "out"), "--diff", str(tmp_path / "nothing")]
    assert plan_args(tmp_path, *argv, monkeypatch=monkeypatch) == 2
    assert f"no plan.json there; write one first with `mlcc plan --out {tmp_path / 'nothing'}`" in (
        capsys.readouterr().err
    )
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "plan.json").write_text("[1, 2]")
    argv = ["--out", str(tmp_path / "out"), "--diff", str(tmp_path / "bad")]
    assert plan_args(tmp_path, *argv, monkeypatch=monkeypatch) == 2


def test_out_naming_a_file_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    existing = tmp_path / "plan.txt"
    existing.write_text("keep me")
    assert plan_args(tmp_path, "--out", str(existing), monkeypatch=monkeypatch) == 2
    assert capsys.readouterr().err == (
        f"mlcc plan: error: --out {existing}: is a file; give a folder (default build/plan)\n"
    )
    assert existing.read_text() == "keep me"


@pytest.mark.parametrize("stack", ["../Pulumi", "a/b", "", "x" * 101])
def test_a_stack_name_that_is_not_one_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stack: str
) -> None:
    assert plan(tmp_path, monkeypatch=monkeypatch, stack=stack) == 2


def test_example_stacks_plan_from_the_examples_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert not (REPO / "Pulumi.existing.yaml").exists()
    assert plan(tmp_path, monkeypatch=monkeypatch, stack="existing") == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "stack existing: existing-cluster mode, region us-east-1\nHyperPod cluster: arn:aws:"
    )
    assert "  eksClusterName: existing-eks" in out.splitlines()


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path) -> None:
    """`mlcc plan | head -1`: the pipe is closed (here before the first line) while printing."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mlcc", "plan", "--out", str(tmp_path), f"--set=hp:image={IMAGE}"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # long before the plan prints: its first write hits a closed pipe
    stderr = process.stderr.read()
    assert process.wait(timeout=120) == 0, stderr
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
    assert (tmp_path / "plan.json").is_file()


EXAMPLE_STACKS = sorted(
    p.name[len("Pulumi.") : -len(".yaml")] for p in (REPO / "examples").glob("Pulumi.*.yaml")
)


LITERAL = re.compile(r"kubectl |--[a-z]|\.dkr\.ecr\.|@sha256:|^wrote ")


def assert_read_as_a_person_would(printed: str) -> None:
    """The tree and the outputs: no Python repr, no line over 100 columns but literal commands,
    flags and image references (which must stay whole to be copied)."""
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("resources ("))
    shown = lines[start:]
    assert not [line for line in shown if "{'" in line or "['" in line or "': " in line]
    assert not [line for line in shown if len(line) > 100 and not LITERAL.search(line)]
    assert "…:" not in printed  # types are never cut in the middle


@pytest.mark.parametrize("stack", ("dev", *EXAMPLE_STACKS))
def test_every_example_stack_plans_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], stack: str
) -> None:
    """No workflow previews examples/ (placeholder values): this is their check."""
    monkeypatch.chdir(REPO)
    assert main(["plan", "--stack", stack, "--out", str(tmp_path)]) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert printed.startswith(f"stack {stack}: ")
    assert_read_as_a_person_would(printed)
    # Paths relative to the project (the image build context is "."): two checkouts plan the
    # same bytes.
    planned = (tmp_path / "plan.json").read_text()
    assert str(REPO) not in planned
    # The stacks plan what they planned when the golden file was written: a rule that refuses
    # or changes an example shows here (regenerate the file only for an intended change).
    # Outputs: those of the golden file (an earlier in-process run's exports can linger).
    document = json.loads(planned)
    golden = json.loads((Path(__file__).parent / "golden" / f"{stack}.plan.json").read_text())
    # plus the manifests --out owns and the cost (both written since the golden file)
    assert set(document) == {"resources", "outputs", "manifests", "cost"}
    assert set(golden) == {"resources", "outputs"}
    assert _content_hashes_masked(document["resources"]) == _content_hashes_masked(
        golden["resources"]
    )
    outputs = {k: document["outputs"].get(k) for k in golden["outputs"]}
    assert _content_hashes_masked(outputs) == _content_hashes_masked(golden["outputs"])


# The serve images' content tags and digests hash their build context (the engine contract):
# they change, rightly, whenever the contract's files do.
_CONTENT_HASH = re.compile(r"(?<=-)[0-9a-f]{16}\b|(?<=sha256:)[0-9a-f]{64}")


def _content_hashes_masked(resources: Any) -> Any:
    return json.loads(_CONTENT_HASH.sub("<hash>", json.dumps(resources)))


def test_a_type_error_does_not_hide_the_other_keys_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert plan(tmp_path, "hp:replicas=abc", "hp:model=bad", monkeypatch=monkeypatch) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("error: hp:replicas: must be of type 'integer'")
    assert err[1].startswith("error: hp:model: 'bad' is not a Hugging Face model id")
    assert err[2] == "2 configuration error(s); nothing would be created"


def test_the_multi_example_heads_each_endpoint_with_its_scaling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert plan(tmp_path, monkeypatch=monkeypatch, stack="multi") == 0
    capsys_lines = capsys.readouterr().out.splitlines()
    heads = [line for line in capsys_lines if line.startswith("endpoint ")]
    assert [line.split(" (")[0] for line in heads] == [
        "endpoint llama-eagle3",
        "endpoint llama-eagle3-baseline",
        "endpoint qwen-ngram",
    ]
    assert "  instances: ml.g5.12xlarge x 1 (autoscaling 1-2)" in capsys_lines
    assert "sglang 0.5.17, Qwen/Qwen3-8B" in heads[2]


def test_adding_routing_is_a_replacement_in_the_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The operator refuses to add intelligentRoutingSpec in place; Pulumi replaces the CR."""
    base, head = tmp_path / "base", tmp_path / "head"
    assert plan(base, monkeypatch=monkeypatch) == 0
    capsys.readouterr()
    assert plan(head, "routing=prefixaware", monkeypatch=monkeypatch, diff=base) == 0
    out = capsys.readouterr().out
    assert f"+- {CR_TYPE}  endpoint" in out.splitlines()
    assert "0 to create, 0 to change, 0 to delete, 1 to replace" in out
    assert "  operator: routing prefixaware (adding or removing it replaces the endpoint)" in out


# What may run past 100 columns: a literal a person copies (engine flags, a command, an image).
_LITERAL_LINE = re.compile(
    r"^\s*(vLLM|SGLang)\s+--|^\s*\w+Command: |^\s*image[\w.-]*: \S+@sha256:"
    r"|^(warning|error): |^wrote "
)


@pytest.mark.parametrize("stack", ["dev", "multi", "existing"])
def test_no_printed_line_is_wider_than_100_columns_but_literals(
    stack: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert plan(tmp_path, monkeypatch=monkeypatch, stack=stack) == 0
    wide = [
        line
        for line in capsys.readouterr().out.splitlines()
        if len(line) > 100 and not _LITERAL_LINE.search(line)
    ]
    assert wide == []


def test_a_plan_imports_no_other_subcommand() -> None:
    """`mlcc plan` pays only for its own modules: verify's, optimize's and bench's stay out."""
    code = (
        "import sys, mlcc.cli\n"
        "mlcc.cli.build_parser('plan')\n"
        "print(sorted(m for m in sys.modules if m.startswith('mlcc.cli.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = done.stdout.split()
    assert loaded == ["['mlcc.cli.plan',", "'mlcc.cli.plan.command',", "'mlcc.cli.plan.out']"]
