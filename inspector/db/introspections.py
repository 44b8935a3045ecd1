"""One introspection record at a time: its reads (by UUID, by lookup
attributes), its creation, and the one compare-and-swap on ``version``
every write goes through.

The writes of each event are :mod:`inspector.db.transitions`; claims of a
record's step, :mod:`inspector.db.claims`; the reads over many records,
:mod:`inspector.db.sweeps` and :mod:`inspector.db.listing`.
"""

import dataclasses
import datetime
import functools
import json
from collections.abc import Iterable
from typing import Any, cast

import sqlalchemy as sa

from inspector import exceptions, states
from inspector.db import models
from inspector.db.engine import Database
from inspector.db.models import utcnow


@dataclasses.dataclass(frozen=True)
class IntrospectionRecord:
    """A snapshot of one row of ``introspections``, as read or written (the
    table's ORM class is :class:`inspector.db.models.Introspection`); its
    JSON columns also typed (:attr:`owed`, :attr:`node_ports`, :attr:`bmc`)."""

    uuid: str
    state: str
    version: int
    started_at: datetime.datetime
    finished_at: datetime.datetime | None
    error: str | None
    manage_boot: bool
    owner: str | None = None
    owner_run: str | None = None
    deadline: datetime.datetime | None = None
    owed_writes: str | None = None
    owed_reason: str | None = None
    ports: str | None = None
    handed_to: str | None = None
    claimed_at: datetime.datetime | None = None
    hardware_run: str | None = None
    mode: str | None = None
    bmc_data: str | None = None

    @property
    def finished(self) -> bool:
        return self.state in states.FINAL

    # the JSON columns, decoded on first use (the status read needs none)

    @functools.cached_property
    def owed(self) -> dict[str, Any] | None:
        """The Ironic writes this finished run still owes, or None."""
        return None if self.owed_writes is None else json.loads(self.owed_writes)

    @functools.cached_property
    def node_ports(self) -> list[dict[str, Any]] | None:
        """The node's Ironic ports as read when it started, or None."""
        return None if self.ports is None else json.loads(self.ports)

    @functools.cached_property
    def bmc(self) -> dict[str, Any] | None:
        """What the BMC told a run of mode ``auto`` that boots the ramdisk
        for the rest, or None."""
        return None if self.bmc_data is None else json.loads(self.bmc_data)


def record_of(row: Any) -> IntrospectionRecord:
    """The snapshot of a Core row of ``introspections`` (every column)."""
    return IntrospectionRecord(**row._asdict())


CLAIM_WITHIN = 30.0
"""Default seconds a conductor has to pick up a step before it counts as
lost ([coordination]claim_timeout)."""


def ownership(
    new_state: str, now: datetime.datetime, claim_within: float
) -> dict[str, object]:
    """Owner columns for a row entering ``new_state``: nobody owns it yet; a
    step a conductor must take has a deadline to be claimed by."""
    deadline = None
    if new_state in states.WORKING:
        deadline = now + datetime.timedelta(seconds=claim_within)
    return {
        "owner": None,
        "owner_run": None,
        "deadline": deadline,
        "handed_to": None,
        "claimed_at": None,
    }


# The statements of the request path are built once, with bound parameters
# for every value: SQLAlchemy then computes each one's cache key once, not
# at every execution (that traversal was most of a write's CPU).
_TABLE = cast(sa.Table, models.Introspection.__table__)
_ATTRIBUTES = cast(sa.Table, models.Attribute.__table__)
_GET_BY_UUID = sa.select(_TABLE).where(_TABLE.c.uuid == sa.bindparam("uuid"))
_LOCK_BY_UUID = _GET_BY_UUID.with_for_update()
"""Built once too: ``with_for_update()`` makes a new statement, whose cache
key SQLAlchemy would compute again at every start."""
_VERSION_OF = sa.select(_TABLE.c.version).where(_TABLE.c.uuid == sa.bindparam("uuid"))
DROP_ATTRIBUTES = sa.delete(_ATTRIBUTES).where(
    _ATTRIBUTES.c.node_uuid == sa.bindparam("uuid")
)
_ADD_ATTRIBUTES = sa.insert(_ATTRIBUTES)


