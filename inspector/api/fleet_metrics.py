"""Gauges of the fleet view and of the follower of Ironic's inspections
for ``GET /metrics`` (:mod:`inspector.api.metrics`): the findings the
fleet page shows (outliers, cabling problems) and the follower's last
poll, as numbers to alert on, the same in every API process.

The findings are counted from the fleet view this process holds
(:mod:`inspector.api.fleet_view`), through the paths of ``GET
/v1/inventory/outliers`` and ``/cabling``, and kept while the view does
not change; so is the count of nodes changed in the last day, until a
node leaves that window: a scrape with nothing new costs the view's one
statement.
"""

import dataclasses
import datetime
import logging
import threading
from collections.abc import Iterator
from typing import Any

from prometheus_client import core

from inspector import exceptions
from inspector.api import fleet as fleet_api
from inspector.api import fleet_view
from inspector.db import fleet, followed
from inspector.db.models import utcnow
from inspector.metrics import PREFIX
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

CHANGED_WITHIN = datetime.timedelta(days=1)
"""How far back ``fleet_nodes_changed_last_day`` looks."""

PROBLEM_KINDS = ("duplicate-port", "no-neighbour", "unexpected")
"""The cabling problems' kinds (:func:`inspector.fleet.cabling.view`),
each answered, 0 when there is none."""


@dataclasses.dataclass(frozen=True)
class FleetFindings:
    """What the fleet view finds, counted (shared: do not change it)."""

    nodes: int
    """Nodes in the view (with a hardware record)."""
    version: int
    """The view's version they were counted at: it changes with every
    run that ends (its node's finish is one of the view's facts)."""
    outliers: dict[str, int]
    """Outliers by fact, every fact compared among peers."""
    problems: dict[str, int] | None
    """Cabling problems by kind; None when the expected cabling cannot be
    read."""


def findings(rt: Runtime, rules: tuple[Any, ...] | None) -> FleetFindings:
    """The fleet view's findings against the expected-cabling ``rules``
    (None: no cabling), counted once while the view and the options do
    not change."""
    opts = rt.conf.inventory
    depends = (tuple(opts.peer_facts), opts.min_peers, opts.peer_share, rules)
    held = fleet_view.of(rt)
    return held.cached(("metrics", depends), lambda: _count(rt, held, rules))


def _count(
    rt: Runtime, held: fleet_view.HeldFleet, rules: tuple[Any, ...] | None
) -> FleetFindings:
    opts = rt.conf.inventory
    compared = held.view(
        lambda live: (
            live.peer_groups(
                tuple(opts.peer_facts), opts.min_peers, opts.peer_share
            ).compared
        )
    )
    outliers = dict.fromkeys(compared, 0)
    for found in fleet_api.find_outliers(rt):
        outliers[found["fact"]] = outliers.get(found["fact"], 0) + 1
    problems = None
    if rules is not None:
        problems = dict.fromkeys(PROBLEM_KINDS, 0)
        for problem in held.view(lambda live: live.switch_ports(rules).problems()):
            problems[problem["kind"]] = problems.get(problem["kind"], 0) + 1
    nodes, version = held.view(lambda live: (len(live), live.version))
    return FleetFindings(nodes, version, outliers, problems)


def _rules(rt: Runtime) -> tuple[Any, ...] | None:
    """The expected cabling as ``/cabling`` reads it; None (and a warning)
    when it cannot be read: the other gauges are still answered."""
    try:
        return fleet_api.cabling_rules(rt)
    except exceptions.ConfigError as exc:
        LOG.warning("The cabling problems are left out of /metrics: %s", exc)
        return None


def _gauge(
    name: str, help_text: str, value: float | None = None
) -> core.GaugeMetricFamily:
    family = core.GaugeMetricFamily(f"{PREFIX}_{name}", help_text)
    if value is not None:
        family.add_metric([], value)
    return family


def _timestamp(when: datetime.datetime | None) -> float:
    """A naive UTC time (as stored) as Unix time; 0 for none."""
    if when is None:
        return 0.0
    return when.replace(tzinfo=datetime.UTC).timestamp()


class ChangedNodes:
    """The nodes changed in the last day, counted again only when the
    fleet view changed or one of them leaves the window."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._version: int | None = None
        self._count = 0
        self._until: datetime.datetime | None = None
        """When the oldest counted node leaves the window (None: never)."""

    def count(self, rt: Runtime, version: int) -> int:
        """The count at the fleet view's ``version`` (see :class:`FleetFindings`)."""
        now = utcnow()
        with self._guard:
            if version == self._version and (self._until is None or now < self._until):
                return self._count
        count, oldest = fleet.nodes_changed_since(rt.db, now - CHANGED_WITHIN)
        with self._guard:
            self._version, self._count = version, count
            self._until = None if oldest is None else oldest + CHANGED_WITHIN
        return count


class FleetCollector:
    """The fleet view's findings and, when ``[ironic_follow]enabled``, the
    follower's last poll, read at scrape time."""

    def __init__(self, rt: Runtime) -> None:
        self._rt = rt
        self._changed = ChangedNodes()

    def collect(self) -> Iterator[core.Metric]:
        yield from self._fleet()
        if self._rt.conf.ironic_follow.enabled:
            yield from self._follower()

    def _fleet(self) -> Iterator[core.Metric]:
        rt = self._rt
        counted = findings(rt, _rules(rt))
        yield _gauge(
            "fleet_nodes_with_record",
            "Nodes with a hardware record (the nodes of the fleet view).",
            counted.nodes,
        )
        yield _gauge(
            "fleet_nodes_changed_last_day",
            "Nodes with a run that found a hardware change in the last 24 hours.",
            self._changed.count(rt, counted.version),
        )
        outliers = core.GaugeMetricFamily(
            f"{PREFIX}_fleet_outliers",
            "Outliers of the fleet view by fact: nodes whose value differs from "
            "what most of their peers have ([inventory]peer_facts), as GET "
            "/v1/inventory/outliers lists them.",
            labels=["fact"],
        )
        for fact, count in sorted(counted.outliers.items()):
            outliers.add_metric([fact], count)
        yield outliers
        if counted.problems is not None:
            problems = core.GaugeMetricFamily(
                f"{PREFIX}_fleet_cabling_problems",
                "Cabling problems by kind (duplicate-port, no-neighbour, "
                "unexpected), as GET /v1/inventory/cabling lists them.",
                labels=["kind"],
            )
            for kind, count in sorted(counted.problems.items()):
                problems.add_metric([kind], count)
            yield problems

    def _follower(self) -> Iterator[core.Metric]:
        db = self._rt.db
        state = followed.poll_state(db)
        yield _gauge(
            "ironic_follow_last_poll_timestamp_seconds",
            "When the follower's last poll of Ironic ended without error, "
            "whichever process made it (Unix time; 0: none yet).",
            _timestamp(state.polled_at if state else None),
        )
        yield _gauge(
            "ironic_follow_lag_seconds",
            "How far the history is behind Ironic at the last poll that ended: "
            "seconds between the newest inspection Ironic finished and the "
            "newest recorded (no sample: no poll yet).",
            state.lag if state and state.lag is not None else None,
        )
        yield _gauge(
            "ironic_follow_last_poll_failed",
            "1 when the follower's last poll stopped early (Ironic unreachable, "
            "failing or refusing; the error is in the poller's log).",
            1 if state and state.failed_at is not None else 0,
        )
        yield _gauge(
            "ironic_follow_nodes",
            "Nodes with an inspection of Ironic's recorded.",
            followed.count(db),
        )
