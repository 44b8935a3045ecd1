"""Prometheus metrics: what the service records and how it is exposed.

Counters and histograms are recorded where the work happens (a conductor,
the standalone process, an API process that reads Ironic). Gauges of shared
state (introspections by state, conductors alive) are computed when scraped,
from the database and the coordination backend, so every API process answers
the same for them.

Several processes of one API (mod_wsgi daemon processes) share their
recorded values through ``PROMETHEUS_MULTIPROC_DIR``, prometheus_client's
multi-process mode: it must be set before ``prometheus_client`` is imported,
which :mod:`inspector.wsgi` does under mod_wsgi.
"""

import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import prometheus_client
from prometheus_client import core, multiprocess

if TYPE_CHECKING:
    from inspector.runtime import Runtime

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


class SharedStateCollector:
    """Gauges read at scrape time from the database and the conductor group."""

    def __init__(self, rt: "Runtime") -> None:
        self._rt = rt

    def collect(self) -> Iterator[core.Metric]:
        from inspector import states
        from inspector.db import introspections

        by_state = core.GaugeMetricFamily(
            f"{PREFIX}_introspections",
            "Introspections by state (the latest of each node).",
            labels=["state"],
        )
        counts = introspections.count_by_state(self._rt.db)
        for state in states.ALL:
            by_state.add_metric([state], counts.get(state, 0))
        yield by_state
        router = self._rt.rpc.router if self._rt.rpc is not None else None
        if router is not None:
            alive = core.GaugeMetricFamily(
                f"{PREFIX}_conductors_alive",
                "Conductors that are live members of the conductor group.",
            )
            alive.add_metric([], len(router.hosts()))
            yield alive


class _Registry:
    """What one scrape exposes: recorded values plus the shared-state gauges."""

    def __init__(self, sources: Iterable[Any]) -> None:
        self._sources = list(sources)

    def collect(self) -> Iterator[core.Metric]:
        for source in self._sources:
            yield from source.collect()


def recorded() -> Any:
    """The values this process (or every process of its group) recorded."""
    if os.environ.get(MULTIPROC_ENV):
        registry = prometheus_client.CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return prometheus_client.REGISTRY


def exposition_app(
    rt: "Runtime",
) -> Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]:
    """The WSGI application answering ``GET /metrics``."""
    shared = SharedStateCollector(rt)

    def app(
        environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            return _plain(
                start_response,
                "405 Method Not Allowed",
                b"Only GET and HEAD are allowed on /metrics\n",
                [("Allow", "GET, HEAD")],
            )
        try:
            body = prometheus_client.generate_latest(_Registry([recorded(), shared]))
        except Exception as exc:  # the database or the backend is away
            LOG.warning("Metrics cannot be collected: %s", exc)
            return _plain(
                start_response,
                "503 Service Unavailable",
                f"Metrics cannot be collected: {exc}\n".encode(),
                [("Retry-After", "5")],
            )
        if environ.get("REQUEST_METHOD") == "HEAD":
            body = b""
        return _plain(
            start_response,
            "200 OK",
            body,
            [],
            content_type=prometheus_client.CONTENT_TYPE_LATEST,
        )

    return app


def _plain(
    start_response: Callable[..., Any],
    status: str,
    body: bytes,
    extra: list[tuple[str, str]],
    content_type: str = "text/plain; charset=utf-8",
) -> list[bytes]:
    headers = [("Content-Type", content_type), ("Content-Length", str(len(body)))]
    start_response(status, headers + extra)
    return [body]


def start_exporter(address: str, port: int) -> None:
    """Serve this process's recorded values on ``address:port`` (conductors)."""
    prometheus_client.start_http_server(port, addr=address)
    LOG.info("Metrics of this conductor on http://%s:%d/metrics", address, port)