def _bound(names: Iterable[str]) -> dict[str, Any]:
    """``column: :v_column`` for a VALUES or SET clause."""
    return {
        name: sa.bindparam(f"v_{name}", type_=_TABLE.c[name].type) for name in names
    }


def _params(values: dict[str, Any]) -> dict[str, Any]:
    return {f"v_{name}": value for name, value in values.items()}


@functools.cache
def _insert_statement(names: tuple[str, ...], returning: bool) -> sa.Insert:
    insert = sa.insert(_TABLE).values(_bound(names))
    return insert.returning(*_TABLE.c) if returning else insert


@functools.cache
def _update_statement(
    names: tuple[str, ...], in_state: bool, returning: bool
) -> sa.Update:
    """The compare-and-swap setting ``names`` (a handful of combinations)."""
    update = (
        sa.update(_TABLE)
        .where(
            _TABLE.c.uuid == sa.bindparam("w_uuid"),
            _TABLE.c.version == sa.bindparam("w_version"),
        )
        .values(_bound(names))
    )
    if in_state:
        update = update.where(_TABLE.c.state == sa.bindparam("w_state"))
    return update.returning(*_TABLE.c) if returning else update


def get(db: Database, uuid: str) -> IntrospectionRecord:
    """The introspection of ``uuid``.

    :raises IntrospectionNotFound: no introspection of ``uuid`` is known.
    :raises DatabaseUnavailable: the database cannot be reached.
    """
    # the status GET is the hottest read: a Core query on a pooled
    # connection costs a third of an ORM session round trip
    with db.connect() as conn:
        row = conn.execute(_GET_BY_UUID, {"uuid": uuid}).first()
    if row is None:
        raise exceptions.IntrospectionNotFound(node=uuid)
    return record_of(row)


def start(
    db: Database,
    uuid: str,
    manage_boot: bool,
    attributes: dict[str, list[str]] | None = None,
    claim_within: float = CLAIM_WITHIN,
    ports: list[dict[str, Any]] | None = None,
    mode: str = states.IN_BAND,
) -> IntrospectionRecord:
    """Record a new introspection of ``uuid`` in ``starting``.

    A node seen before moves through the ``start`` event, so starting a node
    that is already being introspected is refused by the state machine.
    ``ports`` are the node's ports as just read from Ironic, kept for the
    processing.
    """
    now = utcnow()
    values: dict[str, Any] = {
        "started_at": now,
        "finished_at": None,
        "error": None,
        "manage_boot": manage_boot,
        "ports": None if ports is None else json.dumps(ports),
        "mode": None if mode == states.IN_BAND else mode,
        "bmc_data": None,
    }
    rows = [
        {"node_uuid": uuid, "name": name, "value": value}
        for name, found in (attributes or {}).items()
        for value in sorted(set(found))
    ]
    # Core statements: every start runs this in the API (ORM: twice the CPU)
    with db.begin() as conn:
        row = conn.execute(_LOCK_BY_UUID, {"uuid": uuid}).first()
        if row is None:
            fresh = {
                "uuid": uuid,
                "state": states.STARTING,
                "version": 1,
                **values,
                **ownership(states.STARTING, now, claim_within),
            }
            started = _insert(conn, fresh)
        else:
            new_state = states.next_state(row.state, states.START)
            started = compare_and_swap(
                conn,
                uuid,
                row.version,
                {
                    **values,
                    "state": new_state,
                    **ownership(new_state, now, claim_within),
                },
            )
        conn.execute(DROP_ATTRIBUTES, {"uuid": uuid})
        if rows:
            conn.execute(_ADD_ATTRIBUTES, rows)
    return record_of(started)


