"""The one view of the conductors every interface goes through.

Which conductors exist and are alive is the tooz group (their membership,
with the capabilities each published when it joined and refreshes on every
heartbeat); whether each may get new work is the operator's state, a row
of the database per conductor (:mod:`inspector.coordination.conductor_state`).
The HTTP API, ``ironic-inspector-manage`` and the API's choice of a
conductor all read this class, so they cannot disagree. The standalone
process has the same view of its one conductor: alive while it holds the
leader lease of its database.
"""

import datetime
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from inspector import exceptions
from inspector.coordination import conductor_state
from inspector.coordination.backend import GROUP_ID, translated
from inspector.coordination.conductor_state import DatabaseStateStore
from inspector.db import claims, leases
from inspector.db.engine import Database

if TYPE_CHECKING:
    from tooz.coordination import CoordinationDriver

LOG = logging.getLogger(__name__)

Members = Callable[[], dict[str, dict[str, Any]]]
"""Live conductors: host -> the capabilities it published."""


class ConductorNotFound(exceptions.NotFound):
    template = "Conductor %(host)s was not found"


def group_members(coordinator: "CoordinationDriver") -> Members:
    """Live members of the tooz group, with their capabilities."""
    from tooz import coordination

    def members() -> dict[str, dict[str, Any]]:
        with translated("list the conductor group"):
            try:
                found = coordinator.get_members_with_capabilities(GROUP_ID).get()
            except coordination.GroupNotCreated:
                return {}
        return {m.decode(): dict(caps or {}) for m, caps in found.items()}

    return members


def standalone_member(db: Database, host: str, lease_seconds: float) -> Members:
    """The standalone process's conductor: alive while its leader lease is
    (renewed every third of ``[coordination]leader_lease``)."""

    def members() -> dict[str, dict[str, Any]]:
        lease = leases.held(db, leases.LEADER)
        if lease is None or lease[0].split("/")[0] != host:
            return {}
        renewed = lease[1] - datetime.timedelta(seconds=lease_seconds)
        return {host: {"host": host, "last_heartbeat": renewed.isoformat()}}

    return members


def for_standalone(db: Database, conf: Any) -> "ServiceGroup":
    members = standalone_member(db, conf.host, conf.coordination.leader_lease)
    return ServiceGroup(members, DatabaseStateStore(db), db)


def for_split(
    coordinator: "CoordinationDriver",
    db: Database,
    store: DatabaseStateStore | None = None,
) -> "ServiceGroup":
    """The split shape's view; ``store`` when the caller has carried an
    earlier release's states over already (else it is done here)."""
    if store is None:
        store = conductor_state.for_split(coordinator, db)
    return ServiceGroup(group_members(coordinator), store, db)


class ServiceGroup:
    def __init__(
        self, members: Members, store: DatabaseStateStore, db: Database
    ) -> None:
        self._members = members
        self._store = store
        self._db = db

    @staticmethod
    def _view(
        host: str, caps: dict[str, Any] | None, state: dict[str, Any] | None, owned: int
    ) -> dict[str, Any]:
        alive = caps is not None
        caps = caps or {}
        state = state or {}
        return {
            "hostname": host,
            "alive": alive,
            "enabled": state.get("enabled", True),
            "disabled_reason": state.get("reason"),
            "started_at": caps.get("started_at"),
            "last_heartbeat": caps.get("last_heartbeat"),
            "rpc_version": caps.get("rpc_version"),
            "version": caps.get("version"),
            "introspections": owned,
        }

    def _all(self, with_work: bool = True) -> dict[str, dict[str, Any]]:
        members = self._members()
        states_ = self._store.every()
        # the work each owns: the one read a view without it (the health
        # check's) leaves out
        owned = claims.owners(self._db) if with_work else {}
        views = {}
        for host in sorted(set(members) | set(states_)):
            views[host] = self._view(
                host, members.get(host), states_.get(host), owned.get(host, 0)
            )
        return views

    def alive(self) -> list[str]:
        """The live members, by name, from the coordination backend alone
        (the health check's coordination probe: no database read)."""
        return sorted(self._members())

    def conductors(self, with_work: bool = True) -> list[dict[str, Any]]:
        """Every conductor that is alive or has a state set, by name;
        ``with_work`` False leaves out the work each owns (introspections
        0)."""
        return list(self._all(with_work).values())

    def get(self, host: str) -> dict[str, Any]:
        found = self._all().get(host)
        if found is None:
            raise ConductorNotFound(host=host)
        return found

    def set_enabled(
        self, host: str, enabled: bool, reason: str | None = None
    ) -> tuple[dict[str, Any], str | None]:
        """Enable or disable ``host``; returns its view and a warning, if any.

        :raises ConductorNotFound: a host that is neither alive nor known.
        """
        views = self._all()
        if host not in views:
            raise ConductorNotFound(host=host)
        state = {
            "enabled": enabled,
            "reason": None if enabled else (reason or "disabled by an operator"),
            "changed_at": datetime.datetime.now(datetime.UTC).isoformat(),
        }
        if enabled:
            # enabled is what no document says: without one, a conductor
            # enabled again is listed like one never disabled (gone once it
            # stops cleanly, not dead until forgotten)
            self._store.delete(host)
        else:
            self._store.put(host, state)
        warning = None
        if not enabled:
            others = [
                h for h, v in views.items() if h != host and v["alive"] and v["enabled"]
            ]
            if not others:
                warning = (
                    f"{host} was the last enabled conductor: no new "
                    "introspection can start until one is enabled"
                )
        LOG.log(
            logging.WARNING if warning else logging.INFO,
            "Conductor %s %s%s%s",
            host,
            "enabled" if enabled else "disabled",
            f" ({state['reason']})" if state["reason"] else "",
            f"; {warning}" if warning else "",
        )
        view = self._all().get(host)
        if view is None:  # enabled while dead: nothing more to list
            view = self._view(host, None, state, views[host]["introspections"])
        return view, warning

    def forget(self, host: str) -> None:
        """Remove a conductor that is gone for good (its host retired or
        renamed) from the listing.

        :raises ConductorNotFound: nothing is known of ``host``.
        :raises Conflict: ``host`` is alive, or still owns steps that the
            leader has not taken over yet.
        """
        views = self._all()
        view = views.get(host)
        if view is None:
            raise ConductorNotFound(host=host)
        if view["alive"]:
            raise exceptions.Conflict(
                f"Conductor {host} is alive (a member of the group): stop it "
                "first; a running conductor cannot be forgotten"
            )
        if view["introspections"]:
            raise exceptions.Conflict(
                f"Conductor {host} still owns {view['introspections']} "
                "introspection step(s) the leader has not taken over yet; "
                "try again in a minute"
            )
        self._store.delete(host)
        LOG.info("Conductor %s forgotten", host)
