"""What the stack costs per hour: what it bills, at which prices, each endpoint's share.

Pure. The billed things come from the parsed stack, the way the components create them
(mlcc/components/program.py): in create mode each HyperPod instance group, one EKS control plane
(and its extended-support surcharge while hp:kubernetesVersion is in EKS extended support on the
plan's date, docs/kubernetes-facts.md) and the NAT gateways of a new VPC (one, or one per
public subnet with natGatewayPerAz); an existing cluster's nodes and network are not created by
the stack, so not priced here. Prices are the AWS Price List's when preflight read them, else the
snapshot's (mlcc.preflight.cost.prices).
Figures are `Decimal`, exact: a price times a count, their sum, the sum times 730 hours; only an
endpoint's share (a fraction of GPUs) is rounded, to the cent. A price not found leaves the total
unknown: it is never counted as $0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from mlcc.config.aws.capacity import start_pods
from mlcc.config.aws.instances import GPU_COUNTS
from mlcc.config.infrastructure import NewCluster, NewNetwork
from mlcc.config.stack import StackConfig
from mlcc.facts import kubernetes_versions as k8s_versions
from mlcc.preflight.cost.prices import (
    API_SOURCE,
    EKS_CONTROL_PLANE,
    EKS_EXTENDED_SUPPORT,
    HOURS_PER_MONTH,
    NAT_GATEWAY,
    Missing,
    Price,
)
from mlcc.preflight.cost.public_ipv4 import PUBLIC_IPV4, SNAPSHOT_ONLY
from mlcc.preflight.cost.public_ipv4 import unpriced as unpriced_item
from mlcc.preflight.cost.training import TrainingCost, training_cost

ALWAYS_UNPRICED = ("EBS volumes", "data transfer", "load balancer hours")
CENT = Decimal("0.01")
SNAPSHOT = "snapshot"
LIVE = "AWS Price List API"


@dataclass(frozen=True)
class Billed:
    item: str  # an instance type, EKS_CONTROL_PLANE or NAT_GATEWAY
    count: int
    group: str = ""  # the instance group's name


@dataclass(frozen=True)
class Line:
    billed: Billed
    price: Price | None
    reason: str = ""  # why there is no price

    @property
    def per_hour(self) -> Decimal | None:
        return None if self.price is None else self.price.usd_per_hour * self.billed.count


@dataclass(frozen=True)
class Share:
    endpoint: str
    instance_type: str
    gpus: int  # the GPUs its pods hold
    of_gpus: int  # the GPUs of the stack's nodes of that type
    per_hour: Decimal | None  # rounded to the cent


@dataclass(frozen=True)
class KubernetesSupport:
    """Where a created cluster's Kubernetes version stands in the EKS calendar on the plan's
    date (mlcc.facts.kubernetes_versions)."""

    version: str
    on: date
    support: str  # a k8s_versions.Support value
    end_of_standard: date
    end_of_extended: date

    def as_json(self) -> dict[str, str]:
        return {
            "version": self.version,
            "on": str(self.on),
            "support": self.support,
            "end_of_standard": str(self.end_of_standard),
            "end_of_extended": str(self.end_of_extended),
        }


def kubernetes_support(config: StackConfig, on: date | None = None) -> KubernetesSupport | None:
    """The created cluster's version in the calendar; None for a cluster the stack does not
    create, or a version the table does not hold (the config refuses it)."""
    cluster = config.infrastructure.cluster
    if not isinstance(cluster, NewCluster):
        return None
    row = k8s_versions.BY_VERSION.get(cluster.kubernetes_version)
    if row is None:
        return None
    day = on or k8s_versions.today()
    return KubernetesSupport(
        row.version, day, row.support(day).value, row.end_of_standard, row.end_of_extended
    )


@dataclass(frozen=True)
class Costing:
    region: str
    lines: tuple[Line, ...]
    shares: tuple[Share, ...] = ()
    not_priced: tuple[str, ...] = ALWAYS_UNPRICED
    differences: tuple[str, ...] = ()  # where a live price differs from the snapshot's
    kubernetes: KubernetesSupport | None = None
    capture: tuple[str, ...] = ()  # hp:capture's S3 storage, one text per endpoint, unpriced
    training: TrainingCost | None = None  # hp:draftTraining, per hour while it runs

    @property
    def not_found(self) -> tuple[Line, ...]:
        return tuple(line for line in self.lines if line.price is None)

    @property
    def priced_per_hour(self) -> Decimal:
        return sum((line.per_hour or Decimal(0) for line in self.lines), Decimal(0))

    @property
    def total_per_hour(self) -> Decimal | None:
        """The whole stack's hourly price; None while any price is not found."""
        return None if self.not_found else self.priced_per_hour

    def largest(self, count: int = 3) -> list[Line]:
        priced = [line for line in self.lines if line.per_hour is not None]
        return sorted(priced, key=lambda line: line.per_hour or 0, reverse=True)[:count]

    def sources(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """(source kind, its prices' (date, what the date is), sorted) of the prices used: the
        Price List's publication dates, the snapshot's dates in effect or read."""
        found: dict[str, set[tuple[str, str]]] = {}
        for line in self.lines:
            if line.price is not None:
                kind = LIVE if line.price.source == API_SOURCE else SNAPSHOT
                found.setdefault(kind, set()).add((line.price.published, line.price.date_is))
        return [(kind, sorted(dates)) for kind, dates in sorted(found.items())]

    def as_json(self) -> dict[str, Any]:
        total = self.total_per_hour
        return {
            "region": self.region,
            "lines": [_line_json(line) for line in self.lines],
            "total_per_hour": _text(total),
            "total_per_month": _text(None if total is None else total * HOURS_PER_MONTH),
            "priced_per_hour": str(self.priced_per_hour),
            "hours_per_month": str(HOURS_PER_MONTH),
            "not_found": [line.billed.item for line in self.not_found],
            "not_priced": list(self.not_priced),
            "shares": [
                {
                    "endpoint": s.endpoint,
                    "instance_type": s.instance_type,
                    "gpus": s.gpus,
                    "of_gpus": s.of_gpus,
                    "per_hour": _text(s.per_hour),
                }
                for s in self.shares
            ],
            "sources": [
                {"source": kind, "dates": [{"date": d, "date_is": what} for d, what in dates]}
                for kind, dates in self.sources()
            ],
            "differences": list(self.differences),
            "kubernetes": None if self.kubernetes is None else self.kubernetes.as_json(),
            "capture": list(self.capture),
            "draft_training": None if self.training is None else self.training.as_json(),
        }


def _line_json(line: Line) -> dict[str, Any]:
    price = line.price
    return {
        "item": line.billed.item,
        "count": line.billed.count,
        "group": line.billed.group,
        "usd_per_hour": _text(price.usd_per_hour if price else None),
        "per_hour": _text(line.per_hour),
        "date": price.published if price else None,
        "date_is": price.date_is if price else None,
        "source": price.source if price else None,
        "not_found": line.reason if price is None else None,
    }


def _text(amount: Decimal | None) -> str | None:
    return None if amount is None else str(amount)


def billed(config: StackConfig, on: date | None = None) -> tuple[list[Billed], list[str]]:
    """(what the stack bills by the hour on `on`, the plan's date by default, what else it
    creates that is not priced)."""
    cluster = config.infrastructure.cluster
    if not isinstance(cluster, NewCluster):
        return [], [*ALWAYS_UNPRICED, "the existing cluster (not created by this stack)"]
    items = [Billed(g.instance_type, g.instance_count, g.name) for g in cluster.instance_groups]
    items.append(Billed(EKS_CONTROL_PLANE, 1))
    support = kubernetes_support(config, on)
    if support is not None and support.support == k8s_versions.Support.EXTENDED:
        items.append(Billed(EKS_EXTENDED_SUPPORT, 1))
    network = cluster.network
    if isinstance(network, NewNetwork):
        public = len(network.public_subnet_cidrs)
        nat_gateways = public if network.nat_gateway_per_az else 1
        items.append(Billed(NAT_GATEWAY, nat_gateways))
        items.append(Billed(PUBLIC_IPV4, nat_gateways))  # each NAT gateway's Elastic IP
    system = f"the system nodes ({cluster.system_node_count} x {cluster.system_node_instance_type})"
    return items, [*ALWAYS_UNPRICED, system]


def costing(
    config: StackConfig,
    live: Iterable[Price | Missing],
    snapshot: Mapping[tuple[str, str], Price],
    preflight_ran: bool = False,
    on: date | None = None,
) -> Costing:
    """Every billed thing at its price: the AWS Price List's; the snapshot's where the Price
    List was not read (plain `mlcc plan`, or a lookup that did not answer). Where it answered
    that zero or several products match, the price is not found."""
    region = config.region
    found = {p.item: p for p in live if p.region == region}
    day = on or k8s_versions.today()
    items, unpriced = billed(config, day)
    lines: list[Line] = []
    differences: list[str] = []
    for item in items:
        answer, stored = found.get(item.item), snapshot.get((region, item.item))
        if item.item in SNAPSHOT_ONLY and stored is None:
            unpriced.append(unpriced_item(item.count, region))
        elif isinstance(answer, Price):
            lines.append(Line(item, answer))
            if stored is not None and stored.usd_per_hour != answer.usd_per_hour:
                differences.append(
                    f"{item.item} {usd(stored.usd_per_hour)}/h (snapshot, {stored.date_is} "
                    f"{stored.published}) -> {usd(answer.usd_per_hour)}/h (AWS Price List, "
                    f"{answer.date_is} {answer.published})"
                )
        elif stored is not None and answer is None:  # the Price List was not read
            lines.append(Line(item, stored))
        else:  # the Price List answered: no one product is the price, whatever the snapshot
            lines.append(Line(item, None, _reason(answer, region, preflight_ran)))
    return Costing(
        region,
        tuple(lines),
        shares(config, lines),
        tuple(unpriced),
        tuple(dict.fromkeys(differences)),
        kubernetes_support(config, day),
        capture_items(config),
        training_cost(
            config.draft_training,
            region,
            {k: p for k, p in found.items() if isinstance(p, Price)},
            snapshot,
            in_total=isinstance(config.infrastructure.cluster, NewCluster),
        ),
    )


def capture_items(config: StackConfig) -> tuple[str, ...]:
    """What hp:capture stores in S3, per endpoint: billed per GB-month and per request, not by
    the hour, and no S3 price is in the snapshot, so its price is unknown (docs/cost.md)."""
    return tuple(
        f"S3 storage of endpoint {e.name}'s captured traffic "
        f"({e.operator.capture.sampling_percent}% of requests, kept "
        f"{e.operator.capture.retention_days} days)"
        for e in config.endpoints
        if e.operator.capture is not None
    )


def _reason(answer: Missing | None, region: str, preflight_ran: bool) -> str:
    if isinstance(answer, Missing):
        return answer.reason
    if preflight_ran:
        return f"no snapshot row for {region}, and the AWS Price List was not read"
    return f"no snapshot row for {region}: the price needs --preflight"


def shares(config: StackConfig, lines: Iterable[Line]) -> tuple[Share, ...]:
    """Each endpoint's part of its instance type's hourly price, by the GPUs its pods hold
    (hp:gpuCount per pod, the pods it starts with) over the GPUs of that type's nodes."""
    per_type: dict[str, tuple[int, Decimal | None]] = {}
    for line in lines:
        nodes, hourly = per_type.get(line.billed.item, (0, Decimal(0)))
        more = line.per_hour
        per_type[line.billed.item] = (
            nodes + line.billed.count,
            None if hourly is None or more is None else hourly + more,
        )
    found: list[Share] = []
    for endpoint in config.endpoints:
        kind = endpoint.instance_type
        nodes, hourly = per_type.get(kind, (0, None))
        per_node = GPU_COUNTS.get(kind, 0)
        gpus, of_gpus = start_pods(endpoint) * endpoint.gpu_count, nodes * per_node
        part = None
        if hourly is not None and of_gpus:
            part = (hourly * gpus / of_gpus).quantize(CENT, rounding=ROUND_HALF_UP)
        found.append(Share(endpoint.name, kind, gpus, of_gpus, part))
    return tuple(found)


def usd(amount: Decimal) -> str:
    """`$14.18`, `$0.045`: at least the cents, every digit the figure has, never rounded."""
    sign = "-" if amount < 0 else ""
    amount = abs(amount).normalize()
    shown = amount.quantize(CENT) if amount.as_tuple().exponent >= -2 else amount  # type: ignore[operator]
    return f"{sign}${shown:f}"
