"""Prometheus metrics the service records, where the work happens (a
conductor, the standalone process, an API process that reads Ironic).

How they are exposed is :mod:`inspector.api.metrics` (``GET /metrics``)
and the conductor's own exporter (``[metrics]conductor_port``). Several
processes of one API (mod_wsgi daemon processes) share their recorded
values through ``PROMETHEUS_MULTIPROC_DIR``, prometheus_client's
multi-process mode: it must be set before ``prometheus_client`` is
imported, which :mod:`inspector.wsgi` does under mod_wsgi.
"""

import logging
import re
import time
from typing import TYPE_CHECKING, Any

import prometheus_client

if TYPE_CHECKING:
    pass

LOG = logging.getLogger(__name__)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
PREFIX = "ironic_inspector"

PROCESSING_SECONDS = prometheus_client.Histogram(
    f"{PREFIX}_processing_seconds",
    "Time to process the ramdisk's data of one node (hooks, rules, Ironic "
    "updates), by result.",
    ["result"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
IRONIC_CALL_SECONDS = prometheus_client.Histogram(
    f"{PREFIX}_ironic_call_seconds",
    "Latency of calls to the Ironic API, retries included, by call.",
    ["call"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
IRONIC_CALL_ERRORS = prometheus_client.Counter(
    f"{PREFIX}_ironic_call_errors",
    "Calls to the Ironic API that failed after their retries, by call.",
    ["call"],
)
LOCK_WAIT_SECONDS = prometheus_client.Histogram(
    f"{PREFIX}_lock_wait_seconds",
    "Time a conductor waited for a node's lock before working on it.",
    buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 30, 60),
)
ORPHANS_RESOLVED = prometheus_client.Counter(
    f"{PREFIX}_orphans_resolved",
    "Steps of other (dead or restarted) conductor runs taken over, by outcome: "
    "resumed, or failed when they could not be resumed.",
    ["outcome"],
)

STEPS_TAKEN_OVER = prometheus_client.Counter(
    f"{PREFIX}_steps_taken_over",
    "Steps a conductor resumed by takeover, by step and by cause: "
    "owner_left (its conductor left the group), addressee_left (its cast "
    "went to a conductor that left before claiming it), unclaimed (claim "
    "deadline passed), restarted (an earlier run of this conductor), "
    "ended_early (its worker here ended without finishing it).",
    ["step", "cause"],
)

HARDWARE_CHANGES = prometheus_client.Counter(
    f"{PREFIX}_hardware_changes",
    "Hardware changes found by runs against the node's run before, by kind: "
    "added, removed, changed (one per changed attribute).",
    ["kind"],
)

FOLLOW_RUNS = prometheus_client.Counter(
    f"{PREFIX}_follow_runs",
    "Ironic's own inspections recorded in the hardware history, by how "
    "they arrived: poll, notification, push.",
    ["way"],
)

FOLLOW_SKIPPED = prometheus_client.Counter(
    f"{PREFIX}_follow_skipped",
    "Ironic's inspections that could not be recorded, by cause: gone (the "
    "node was deleted), no_inventory, too_large, not_inventory, refused.",
    ["cause"],
)

FOLLOW_ERRORS = prometheus_client.Counter(
    f"{PREFIX}_follow_errors",
    "Polls of Ironic that stopped early (Ironic unreachable or failing, a "
    "policy refusal); the next poll resumes where they stopped.",
    ["cause"],
)

LOCKS_BROKEN = prometheus_client.Counter(
    f"{PREFIX}_locks_broken",
    "Node locks of conductors that left the group broken by the leader, "
    "and of an earlier run broken by a conductor started again under its "
    "name (etcd), instead of waiting out their lease.",
)


def call_label(what: str) -> str:
    """ "set power state 'power off'" -> 'set_power_state_power_off'."""
    return re.sub(r"[^a-z0-9]+", "_", what.lower()).strip("_")


class IronicCallTimer:
    """Context manager timing one Ironic call and counting its failure."""

    def __init__(self, what: str) -> None:
        self.call = call_label(what)
        self._started = 0.0

    def __enter__(self) -> "IronicCallTimer":
        self._started = time.monotonic()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        IRONIC_CALL_SECONDS.labels(self.call).observe(time.monotonic() - self._started)
        if exc_type is not None:
            IRONIC_CALL_ERRORS.labels(self.call).inc()