def enroll(
    db: Database, uuid: str, claim_within: float = CLAIM_WITHIN
) -> IntrospectionRecord:
    """Record a node discovery just created in Ironic, in ``enrolling``."""
    now = utcnow()
    with db.begin() as conn:
        if conn.execute(_VERSION_OF, {"uuid": uuid}).first() is not None:
            raise exceptions.Conflict(
                f"Node {uuid} was already introspected: not enrolling it again"
            )
        row = _insert(
            conn,
            {
                "uuid": uuid,
                "state": states.ENROLLING,
                "version": 1,
                "started_at": now,
                "finished_at": None,
                "error": None,
                "manage_boot": False,  # it booted by itself; its BMC is not ours yet
                **ownership(states.ENROLLING, now, claim_within),
            },
        )
    return record_of(row)


def locked(conn: sa.Connection, uuid: str) -> Any:
    """The row of ``uuid`` read for update within the caller's
    transaction; None when there is none."""
    return conn.execute(_LOCK_BY_UUID, {"uuid": uuid}).first()


def insert(conn: sa.Connection, values: dict[str, Any]) -> Any:
    """Insert a whole row within the caller's transaction (the row as
    written)."""
    return _insert(conn, values)


def _insert(conn: sa.Connection, values: dict[str, Any]) -> Any:
    """Insert the row of ``values``; the row as written (the database
    returns it where it can, as for :func:`compare_and_swap`)."""
    returning = conn.dialect.insert_returning
    insert = _insert_statement(tuple(sorted(values)), returning)
    if returning:
        return conn.execute(insert, _params(values)).one()
    conn.execute(insert, _params(values))
    return conn.execute(_GET_BY_UUID, {"uuid": values["uuid"]}).one()


def compare_and_swap(
    conn: sa.Connection,
    uuid: str,
    version: int,
    values: dict[str, object],
    state: str | None = None,
) -> Any:
    """The compare-and-swap on a Core connection; the row as written.

    One statement where the database returns the updated row (PostgreSQL,
    SQLite), the update and a read otherwise (MariaDB). With ``state``, the
    row must also be in that state.
    """
    returning = conn.dialect.update_returning
    update = _update_statement(
        tuple(sorted({"version", *values})), state is not None, returning
    )
    params = _params(values)
    params.update(v_version=version + 1, w_uuid=uuid, w_version=version)
    if state is not None:
        params["w_state"] = state
    if returning:
        row = conn.execute(update, params).first()
        if row is None:
            raise exceptions.StaleState(node=uuid, version=version)
        return row
    if conn.execute(update, params).rowcount != 1:
        raise exceptions.StaleState(node=uuid, version=version)
    return conn.execute(_GET_BY_UUID, {"uuid": uuid}).one()


def check_current(db: Database, uuid: str, version: int) -> None:
    """Fence before a side effect: :class:`StaleState` if ``version`` is no
    longer the row's (another conductor took the work over, or an operator
    acted), so nothing is done to Ironic on stale authority."""
    # the version alone: a fence runs before every action on Ironic
    with db.connect() as conn:
        current = conn.execute(_VERSION_OF, {"uuid": uuid}).scalar()
    if current != version:  # None: the introspection is gone
        raise exceptions.StaleState(node=uuid, version=version)


def restore(db: Database, saved: dict[str, Any]) -> IntrospectionRecord:
    """Recreate a finished introspection from its saved record (rebuild)."""

    def when(value: Any) -> datetime.datetime | None:
        return datetime.datetime.fromisoformat(value) if value else None

    with db.begin() as conn:
        row = _insert(
            conn,
            {
                "uuid": saved["uuid"],
                "state": saved["state"],
                "version": 1,
                "started_at": when(saved.get("started_at")) or utcnow(),
                "finished_at": when(saved.get("finished_at")) or utcnow(),
                "error": saved.get("error"),
                "manage_boot": True,
            },
        )
    return record_of(row)


