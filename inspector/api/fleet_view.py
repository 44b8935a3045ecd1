"""The fleet view each API process holds: read whole once, then kept up
to date by the runs that changed it (:class:`inspector.fleet.live.LiveFleet`),
and the answers of the inventory endpoints and the page kept while it
does not change.

Every request first asks the database whether the view changed (one
cheap statement: :func:`inspector.db.fleet.fingerprint`); when it did,
the nodes whose latest run ended since the last read (less an hour, for
runs committed late) are read and applied, each costing the work of its
peer group and switch ports. The whole view is read again every
``[inventory]full_read_interval`` seconds in the background, as a
safety net, a chunk at a time so requests are not held up.
"""

import contextlib
import logging
import threading
import time
import weakref
from collections.abc import Callable, Hashable, Iterator
from typing import Any, TypeVar

from inspector.db import fleet, models
from inspector.db.engine import Database
from inspector.fleet.live import LiveFleet
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

T = TypeVar("T")

MAX_ANSWERS = 64
"""Most answers kept per version of the view (one per distinct request)."""

YIELD_AT_MOST = 1.0
"""Seconds the whole read waits between two chunks for the requests in
flight to end."""


class HeldFleet:
    """The fleet view of one database in this process."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._live = LiveFleet()
        self._named: dict[str, set[str]] = {}
        """Each name in the view -> the nodes of that name (by UUID), kept
        up to date node by node as the view changes (never rebuilt)."""
        self._guard = threading.Lock()
        """Held to read or change the view and the answers (briefly)."""
        self._reading = threading.Lock()
        """Held by the one reader of the database's changes."""
        self._fingerprint: tuple[Any, ...] | None = None
        self._seen: set[str] = set()
        """The runs read that ended in the window of the last read."""
        self._read_at: Any = None
        """When the view was last read (None: never, read it whole)."""
        self._full_at = 0.0
        self._refreshing = False
        self._changes: list[dict[str, Any]] | None = None
        """The newest runs that changed something (the page's), up to
        ``_changes_limit``; None: read them again."""
        self._changes_limit = 0
        self._answers: dict[Hashable, Any] = {}
        self._answers_version = -1
        self._requests = 0
        """Requests in :meth:`cached` or :meth:`named` now; the whole read
        waits for none."""
        self._quiet = threading.Condition()
        self.full_read_interval = 300.0
        """Seconds between two whole reads (``[inventory]full_read_interval``)."""

    def sync(self) -> None:
        """Bring the view up to date with the database: one statement when
        nothing changed, the changed nodes' rows when something did."""
        current = fleet.fingerprint(self.db)
        if current != self._fingerprint:
            with self._reading:
                if current != self._fingerprint:
                    self._read(current)
        if time.monotonic() - self._full_at > self.full_read_interval:
            self._refresh_whole()

    def _read(self, current: tuple[Any, ...]) -> None:
        since = self._read_at
        with self._guard:
            known = self._live.uuids()
        delta = fleet.read_changes(self.db, since, known, self._seen)
        with self._guard:
            for uuid in delta.gone:
                self._drop(uuid)
            for node_facts, links in delta.nodes.values():
                self._put(node_facts, links)
            if delta.whole:
                self._changes = None
            elif delta.changed and self._changes is not None:
                merged = fleet.newest_first(delta.changed + self._changes)
                self._changes = merged[: self._changes_limit]
        if delta.whole:
            self._full_at = time.monotonic()
        self._read_at = delta.read_at
        self._seen = delta.runs
        self._fingerprint = current

    def _put(self, node_facts: dict[str, Any], links: dict[str, Any]) -> bool:
        """:meth:`LiveFleet.put`, the index of names kept beside it (under
        ``_guard``)."""
        held = self._live.get(node_facts["uuid"])
        if not self._live.put(node_facts, links):
            return False
        old = held[0].get("name") if held else None
        self._rename(node_facts["uuid"], old, node_facts.get("name"))
        return True

    def _drop(self, uuid: str) -> bool:
        """:meth:`LiveFleet.drop`, the index of names kept beside it."""
        held = self._live.get(uuid)
        if not self._live.drop(uuid):
            return False
        self._rename(uuid, held[0].get("name") if held else None, None)
        return True

    def _rename(self, uuid: str, old: str | None, new: str | None) -> None:
        if old == new:
            return
        if old:
            nodes = self._named.get(old)
            if nodes is not None:
                nodes.discard(uuid)
                if not nodes:
                    del self._named[old]
        if new:
            self._named.setdefault(new, set()).add(uuid)

    def _refresh_whole(self) -> None:
        with self._guard:
            if self._refreshing:
                return
            self._refreshing = True
        thread = threading.Thread(
            target=self._read_whole, name="fleet-view-refresh", daemon=True
        )
        thread.start()

    def _read_whole(self) -> None:
        """Read the whole view and apply what differs: what the reads of
        changes could not see. It goes :data:`inspector.db.fleet.CHUNK`
        nodes at a time, each chunk applied under the locks briefly, and
        before the next one it waits for the requests in flight to end:
        a request meets at most one chunk's work. (At 10,000 nodes the
        whole read costs about 0.4 s of CPU; a request running beside it
        that releases the GIL often, at each row SQLite steps through,
        waits up to the interpreter's switch interval, 5 ms, each time it
        takes it back: a request after a run measured 5-10x slower.)

        A node read newer meanwhile is kept; a node missing from the whole
        read is dropped only when its run is older than the read's window
        (a newer one is checked by the next read of changes, which this
        makes happen)."""
        try:
            read_at = models.utcnow()
            oldest = (read_at - fleet.RECENT).isoformat()
            read: set[str] = set()
            changed = 0
            began = time.monotonic()
            for chunk in fleet.whole_in_chunks(self.db, fleet.CHUNK):
                read.update(chunk)
                with self._reading, self._guard:
                    for node_facts, links in chunk.values():
                        held = self._live.get(node_facts["uuid"])
                        if held and held[0]["finished_at"] > node_facts["finished_at"]:
                            continue
                        changed += self._put(node_facts, links)
                self._wait_for_quiet()
            with self._guard:
                shown = self._changes
            pruned = shown is not None and bool(
                {r["run"] for r in shown}
                - fleet.present(self.db, [r["run"] for r in shown])
            )
            with self._reading:
                with self._guard:
                    for uuid in self._live.uuids():
                        held = self._live.get(uuid)
                        if uuid not in read and held is not None:
                            if held[0]["finished_at"] < oldest:
                                changed += self._drop(uuid)
                    if pruned or changed:
                        self._changes = None  # read again when asked
                if self._read_at is None or read_at < self._read_at:
                    self._read_at = read_at
                if changed:
                    # a node deleted meanwhile may be back: the next
                    # request reads the changes (and lists the nodes)
                    self._fingerprint = None
            LOG.info(
                "Read the whole fleet view again: %d nodes, %d changed that "
                "the reads of runs had not seen, in %.1f s",
                len(read),
                changed,
                time.monotonic() - began,
            )
        except Exception:
            LOG.exception("Reading the whole fleet view again failed")
        finally:
            with self._guard:
                self._full_at = time.monotonic()
                self._refreshing = False

    def _wait_for_quiet(self) -> None:
        """Until no request is in :meth:`cached` (at most
        :data:`YIELD_AT_MOST` seconds: a steady stream of requests slows
        the whole read down, never stops it)."""
        with self._quiet:
            self._quiet.wait_for(lambda: not self._requests, YIELD_AT_MOST)

    def recent_changes(self, limit: int) -> list[dict[str, Any]]:
        """:func:`inspector.db.fleet.recent_changes`, read once and then
        kept up to date with the runs read since (after :meth:`sync`):
        the walk over the newest runs is not made again at each run."""
        with self._guard:
            if self._changes is not None and limit <= self._changes_limit:
                return self._changes[:limit]
        with self._reading:  # no read of changes meanwhile
            found = fleet.recent_changes(self.db, limit)
            with self._guard:
                self._changes, self._changes_limit = found, limit
        return found

    def named(self, name: str) -> list[str]:
        """The nodes (UUIDs, sorted) the view last saw named ``name``
        exactly, after :meth:`sync`: a look-up in the index of names, which
        the view's changes keep up to date node by node."""
        with self._request():
            self.sync()
            with self._guard:
                return sorted(self._named.get(name, ()))

    def view(self, read: Callable[[LiveFleet], T]) -> T:
        """``read(view)`` while nothing changes the view (keep it short;
        what it returns must not be changed)."""
        with self._guard:
            return read(self._live)

    def cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``'s answer, kept while the view does not change
        (after :meth:`sync`). Shared: callers must not change it."""
        with self._request():
            return self._cached(key, compute)

    @contextlib.contextmanager
    def _request(self) -> Iterator[None]:
        """Counted as a request in flight (the whole read waits for none)."""
        with self._quiet:
            self._requests += 1
        try:
            yield
        finally:
            with self._quiet:
                self._requests -= 1
                if not self._requests:
                    self._quiet.notify_all()

    def _cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        self.sync()
        with self._guard:
            version = self._live.version
            if version != self._answers_version:
                self._answers, self._answers_version = {}, version
            if key in self._answers:
                found: T = self._answers[key]
                return found
        value = compute()
        with self._guard:
            # the view as compute() saw it; and bounded (answers per query)
            if self._live.version == version and len(self._answers) < MAX_ANSWERS:
                self._answers[key] = value
        return value


_HELD: "weakref.WeakKeyDictionary[Database, HeldFleet]" = weakref.WeakKeyDictionary()
_HELD_GUARD = threading.Lock()


def of(rt: Runtime) -> HeldFleet:
    """The fleet view of the runtime's database held by this process (its
    whole-read interval from the options, which SIGHUP may change)."""
    with _HELD_GUARD:
        held = _HELD.get(rt.db)
        if held is None:
            held = _HELD[rt.db] = HeldFleet(rt.db)
        held.full_read_interval = rt.conf.inventory.full_read_interval
        return held
