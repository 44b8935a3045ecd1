"""Following Ironic's own inspections by polling its node list.

A poll reads one page of nodes sorted on ``inspection_finished_at`` after
the node of the newest inspection recorded (the marker), so a poll with
nothing new costs Ironic one short query; each node whose finish moved
costs one inventory read and one transaction (:func:`followed.record`).
The marker is checked first (one node read): a marker node inspected
again since would hide what finished between, so the next newest is
tried, and a whole scan made when none holds. A whole scan (every node,
the needed fields only) is made at the first poll of a process or lead
and every ``[ironic_follow]full_scan_interval``.

Nodes are handled in the order they finished, the next few inventories
read while one is recorded (:data:`READ_AHEAD`, :mod:`readahead`), each
read's failure met at its node's turn; a poll stops at the first
failure that may pass (Ironic away, a policy refusal) so the marker
never moves past an inspection not yet recorded; failures that will not
pass (the node deleted, no inventory, not an inventory) are marked as
seen with one log line each, so they never stop the follower.
"""

import dataclasses
import datetime
import functools
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from inspector import exceptions, metrics, states
from inspector.db import followed, introspections
from inspector.follow import observe, readahead
from inspector.outages import OutageLog
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

INVENTORY_VERSION = (1, 81)
"""The node inventory endpoint's microversion."""
MARKER_TRIES = 3
"""Recorded inspections tried as the marker before a whole scan."""
INSPECTOR_INTERFACE = "inspector"
"""Nodes Ironic inspects by calling this service: recorded as ours."""
READ_AHEAD = 4
"""Inventory reads under way at once while a poll records many new
inspections: the one being recorded and the next three. A turn is Ironic's
answer (25-30 ms of its CPU at 10,000 nodes, doc/benchmarks.md) then our
recording (8-10 ms and a transaction); with three reads ahead, Ironic's
answers come while we record, and a fourth would only queue at Ironic's
API, taking its workers from its other clients. At most three reads are
thrown away when a poll stops early."""


def parse_time(value: Any) -> datetime.datetime | None:
    """Ironic's ISO 8601 time as a naive UTC datetime (as stored)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is not None:
        when = when.astimezone(datetime.UTC).replace(tzinfo=None)
    return when


def inspection_of(node: dict[str, Any]) -> followed.Inspection | None:
    """The inspection Ironic's ``node`` shows as finished; None if none."""
    finished = parse_time(node.get("inspection_finished_at"))
    if finished is None:
        return None
    started = parse_time(node.get("inspection_started_at"))
    return followed.Inspection(str(node["uuid"]), started, finished)


class Stop(Exception):
    """The poll stops here; the next one resumes (logged by the caller)."""

    def __init__(self, cause: str, message: str) -> None:
        super().__init__(message)
        self.cause = cause


@dataclasses.dataclass
class PollReport:
    """What one poll did."""

    full: bool = False
    listed: int = 0
    recorded: int = 0
    known: int = 0
    skipped: int = 0
    lag: float | None = None
    """Seconds Ironic's newest finish is ahead of the newest recorded."""


