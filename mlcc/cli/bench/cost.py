"""`mlcc bench`'s price: the hourly price of the nodes the measured endpoint's pods use.

`--usd-per-hour USD` gives it; else with `--stack` it is the endpoint's share of its instance
type's nodes by GPUs (mlcc.preflight.cost.estimate), priced from the snapshot, or from the
AWS Price List API with `--price-list` (the same lookup as preflight's, docs/cost.md). None
without either.
"""

from __future__ import annotations

import argparse
from decimal import Decimal
from pathlib import Path
from typing import Any

from mlcc.bench.cost import positive_decimal


def add_arguments(parser: Any) -> None:
    parser.add_argument(
        "--usd-per-hour",
        metavar="USD",
        help=(
            "the hourly price of the nodes the endpoint's pods use, for $ per 1M output tokens "
            "(default with --stack: the endpoint's share of its nodes, docs/cost.md)"
        ),
    )
    parser.add_argument(
        "--price-list",
        action="store_true",
        help="with --stack: price the nodes from the AWS Price List API (boto3's credentials)",
    )


class PriceError(ValueError):
    pass


def hourly_price(args: argparse.Namespace, endpoint: str | None) -> tuple[Decimal | None, str]:
    """(USD per hour, where it comes from); (None, why) when there is no price."""
    if args.usd_per_hour is not None:
        given = positive_decimal(str(args.usd_per_hour).strip())
        if given is None:
            raise PriceError(
                f"--usd-per-hour: must be a number of dollars above 0, got {args.usd_per_hour!r}"
            )
        return given, "--usd-per-hour"
    if not args.stack or endpoint is None:
        return None, "no price: give --usd-per-hour, or --stack"
    return _stack_share(Path(args.project_dir), args.stack, endpoint, args.price_list)


def _stack_share(
    project_dir: Path, stack: str, endpoint: str, price_list: bool
) -> tuple[Decimal | None, str]:
    from mlcc.config import stack as stack_config
    from mlcc.preflight.cost import estimate as cost
    from mlcc.preflight.cost import prices
    from mlcc.stackfiles import resolve as stackfiles

    project = stackfiles.load_project(project_dir)
    values = stackfiles.resolve(project, stackfiles.load_stack(project_dir, stack), stack=stack)
    config = stack_config.parse(values.values, stack=stack, secret_keys=values.secret_keys).config
    live: tuple[Any, ...] = ()
    if price_list:
        from mlcc.preflight.cost.price_list import pricing_part
        from mlcc.preflight.run import deadline_seconds

        live = pricing_part(config, deadline_seconds()).prices
    costing = cost.costing(config, live, prices.snapshot(), preflight_ran=price_list)
    share = next((s for s in costing.shares if s.endpoint == endpoint), None)
    if share is None or share.per_hour is None:
        missing = ", ".join(f"{line.billed.item}: {line.reason}" for line in costing.not_found)
        return None, f"no price ({missing or 'the endpoint has no nodes of its type'})"
    kinds = ", ".join(kind for kind, _ in costing.sources())
    return share.per_hour, (
        f"{share.gpus} of {share.of_gpus} GPUs of {share.instance_type} in {stack}, {kinds}"
    )
