"""What the draft-training job (hp:draftTraining) costs while it runs: pure, per hour.

The job holds one node of its instance type, so its hourly figure is that type's price (the AWS
Price List's when preflight read it, else the snapshot's, mlcc.preflight.cost.prices). In create
mode that node is one of the group's, already billed in the stack's total: the line says so and
is not added again. How long it runs is unknown: no sourced throughput of speculators' training
exists to estimate it from, so the figure is per hour and the duration is "unknown".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from mlcc.config.draft_training import DraftTrainingConfig
from mlcc.preflight.cost.prices import Price

DURATION = "unknown"


@dataclass(frozen=True)
class TrainingCost:
    job: str
    instance_type: str
    group: str  # "" when the stack does not know the cluster's groups
    in_total: bool  # the node is one the stack's total already counts (create mode)
    price: Price | None
    reason: str = ""  # why there is no price

    @property
    def per_hour(self) -> Decimal | None:
        return None if self.price is None else self.price.usd_per_hour

    def as_json(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "instance_type": self.instance_type,
            "count": 1,
            "group": self.group,
            "in_total": self.in_total,
            "per_hour": None if self.per_hour is None else str(self.per_hour),
            "duration": DURATION,
            "source": self.price.source if self.price else None,
            "not_found": self.reason if self.price is None else None,
        }


def training_cost(
    training: DraftTrainingConfig | None,
    region: str,
    live: Mapping[str, Price],
    snapshot: Mapping[tuple[str, str], Price],
    *,
    in_total: bool,
) -> TrainingCost | None:
    if training is None:
        return None
    kind = training.instance_type
    price = live.get(kind) or snapshot.get((region, kind))
    reason = "" if price else f"no price of {kind} in {region} (snapshot or AWS Price List)"
    return TrainingCost(training.name, kind, training.instance_group, in_total, price, reason)
