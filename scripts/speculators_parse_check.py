#!/usr/bin/env python3
"""Run the `speculators train` arguments the training job renders through the release's parser.

    python3 scripts/speculators_parse_check.py /tmp/spec-venv/bin/python

where the interpreter has the pinned speculators release installed (0.9.0, with torch; no GPU
is used and no model or data is read). For each sample hp:draftTraining (offline, online, and
trainerArgs of every kind: a float, a choice, a list, a store_true and a --no- boolean) the
program's own `speculators train` argv (mlcc/manifest/training_script.py train_argv) is run as
`python -m speculators train ARGV --dump-config`: the release resolves and validates the whole
configuration and prints it without training (speculators/train/config/resolution.py). Then
the abbreviation check: the release's parser accepts `--epoch` for `--epochs` (argparse's
allow_abbrev), which is why mlcc's table, not the parser, decides what hp:draftTraining.trainerArgs
may name.

It prints one line per case (`ok` or the parser's own error) and exits 1 when the release refuses
an argv the program renders. The output recorded here is in docs/draft-training.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mlcc.config.stack import parse  # noqa: E402
from mlcc.manifest.training_script import train_argv  # noqa: E402

BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "hp:image": "registry.example/vllm:tag",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
}
TRAINING: dict[str, Any] = {
    "instanceGroup": "gpu",
    "dataset": "s3://bucket/datasets/run1/",
    "output": "s3://bucket/heads/run1/",
}
CASES: dict[str, dict[str, Any]] = {
    "offline, defaults": {},
    "online": {"hiddenStates": "online"},
    "trainerArgs": {
        "epochs": 3,
        "trainerArgs": {
            "lr": 5e-4,
            "draft-attn-impl": "sdpa",
            "loss-implementation": "eager",
            "target-layer-ids": [2, 16, 29],
            "save-best": True,
            "norm-output": False,
            "scheduler-type": "cosine",
        },
    },
}


# What the resolved configuration must say (its run.yaml lines) for the case to pass.
EXPECTED: dict[str, tuple[str, ...]] = {
    "offline, defaults": ("on_missing: raise", "epochs: 20", "speculator_type: eagle3"),
    "online": ("on_missing: generate", "vllm_endpoint: http://127.0.0.1:8000/v1"),
    "trainerArgs": (
        "epochs: 3",
        "lr: 0.0005",
        "draft_attn_impl: sdpa",
        "loss_implementation: eager",
        "norm_output: false",
        "save_best: true",
        "scheduler_type: cosine",
    ),
}


def argv_of(changes: dict[str, Any]) -> list[str]:
    values = {**BASE, "hp:draftTraining": json.dumps({**TRAINING, **changes})}
    config = parse(values, stack="check").config.draft_training
    assert config is not None
    return train_argv(config)


def dump(python: str, argv: list[str]) -> tuple[bool, str]:
    result = subprocess.run(
        [python, "-m", "speculators", "train", *argv, "--dump-config"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    last = (result.stderr.strip().splitlines() or [""])[-1]
    return result.returncode == 0, result.stdout if result.returncode == 0 else last


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    python = argv[0]
    failed = 0
    for name, changes in CASES.items():
        ok, text = dump(python, argv_of(changes))
        missing = [line for line in EXPECTED[name] if ok and line not in text]
        if missing:
            ok, text = False, f"the resolved configuration lacks {missing}"
        print(f"{'ok' if ok else 'REFUSED'}: {name}" + ("" if ok else f": {text}"))
        failed += not ok
    base = argv_of({})
    ok, text = dump(python, [*base, "--dump-config", "--ttt-step", "4"])
    print(f"abbreviation --ttt-step (ambiguous): {'accepted' if ok else 'refused: ' + text}")
    without_epochs = [
        w for i, w in enumerate(base) if w != "--epochs" and base[i - 1] != "--epochs"
    ]
    ok, text = dump(python, [*without_epochs, "--epoch", "7"])
    accepted = ok and "epochs: 7" in text
    print(
        f"abbreviation --epoch for --epochs: {'accepted' if accepted else 'refused'} by the parser"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