_SETTLE = (
    sa.update(_TABLE)
    .where(
        _TABLE.c.uuid == sa.bindparam("w_uuid"),
        _TABLE.c.version == sa.bindparam("w_version"),
    )
    .values(owed_writes=None, owed_reason=None)
)


def settle(db: Database, uuid: str, version: int) -> bool:
    """The owed writes of ``uuid`` were made: forget them (fenced)."""
    with db.begin() as conn:
        result = conn.execute(_SETTLE, {"w_uuid": uuid, "w_version": version})
    return bool(result.rowcount)


LOOKUP_VALUES_NAMED = 8
"""Up to this many values of one attribute, the lookup names each value as
a bound parameter of its own (one statement per count, compiled once per
process); beyond it one expanding parameter takes them all, which
SQLAlchemy renders into the statement's text again at every execution."""

_TRANSIENT = _TABLE.c.state.in_([sa.literal(s) for s in sorted(states.TRANSIENT)])
"""A running introspection: the states as constant bound parameters (a
plain list would be an expanding parameter, rendered at every execution)."""


def _value_names(index: int, count: int) -> list[str]:
    return [f"values_{index}_{n}" for n in range(count)]


@functools.lru_cache(maxsize=128)
def _lookup_statement(shape: tuple[tuple[str, int], ...]) -> sa.Select[Any]:
    """Running introspections with any of the given values of the named
    attributes; ``shape`` is (name, number of values) per attribute."""
    attribute = _ATTRIBUTES.c

    def any_of(index: int, count: int) -> Any:
        if count > LOOKUP_VALUES_NAMED:
            return sa.bindparam(f"values_{index}", expanding=True)
        return [sa.bindparam(name) for name in _value_names(index, count)]

    return (
        sa.select(_TABLE)
        .join(_ATTRIBUTES, attribute.node_uuid == _TABLE.c.uuid)
        .where(
            sa.or_(
                *(
                    sa.and_(
                        attribute.name == name,
                        attribute.value.in_(any_of(index, count)),
                    )
                    for index, (name, count) in enumerate(shape)
                )
            )
        )
        .where(_TRANSIENT)
        .distinct()
    )


def lookup(db: Database, attributes: dict[str, list[str]]) -> IntrospectionRecord:
    """Find the single running introspection matching any of ``attributes``."""
    wanted = {name: values for name, values in sorted(attributes.items()) if values}
    if not wanted:
        raise exceptions.LookupFailed(
            "The ramdisk reported no MAC or BMC address to look the node up by"
        )
    params: dict[str, Any] = {}
    for index, values in enumerate(wanted.values()):
        if len(values) > LOOKUP_VALUES_NAMED:
            params[f"values_{index}"] = list(values)
        else:
            params.update(zip(_value_names(index, len(values)), values, strict=True))
    shape = tuple((name, len(values)) for name, values in wanted.items())
    with db.connect() as conn:
        rows = conn.execute(_lookup_statement(shape), params).all()
    if not rows:
        raise exceptions.NoMatch(attributes=_describe(attributes))
    if len(rows) > 1:
        raise exceptions.LookupFailed(
            "Multiple nodes under introspection match attributes "
            f"{_describe(attributes)}: {', '.join(sorted(r.uuid for r in rows))}"
        )
    return record_of(rows[0])


def _describe(attributes: dict[str, list[str]]) -> str:
    return ", ".join(f"{k}={','.join(v)}" for k, v in sorted(attributes.items()) if v)


_DELETE = sa.delete(_TABLE).where(_TABLE.c.uuid == sa.bindparam("uuid"))


def delete(db: Database, uuid: str) -> None:
    """Forget the introspection of ``uuid``."""
    with db.begin() as conn:
        conn.execute(_DELETE, {"uuid": uuid})
