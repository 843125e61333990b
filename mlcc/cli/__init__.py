"""`mlcc`: offline plan, recommendation jobs and endpoint verification.

Each subcommand lives in its own module with `register(subparsers)`, which adds an argparse
sub-parser whose `run` default returns the exit code. Heavy imports stay inside `run`.
Exit codes: 0 success, 1 a finding or config error, 2 a usage error (argparse's own),
130 interrupted; a closed stdout (`| head`) ends quietly with 0.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

EXIT_INTERRUPTED = 130
SUBCOMMAND_MODULES = ("mlcc.cli.plan", "mlcc.cli.verify", "mlcc.cli.optimize", "mlcc.cli.bench")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlcc", description="Speculative-decoding endpoints on SageMaker HyperPod"
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in SUBCOMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except BrokenPipeError:  # `mlcc ... | head`: the reader left; end quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"{args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
