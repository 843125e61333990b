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
from mlcc.serving.engines import BASE_IMAGE_REPOSITORIES, Engine, release

DOCKERFILES = {engine: IMAGES / engine.value / "Dockerfile" for engine in Engine}
ENGINE_IDS = [engine.value for engine in Engine]
CONTRACT_DIR = Path(engine_contract.__file__).resolve().parent
INSTALL_DIR = "/opt/mlcc/"


def contract_files() -> list[Path]:
    """Every file of the contract package as it is in the repository (bytecode caches aside)."""
    return sorted(
        path
        for path in CONTRACT_DIR.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    )


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
    assert json.loads(only(dockerfile, "ENTRYPOINT")) == ["python3", f"{INSTALL_DIR}serve.py"]
    package = [path.relative_to(REPO).as_posix() for path in contract_files()]
    assert copies(dockerfile) == [
        (["images/serve/serve.py"], INSTALL_DIR),
        (package, f"{INSTALL_DIR}engine_contract/"),
    ]
    assert only(dockerfile, "EXPOSE") == "8080"


@pytest.mark.parametrize("engine", list(Engine), ids=ENGINE_IDS)
def test_image_labels_say_its_engine_release_as_preflight_reads_them(engine: Engine) -> None:
    """`mlcc plan --preflight` reads these labels from ECR (mlcc/preflight/image/part.py)."""
    from mlcc.preflight.image.part import ENGINE_LABEL, VERSION_LABEL

    label = only(DOCKERFILES[engine], "LABEL")
    assert re.search(rf"(^|\s){re.escape(ENGINE_LABEL)}={engine.value}(\s|$)", label)
    version = rf"(^|\s){re.escape(VERSION_LABEL)}=\$\{{ENGINE_VERSION\}}(\s|$)"
    assert re.search(version, label)
    assert "org.opencontainers.image.title=" in label


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


def copies(dockerfile: Path) -> list[tuple[list[str], str]]:
    """(sources, destination) of each COPY, in order."""
    found = []
    for keyword, rest in instructions(dockerfile):
        if keyword == "COPY":
            *sources, destination = (part for part in rest.split() if not part.startswith("--"))
            found.append((sources, destination))
    return found


def copy_sources(dockerfile: Path) -> list[str]:
    return [source for sources, _ in copies(dockerfile) for source in sources]


def test_every_copy_goes_into_a_folder_the_image_made_beforehand() -> None:
    # COPY --chmod=0644 gives the folders it creates mode 0644 on recent Docker: uid 10001
    # could not enter them. The RUN step creates every destination first (mode 0755).
    for dockerfile in DOCKERFILES.values():
        made = only(dockerfile, "RUN").split()
        for _, destination in copies(dockerfile):
            assert destination.endswith("/")
            assert destination == INSTALL_DIR or destination.rstrip("/") in made, destination


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
def test_the_image_carries_every_file_of_the_very_package_mlcc_engine_contract(
    engine: Engine, tmp_path: Path
) -> None:
    # Through the three filters a file passes to reach the image: .dockerignore lets it into the
    # context, a COPY names it, and lands it in the package folder beside serve.py.
    installed = install_like_the_dockerfile(engine, tmp_path) / "engine_contract"
    in_context = set(allowed_files(build_context(IMAGES)))
    landed = sorted(path.relative_to(installed) for path in installed.rglob("*"))
    assert landed == [path.relative_to(CONTRACT_DIR) for path in contract_files()]
    for path in contract_files():
        assert path in in_context, f"{path} is kept out of the build context by .dockerignore"
        assert (installed / path.relative_to(CONTRACT_DIR)).read_bytes() == path.read_bytes()
    assert (installed.parent / "serve.py").read_bytes() == SERVE_PY.read_bytes()
    assert {".py", ".json"} <= {path.suffix for path in landed}  # the modules and the flag data


def install_like_the_dockerfile(engine: Engine, root: Path) -> Path:
    """The context's files at the paths the Dockerfile's COPYs give them; returns /opt/mlcc."""
    context = build_context(IMAGES)
    allowed = set(allowed_files(context))
    for sources, destination in copies(DOCKERFILES[engine]):
        folder = root / destination.lstrip("/")
        folder.mkdir(parents=True, exist_ok=True)
        for source in sources:
            assert context / source in allowed, f"{source} is not in the build context"
            shutil.copyfile(context / source, folder / Path(source).name)
    return root / INSTALL_DIR.strip("/")


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
    assert result.stdout.strip() == str(installed / "engine_contract" / "__init__.py")
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
        pytest.fail("hadolint is not installed: pip install -e '.[dev]'")
    paths = [str(path) for path in DOCKERFILES.values()]
    result = subprocess.run(
        [binary, "--no-color", *paths], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


def run_installed(serve_py: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(serve_py)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={"MLCC_ENGINE": "vllm", "MLCC_DRY_RUN": "1", "HF_MODEL_ID": "org/model"},
    )


def test_an_image_without_the_contract_fails_with_one_line(tmp_path: Path) -> None:
    lone = tmp_path / "opt" / "mlcc" / "serve.py"
    lone.parent.mkdir(parents=True)
    shutil.copyfile(SERVE_PY, lone)
    result = run_installed(lone)
    assert result.returncode == 70
    assert result.stderr.startswith("mlcc-serve: error: cannot load engine_contract")
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("name", "broken"),
    [("engine_flags.json", None), ("engine_flags.json", "{"), ("flags.py", None)],
    ids=["no-flag-data", "bad-flag-data", "no-module"],
)
def test_an_image_with_a_broken_contract_package_fails_with_one_line(
    name: str, broken: str | None, tmp_path: Path
) -> None:
    installed = install_like_the_dockerfile(Engine.VLLM, tmp_path)
    target = installed / "engine_contract" / name
    if broken is None:
        target.unlink()
    else:
        target.write_text(broken)
    result = run_installed(installed / "serve.py")
    assert result.returncode == 70, result.stderr
    assert result.stderr.startswith("mlcc-serve: error: cannot load engine_contract: ")
    assert len(result.stderr.splitlines()) == 1
