"""``GET /metrics``: what this process (or every process of its group)
recorded (:mod:`inspector.metrics`), plus gauges of shared state
(introspections by state, conductors alive, each PXE filter's report,
the fleet view's findings and the follower's last poll:
:mod:`inspector.api.fleet_metrics`) computed when scraped from the
database and the coordination backend, so every API process answers the
same for them."""

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import prometheus_client
from prometheus_client import core, multiprocess

from inspector import states
from inspector.api.fleet_metrics import FleetCollector
from inspector.db import sweeps
from inspector.exceptions import InspectorError
from inspector.metrics import MULTIPROC_ENV, PREFIX
from inspector.runtime import ApiRuntime

LOG = logging.getLogger(__name__)


class SharedStateCollector:
    """Gauges read at scrape time from the database and the conductor group.

    The finished and failed introspections grow with the history; their
    count is reused for ``[metrics]final_states_interval``. The states of
    work in progress are counted at every scrape, from their part of the
    state index (as long as the work, not the history).
    """

    def __init__(self, rt: ApiRuntime) -> None:
        self._rt = rt
        self._final: dict[str, int] = {}
        self._final_at: float | None = None
        self._lock = threading.Lock()

    def _final_counts(self) -> dict[str, int]:
        with self._lock:
            now = time.monotonic()
            interval = self._rt.conf.metrics.final_states_interval
            if self._final_at is None or now - self._final_at >= interval:
                self._final = sweeps.count_by_state(self._rt.db, only=states.FINAL)
                self._final_at = now
            return self._final

    def collect(self) -> Iterator[core.Metric]:
        by_state = core.GaugeMetricFamily(
            f"{PREFIX}_introspections",
            "Introspections by state (the latest of each node); finished and "
            "error are recounted every [metrics]final_states_interval.",
            labels=["state"],
        )
        counts = sweeps.count_by_state(self._rt.db, only=states.TRANSIENT)
        counts.update(self._final_counts())
        for state in states.ALL:
            by_state.add_metric([state], counts.get(state, 0))
        yield by_state
        alive = core.GaugeMetricFamily(
            f"{PREFIX}_conductors_alive",
            "Conductors that are live members of the conductor group.",
        )
        alive.add_metric([], len(self._rt.rpc.router.hosts()))
        yield alive
        yield from _pxe_filters(self._rt)


PXE_GAUGES = (
    (
        "healthy",
        "1 when the PXE filter reports, runs its dnsmasq and is not failing closed.",
    ),
    ("failing_closed", "1 while the PXE filter fails closed (its sources are away)."),
    ("allowed", "MAC entries the PXE filter allows."),
    ("denied", "MAC entries the PXE filter denies."),
    ("unknown_allowed", "1 while the PXE filter lets unknown MACs boot."),
    ("report_lag", "Seconds since the PXE filter last reported."),
    ("generation", "Times the PXE filter wrote entries since it started."),
)


def _pxe_filters(rt: ApiRuntime) -> Iterator[core.Metric]:
    """One gauge family per field of ``GET /v1/pxe-filters``, by host."""
    from inspector.db import pxe
    from inspector.pxe_filter.report import view

    views = [view(row) for row in pxe.filters(rt.db)]
    for field, help_text in PXE_GAUGES:
        name = f"{PREFIX}_pxe_filter_{field}"
        if field == "report_lag":
            name += "_seconds"
        family = core.GaugeMetricFamily(name, help_text, labels=["host"])
        for each in views:
            value = each.get(field)
            family.add_metric([each["host"]], float(value or 0))
        yield family


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
    rt: ApiRuntime,
) -> Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]:
    """The WSGI application answering ``GET /metrics``."""
    shared = [SharedStateCollector(rt), FleetCollector(rt)]

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
            body = prometheus_client.generate_latest(_Registry([recorded(), *shared]))
        except Exception as exc:  # the database or the backend is away
            LOG.warning("Metrics cannot be collected: %s", exc)
            # the details (hosts, users) are the log's: /metrics is public
            what = (
                exc.public
                if isinstance(exc, InspectorError)
                else "Internal server error"
            )
            return _plain(
                start_response,
                "503 Service Unavailable",
                f"Metrics cannot be collected ({what}); the details are in the "
                "service's log\n".encode(),
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
