"""The serve image of the selected engine: an ECR repository and a linux/amd64 build pushed to it.

The build context is the repository root, narrowed by its .dockerignore to the files the images
copy: the serve wrapper and the files of `mlcc/engine_contract/`, the one package both the
program and the wrapper use (one `!path` line each). The tag is a hash of everything that goes
into the image (those files, this engine's folder under images/, the build arguments, the
platform). An unchanged context gives the same tag, so nothing is rebuilt; a change gives a new
tag in an immutable repository, and the endpoint, which references the pushed digest, rolls its
pods.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pulumi
import pulumi_aws as aws
import pulumi_docker_build as docker_build

from mlcc.components.cluster import iam_policies
from mlcc.serving.engines import Engine

PLATFORM = docker_build.Platform.LINUX_AMD64
DOCKERIGNORE = ".dockerignore"
_IGNORED_PARTS = {"__pycache__", ".pytest_cache", ".mypy_cache"}
KEEP_IMAGES = 20


@dataclass(frozen=True)
class ServeImageArgs:
    engine: Engine
    engine_version: str
    images_dir: Path  # <repository>/images; the build context is its parent
    repository_name: str
    tags: Mapping[str, str]
    # Roles of nodes outside this stack (an existing cluster's instance groups) allowed to pull.
    pull_role_arns: pulumi.Input[Sequence[str]] | None = None


def project_path(path: Path) -> str:
    """`path` relative to the working directory (Pulumi runs the program, and docker-build
    resolves relative locations, in the project folder), so the state and the plan hold the
    same paths in every checkout; a path outside it stays absolute."""
    try:
        return path.relative_to(Path.cwd()).as_posix() or "."
    except ValueError:
        return str(path)


def build_context(images_dir: Path) -> Path:
    return images_dir.parent


def allowed_files(context_dir: Path) -> list[Path]:
    """The files the context's .dockerignore lets in: its `!path` lines (after a `*`)."""
    lines = (context_dir / DOCKERIGNORE).read_text().splitlines()
    return [context_dir / line[1:].strip() for line in lines if line.startswith("!")]


def context_files(images_dir: Path, engine: Engine) -> list[Path]:
    """What this engine's build uses: .dockerignore, the files it lets in, images/<engine>/."""
    context_dir = build_context(images_dir)
    engine_dir = images_dir / engine.value
    files = [context_dir / DOCKERIGNORE, *allowed_files(context_dir)]
    files.extend(
        p
        for p in engine_dir.rglob("*")
        if p.is_file() and not _IGNORED_PARTS & set(p.parts) and p.suffix != ".pyc"
    )
    return sorted(set(files))


def content_tag(images_dir: Path, engine: Engine, build_args: Mapping[str, str]) -> str:
    """`<engine version>-<16 hex>`: equal for equal inputs, different when any input changes."""
    digest = hashlib.sha256()
    digest.update(
        json.dumps({"args": dict(build_args), "platform": PLATFORM.value}, sort_keys=True).encode()
    )
    context_dir = build_context(images_dir)
    for path in context_files(images_dir, engine):
        digest.update(path.relative_to(context_dir).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return f"{build_args.get('ENGINE_VERSION', 'latest')}-{digest.hexdigest()[:16]}"


class ServeImage(pulumi.ComponentResource):
    image_ref: pulumi.Output[str]
    repository_arn: pulumi.Output[str]

    def __init__(
        self, name: str, args: ServeImageArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("hp:index:ServeImage", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        repository = aws.ecr.Repository(
            f"{name}-repository",
            name=args.repository_name,
            image_tag_mutability="IMMUTABLE",
            image_scanning_configuration=aws.ecr.RepositoryImageScanningConfigurationArgs(
                scan_on_push=True
            ),
            encryption_configurations=[
                aws.ecr.RepositoryEncryptionConfigurationArgs(encryption_type="AES256")
            ],
            force_delete=True,
            tags=dict(args.tags),
            opts=child,
        )
        aws.ecr.LifecyclePolicy(
            f"{name}-lifecycle",
            repository=repository.name,
            policy=json.dumps(_keep_recent_images(KEEP_IMAGES)),
            opts=child,
        )
        if args.pull_role_arns is not None:
            aws.ecr.RepositoryPolicy(
                f"{name}-pull",
                repository=repository.name,
                policy=pulumi.Output.from_input(args.pull_role_arns).apply(
                    lambda roles: json.dumps(iam_policies.ecr_repository_pull(list(roles)))
                ),
                opts=child,
            )
        build_args = {"ENGINE_VERSION": args.engine_version}
        tag = content_tag(args.images_dir, args.engine, build_args)
        token = aws.ecr.get_authorization_token_output(
            registry_id=repository.registry_id, opts=pulumi.InvokeOutputOptions(parent=self)
        )
        image = docker_build.Image(
            f"{name}-image",
            context=docker_build.BuildContextArgs(
                location=project_path(build_context(args.images_dir))
            ),
            dockerfile=docker_build.DockerfileArgs(
                location=project_path(args.images_dir / args.engine.value / "Dockerfile")
            ),
            platforms=[PLATFORM],
            build_args=build_args,
            tags=[pulumi.Output.concat(repository.repository_url, ":", tag)],
            push=True,
            # PR previews run without a Docker daemon; the build happens on `pulumi up`.
            build_on_preview=False,
            registries=[
                docker_build.RegistryArgs(
                    address=repository.repository_url,
                    username=token.user_name,
                    password=token.password,
                )
            ],
            labels={"org.opencontainers.image.version": tag, "hp.mlcc/engine": args.engine.value},
            opts=child,
        )
        self.image_ref = pulumi.Output.concat(repository.repository_url, "@", image.digest)
        self.repository_arn = repository.arn
        self.register_outputs({"imageRef": self.image_ref, "repositoryArn": self.repository_arn})


def _keep_recent_images(count: int) -> dict[str, object]:
    return {
        "rules": [
            {
                "rulePriority": 1,
                "description": f"keep the {count} most recent images",
                "selection": {
                    "tagStatus": "any",
                    "countType": "imageCountMoreThan",
                    "countNumber": count,
                },
                "action": {"type": "expire"},
            }
        ]
    }