class Follower:
    """The follower of one process (the standalone one or the leader)."""

    def __init__(
        self, rt: Runtime, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rt = rt
        self._clock = clock
        self._full_at: float | None = None
        """When the last whole scan ended (None: none since the lead)."""
        self._version_ok = False
        self.refused: str | None = None
        """Why this Ironic cannot be followed (too old): polls stop."""
        self._outage = OutageLog(LOG, "Following Ironic's inspections")

    def reset(self) -> None:
        """The lead was lost or taken: the next poll scans everything."""
        self._full_at = None

    # the poll

    def poll(self) -> PollReport | None:
        """One poll, logged and noted (:func:`followed.note_poll`); None
        when it stopped early or is refused."""
        if self.refused is not None:
            return None
        try:
            report = self.poll_once()
        except Stop as exc:
            metrics.FOLLOW_ERRORS.labels(exc.cause).inc()
            self._outage.failed(str(exc))
            self._note(str(exc))
            return None
        except exceptions.DatabaseUnavailable as exc:
            metrics.FOLLOW_ERRORS.labels("database").inc()
            self._outage.failed(f"the database is unreachable: {exc.reason}")
            return None
        self._outage.ok()
        self._note(None, report.lag)
        if report.recorded or report.skipped:
            LOG.info(
                "Followed Ironic (%s): %d inspections recorded, %d skipped, "
                "%d nodes listed",
                "whole scan" if report.full else "poll",
                report.recorded,
                report.skipped,
                report.listed,
            )
        return report

    def _note(self, error: str | None, lag: float | None = None) -> None:
        try:
            followed.note_poll(self.rt.db, self.rt.conf.host, error, lag)
        except exceptions.DatabaseUnavailable as exc:
            LOG.debug("The follower's poll was not noted: %s", exc.reason)

    def poll_once(self) -> PollReport:
        """One poll; :class:`Stop` where it stopped.

        :raises Stop: Ironic is away, failing or refusing.
        """
        self._check_version()
        conf = self.rt.conf.ironic_follow
        now = self._clock()
        interval = conf.full_scan_interval
        full = self._full_at is None or (0 < interval <= now - self._full_at)
        nodes: list[dict[str, Any]] | None = None
        if not full:
            nodes = self._after_marker()
            full = nodes is None
        if nodes is None:
            nodes = self._whole_list()
        report = PollReport(full=full, listed=len(nodes))
        self._handle(nodes, report)
        if full:
            self._full_at = self._clock()
        return report

    def _check_version(self) -> None:
        if self._version_ok:
            return
        version = self._call(self.rt.baremetal.max_version)
        if version is not None:
            major, _dot, minor = version.partition(".")
            if not (major.isdigit() and (minor or "0").isdigit()):
                LOG.warning("Ironic's API version %r is not MAJOR.MINOR", version)
            elif (int(major), int(minor or 0)) < INVENTORY_VERSION:
                self.refused = (
                    f"Ironic's API goes up to {version}: following its "
                    "inspections needs 1.81 (the node inventory, Ironic 21.3 "
                    "and later); [ironic_follow]enabled has no effect"
                )
                LOG.error("%s", self.refused)
                raise Stop("too_old", self.refused)
        self._version_ok = True

    def _call(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """An Ironic call whose failure stops the poll."""
        try:
            return func(*args, **kwargs)
        except exceptions.BaremetalForbidden as exc:
            raise Stop(
                "refused",
                f"{exc}: this service's Ironic user needs to list nodes and "
                "read their inventory (Ironic's policies baremetal:node:list "
                "and baremetal:node:inventory:get; by Ironic's defaults a "
                "system-scoped reader has both)",
            ) from exc
        except exceptions.BaremetalError as exc:
            raise Stop(
                "unreachable", f"Ironic is unreachable or failing: {exc}"
            ) from exc

    def _after_marker(self) -> list[dict[str, Any]] | None:
        """The nodes that finished after the newest recorded inspection
        whose node still shows it; None: no such marker (scan whole)."""
        client = self.rt.baremetal
        size = self.rt.conf.ironic_follow.page_size
        for candidate in followed.newest(self.rt.db, MARKER_TRIES):
            try:
                node = self._call(client.inspected_node, candidate.node_uuid)
            except exceptions.NotFound:
                continue  # deleted: another marker
            if parse_time(node.get("inspection_finished_at")) != candidate.finished_at:
                continue  # inspected again since: it would hide the ones between
            return self._pages(
                lambda marker: client.inspected_page(size, marker),
                candidate.node_uuid,
                sorted_on_finish=True,
            )
        return None

    def _whole_list(self) -> list[dict[str, Any]]:
        client = self.rt.baremetal
        size = self.rt.conf.ironic_follow.page_size
        return self._pages(
            lambda marker: client.inspected_page(size, marker, by_finish=False), None
        )

    def _pages(
        self,
        page: Callable[[str | None], list[dict[str, Any]]],
        marker: str | None,
        sorted_on_finish: bool = False,
    ) -> list[dict[str, Any]]:
        """Every page after ``marker``; sorted on the finish, the pages end
        at the first node never inspected (a PostgreSQL Ironic sorts those
        last, and there may be thousands)."""
        size = self.rt.conf.ironic_follow.page_size
        nodes: list[dict[str, Any]] = []
        while True:
            found = self._call(page, marker)
            nodes += found
            if len(found) < size:
                return nodes
            if sorted_on_finish and not found[-1].get("inspection_finished_at"):
                return nodes
            marker = found[-1]["uuid"]

    # each node

    def _handle(self, nodes: list[dict[str, Any]], report: PollReport) -> None:
        inspected = []
        for node in nodes:
            if node.get("inspect_interface") == INSPECTOR_INTERFACE:
                continue
            inspection = inspection_of(node)
            if inspection is not None:
                inspected.append((inspection, node))
        inspected.sort(key=lambda pair: (pair[0].finished_at, pair[0].node_uuid))
        if report.full:
            seen = followed.seen_all(self.rt.db)
        else:
            seen = followed.seen(self.rt.db, [i.node_uuid for i, _n in inspected])
        newest_ironic = inspected[-1][0].finished_at if inspected else None
        # recorded ones left out first: with a finish on their row, that
        # check reads and writes nothing; the rest, a push's row among
        # them (its check may end the row, moving the marker), are checked
        # in their turn below, after every earlier one was recorded
        turns = []
        for inspection, node in inspected:
            known = seen.get(inspection.node_uuid)
            if (
                known is not None
                and known.finished_at is not None
                and self._already(inspection, known)
            ):
                report.known += 1
            else:
                turns.append((inspection, node, known))
        reads = readahead.ReadAhead(
            self.rt.baremetal.get_inventory,
            [inspection.node_uuid for inspection, _n, _k in turns],
            READ_AHEAD,
        )
        with reads:
            for index, (inspection, node, known) in enumerate(turns):
                read = reads.take(index)
                if known is not None and self._already(inspection, known):
                    report.known += 1
                elif self.record(node, inspection, "poll", read):
                    report.recorded += 1
                else:
                    report.skipped += 1
        report.lag = self._lag(newest_ironic)

    def _already(
        self, inspection: followed.Inspection, known: followed.Inspection
    ) -> bool:
        """Whether ``inspection`` is the one recorded (or older)."""
        if known.finished_at is None and followed.ended_push(self.rt.db, inspection):
            return True  # a push's, now ended (Ironic cleared its start)
        if inspection.same_as(known):
            return True
        assert inspection.finished_at is not None
        return (
            known.finished_at is not None and inspection.finished_at < known.finished_at
        )

    def record_notified(self, uuid: str) -> bool:
        """Record the inspection of ``uuid`` a notification says ended
        (read again from Ironic); True if a run was recorded.

        :raises Stop: Ironic is away, failing or refusing.
        """
        if self.refused is not None:
            return False
        self._check_version()
        try:
            node = self._call(self.rt.baremetal.inspected_node, uuid)
        except exceptions.NotFound:
            return False  # deleted since: nothing to read
        if node.get("inspect_interface") == INSPECTOR_INTERFACE:
            return False
        inspection = inspection_of(node)
        if inspection is None:
            return False
        known = followed.seen(self.rt.db, [uuid]).get(uuid)
        if known is not None and self._already(inspection, known):
            return False
        return self.record(node, inspection, "notification")

    def _lag(self, newest_ironic: datetime.datetime | None) -> float:
        recorded = followed.newest(self.rt.db, 1)
        if newest_ironic is None or not recorded or recorded[0].finished_at is None:
            behind = 0.0
        else:
            behind = max(0.0, (newest_ironic - recorded[0].finished_at).total_seconds())
        return behind

    def record(
        self,
        node: dict[str, Any],
        inspection: followed.Inspection,
        way: str,
        read: Callable[[], dict[str, Any]] | None = None,
    ) -> bool:
        """Read ``node``'s inventory and record ``inspection``; True if a
        run was recorded, False if it was skipped (logged) or known.
        ``read``: the inventory's read made ahead (:mod:`readahead`),
        taken here in place of asking Ironic.

        :raises Stop: Ironic is away, failing or refusing.
        """
        uuid, name = inspection.node_uuid, node.get("name")
        what = f"Node {uuid} ({name or 'no name'})"
        if self._ours_running(inspection):
            return False
        if read is None:
            read = functools.partial(self.rt.baremetal.get_inventory, uuid)
        try:
            answer = self._call(read)
        except exceptions.NotFound as exc:
            if self._gone(uuid):
                return self._skip(inspection, "gone", f"{what} was deleted from Ironic")
            return self._skip(
                inspection,
                "no_inventory",
                f"{what}: Ironic keeps no inventory of its inspection ({exc}); "
                "is Ironic's [inventory]data_backend 'none'?",
            )
        except exceptions.InvalidInput as exc:
            return self._skip(inspection, "not_inventory", f"{what}: {exc}")
        size = len(json.dumps(answer))
        limit = self.rt.conf.ironic_follow.max_inventory_size
        if size > limit:
            return self._skip(
                inspection,
                "too_large",
                f"{what}: the inventory Ironic stored is {size} bytes, more "
                f"than [ironic_follow]max_inventory_size ({limit})",
            )
        try:
            data = observe.as_processed(
                answer.get("inventory"), answer.get("plugin_data")
            )
            run = observe.run_of(
                self.rt.db, node, data, "ironic", node.get("inspect_interface")
            )
        except exceptions.InvalidInput as exc:
            return self._skip(inspection, "not_inventory", f"{what}: {exc}")
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            # a shape no ramdisk sends: one node must not stall the follower
            LOG.exception("%s: Ironic's stored data could not be read", what)
            return self._skip(inspection, "not_inventory", f"{what}: {exc!r}")
        if not followed.record(self.rt.db, inspection, run):
            return False
        metrics.FOLLOW_RUNS.labels(way).inc()
        LOG.info(
            "%s: Ironic's inspection (%s) finished at %s recorded as run %s",
            what,
            node.get("inspect_interface") or "unknown interface",
            inspection.finished_at.isoformat() if inspection.finished_at else "-",
            run.run,
        )
        return True

    def _ours_running(self, inspection: followed.Inspection) -> bool:
        """Whether an introspection of ours started before this inspection
        (or, its start cleared, before its finish) and still runs: Ironic's
        inspection is then ours (out of band,
        ``[redfish]engine = ironic``), which marks it seen when it reads
        it; left alone until then."""
        try:
            row = introspections.get(self.rt.db, inspection.node_uuid)
        except exceptions.IntrospectionNotFound:
            return False
        if row.state in states.FINAL or row.started_at is None:
            return False
        # Ironic clears the start of an inspection that ended well: its
        # finish tells then (ours started before Ironic's finish)
        when = inspection.started_at or inspection.finished_at
        return when is not None and row.started_at <= when

    def _gone(self, uuid: str) -> bool:
        """Whether the node is no longer in Ironic (its inventory's 404
        says the same for a deleted node and a missing inventory)."""
        try:
            self._call(self.rt.baremetal.inspected_node, uuid)
        except exceptions.NotFound:
            return True
        return False

    def _skip(self, inspection: followed.Inspection, cause: str, message: str) -> bool:
        metrics.FOLLOW_SKIPPED.labels(cause).inc()
        if followed.skip(self.rt.db, inspection):
            LOG.warning("%s: not recorded in the hardware history", message)
        return False
