"""Introspection records: state writes (compare-and-swap), lookup, listing."""

import dataclasses
import datetime
import functools
import json
from collections.abc import Iterable
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy import orm

from inspector import exceptions, states
from inspector.db import models, stored_data
from inspector.db.engine import UNREACHABLE, Database, unreachable
from inspector.db.models import utcnow


@dataclasses.dataclass(frozen=True)
class Introspection:
    """A snapshot of one introspection row."""

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

    @property
    def finished(self) -> bool:
        return self.state in states.FINAL


def _snapshot(row: models.Introspection) -> Introspection:
    return Introspection(
        uuid=row.uuid,
        state=row.state,
        version=row.version,
        started_at=row.started_at,
        finished_at=row.finished_at,
        error=row.error,
        manage_boot=row.manage_boot,
        owner=row.owner,
        owner_run=row.owner_run,
        deadline=row.deadline,
        owed_writes=row.owed_writes,
        owed_reason=row.owed_reason,
        ports=row.ports,
        handed_to=row.handed_to,
        claimed_at=row.claimed_at,
    )


CLAIM_WITHIN = 30.0
"""Default seconds a conductor has to pick up a step before it counts as
lost ([coordination]claim_timeout)."""


def _ownership(
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
_VERSION_OF = sa.select(_TABLE.c.version).where(_TABLE.c.uuid == sa.bindparam("uuid"))
_DROP_ATTRIBUTES = sa.delete(_ATTRIBUTES).where(
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


def get(db: Database, uuid: str) -> Introspection:
    """The introspection of ``uuid``.

    :raises IntrospectionNotFound: no introspection of ``uuid`` is known.
    :raises DatabaseUnavailable: the database cannot be reached.
    """
    # the status GET is the hottest read: a Core query on a pooled
    # connection costs a third of an ORM session round trip (and a plain
    # try costs nothing, unlike Database.connect's generator)
    try:
        with db.engine.connect() as conn:
            row = conn.execute(_GET_BY_UUID, {"uuid": uuid}).first()
    except UNREACHABLE as exc:
        raise unreachable(exc) from exc
    if row is None:
        raise exceptions.IntrospectionNotFound(node=uuid)
    return Introspection(**row._asdict())


def start(
    db: Database,
    uuid: str,
    manage_boot: bool,
    attributes: dict[str, list[str]] | None = None,
    claim_within: float = CLAIM_WITHIN,
    ports: list[dict[str, Any]] | None = None,
) -> Introspection:
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
    }
    rows = [
        {"node_uuid": uuid, "name": name, "value": value}
        for name, found in (attributes or {}).items()
        for value in sorted(set(found))
    ]
    # Core statements: every start runs this in the API (ORM: twice the CPU)
    try:
        with db.engine.begin() as conn:
            row = conn.execute(_GET_BY_UUID.with_for_update(), {"uuid": uuid}).first()
            if row is None:
                fresh = {
                    "uuid": uuid,
                    "state": states.STARTING,
                    "version": 1,
                    **values,
                    **_ownership(states.STARTING, now, claim_within),
                }
                returning = conn.dialect.insert_returning
                insert = _insert_statement(tuple(sorted(fresh)), returning)
                if returning:
                    started = conn.execute(insert, _params(fresh)).one()
                else:
                    conn.execute(insert, _params(fresh))
                    started = conn.execute(_GET_BY_UUID, {"uuid": uuid}).one()
            else:
                new_state = states.next_state(row.state, states.START)
                started = _cas_returning(
                    conn,
                    uuid,
                    row.version,
                    {
                        **values,
                        "state": new_state,
                        **_ownership(new_state, now, claim_within),
                    },
                )
            conn.execute(_DROP_ATTRIBUTES, {"uuid": uuid})
            if rows:
                conn.execute(_ADD_ATTRIBUTES, rows)
    except UNREACHABLE as exc:
        raise unreachable(exc) from exc
    return Introspection(**started._asdict())


def enroll(
    db: Database, uuid: str, claim_within: float = CLAIM_WITHIN
) -> Introspection:
    """Record a node discovery just created in Ironic, in ``enrolling``."""
    now = utcnow()
    with db.session() as session:
        if session.get(models.Introspection, uuid) is not None:
            raise exceptions.Conflict(
                f"Node {uuid} was already introspected: not enrolling it again"
            )
        row = models.Introspection(
            uuid=uuid,
            state=states.ENROLLING,
            version=1,
            started_at=now,
            finished_at=None,
            error=None,
            manage_boot=False,  # it booted by itself; its BMC is not ours yet
            **_ownership(states.ENROLLING, now, claim_within),
        )
        session.add(row)
        session.flush()
        return _snapshot(row)


def _cas_returning(
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


def transition(
    db: Database,
    uuid: str,
    event: str,
    *,
    expected_version: int | None = None,
    error: str | None = None,
    raw_data: dict[str, Any] | None = None,
    raw_logs: str | None = None,
    claim_within: float = CLAIM_WITHIN,
    owed: tuple[str, str] | None = None,
    current: Introspection | None = None,
) -> Introspection:
    """Apply ``event`` to the introspection of ``uuid``; a fenced write.

    With ``expected_version`` the write only happens if nobody changed the
    row since the caller read it (:class:`StaleState` otherwise).
    Reaching a final state sets ``finished_at`` and drops lookup attributes.
    ``raw_data`` is stored as the unprocessed data in the same transaction,
    ``raw_logs`` (the post's logs, taken out of it) apart beside it.

    ``current`` is the row as the caller holds it at ``expected_version``
    (the claim's or the lookup's answer): the row is then not read again.
    Every change of state bumps the version, so the write's compare on the
    version alone finds the state the caller knows, or fails with
    :class:`StaleState` (also when the row was deleted meanwhile).
    """
    if current is not None and current.version != expected_version:
        raise ValueError("current must be the row at expected_version")
    # Core statements: three transitions per machine (the ORM doubled
    # their CPU and read the row back twice)
    try:
        with db.engine.begin() as conn:
            row: Any = current
            if row is None:
                row = conn.execute(_GET_BY_UUID, {"uuid": uuid}).first()
            if row is None:
                raise exceptions.IntrospectionNotFound(node=uuid)
            if expected_version is not None and row.version != expected_version:
                raise exceptions.StaleState(node=uuid, version=expected_version)
            new_state = states.next_state(row.state, event)
            now = utcnow()
            values: dict[str, object] = {
                "state": new_state,
                **_ownership(new_state, now, claim_within),
            }
            if new_state in states.FINAL:
                values["finished_at"] = now
                values["error"] = error if new_state == states.ERROR else None
                values["owed_writes"], values["owed_reason"] = owed or (None, None)
                conn.execute(_DROP_ATTRIBUTES, {"uuid": uuid})
            elif error is not None:
                values["error"] = error
            written = _cas_returning(conn, uuid, row.version, values)
            if raw_data is not None:
                stored_data.put(conn, uuid, raw_data, processed=False, logs=raw_logs)
    except UNREACHABLE as exc:
        raise unreachable(exc) from exc
    return Introspection(**written._asdict())


def claim(
    db: Database,
    uuid: str,
    version: int,
    owner: str,
    run: str,
    state: str | None = None,
) -> Introspection:
    """Make ``owner`` (this run of it) the owner of the current step.

    A fenced write like every other: it bumps the version, so a conductor
    that owned the step before can no longer write. With ``state``, only a
    row in that state is claimed (:class:`StaleState` otherwise).
    """
    values: dict[str, object] = {
        "owner": owner,
        "owner_run": run,
        "deadline": None,
        "claimed_at": utcnow(),
    }
    try:
        with db.engine.begin() as conn:
            written = _cas_returning(conn, uuid, version, values, state)
    except UNREACHABLE as exc:
        raise unreachable(exc) from exc
    return Introspection(**written._asdict())


def handed(db: Database, uuid: str, version: int, host: str) -> bool:
    """Record that the unclaimed step of ``uuid`` was cast to ``host``
    (after the broker took the cast). Not a fenced change: the version
    stays, so the cast's claim still matches; False when the step was
    claimed or moved on meanwhile (nothing to record then)."""
    table = _TABLE
    try:
        with db.engine.begin() as conn:
            result = conn.execute(
                sa.update(table)
                .where(
                    table.c.uuid == uuid,
                    table.c.version == version,
                    table.c.owner.is_(None),
                )
                .values(handed_to=host)
            )
    except UNREACHABLE as exc:
        raise unreachable(exc) from exc
    return bool(result.rowcount == 1)


def release_claim(db: Database, uuid: str, version: int) -> bool:
    """Let the sweep take the unclaimed step of ``uuid`` at once: its claim
    deadline becomes now. Not a fenced change (the version stays, so a
    conductor that got the cast after all still claims it); False when the
    step moved on or was claimed meanwhile."""
    model = models.Introspection
    with db.session() as session:
        result = session.execute(
            sa.update(model)
            .where(
                model.uuid == uuid,
                model.version == version,
                model.owner.is_(None),
                model.state.in_(states.WORKING),
            )
            .values(deadline=utcnow())
        )
        return bool(result.rowcount == 1)  # type: ignore[attr-defined]


def check_current(db: Database, uuid: str, version: int) -> None:
    """Fence before a side effect: :class:`StaleState` if ``version`` is no
    longer the row's (another conductor took the work over, or an operator
    acted), so nothing is done to Ironic on stale authority."""
    # the version alone: a fence runs before every action on Ironic
    try:
        with db.engine.connect() as conn:
            current = conn.execute(_VERSION_OF, {"uuid": uuid}).scalar()
    except UNREACHABLE as exc:
        raise unreachable(exc) from exc
    if current != version:  # None: the introspection is gone
        raise exceptions.StaleState(node=uuid, version=version)


_WORKING = sa.select(_TABLE).where(_TABLE.c.state.in_(sorted(states.WORKING)))


def working(db: Database) -> list[Introspection]:
    """Every introspection whose next step belongs to a conductor.

    Core rows, not ORM objects: each conductor reads these every
    [coordination]sweep_interval, as many as nodes are being worked on.
    """
    try:
        with db.engine.connect() as conn:
            return [Introspection(**row._asdict()) for row in conn.execute(_WORKING)]
    except UNREACHABLE as exc:
        raise unreachable(exc) from exc


def owners(db: Database) -> dict[str, int]:
    """How many working introspections each conductor owns now."""
    model = models.Introspection
    query = (
        sa.select(model.owner, sa.func.count())
        .where(model.state.in_(states.WORKING), model.owner.is_not(None))
        .group_by(model.owner)
    )
    with db.session() as session:
        return {str(owner): count for owner, count in session.execute(query)}


def restore(db: Database, saved: dict[str, Any]) -> Introspection:
    """Recreate a finished introspection from its saved record (rebuild)."""

    def when(value: Any) -> datetime.datetime | None:
        return datetime.datetime.fromisoformat(value) if value else None

    with db.session() as session:
        row = models.Introspection(
            uuid=saved["uuid"],
            state=saved["state"],
            version=1,
            started_at=when(saved.get("started_at")) or utcnow(),
            finished_at=when(saved.get("finished_at")) or utcnow(),
            error=saved.get("error"),
            manage_boot=True,
        )
        session.add(row)
        session.flush()
        return _snapshot(row)


def owing(db: Database) -> list[Introspection]:
    """Finished introspections with Ironic writes still owed."""
    model = models.Introspection
    with db.session() as session:
        query = sa.select(model).where(model.owed_writes.is_not(None))
        return [_snapshot(r) for r in session.scalars(query)]


def settle(db: Database, uuid: str, version: int) -> bool:
    """The owed writes of ``uuid`` were made: forget them (fenced)."""
    model = models.Introspection
    with db.session() as session:
        result = session.execute(
            sa.update(model)
            .where(model.uuid == uuid, model.version == version)
            .values(owed_writes=None, owed_reason=None)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]


def count_by_state(db: Database, only: Iterable[str] | None = None) -> dict[str, int]:
    """How many nodes are in each state (one row per node), for the states
    in ``only`` when given: then the count reads only their part of the
    state index, as long as the work in them, not the history."""
    model = models.Introspection
    query = sa.select(model.state, sa.func.count()).group_by(model.state)
    if only is not None:
        query = query.where(model.state.in_(list(only)))
    with db.session() as session:
        return {state: count for state, count in session.execute(query)}


def _insert_attributes(
    session: orm.Session, uuid: str, attributes: dict[str, list[str]]
) -> None:
    for name, values in attributes.items():
        for value in sorted(set(values)):
            session.add(models.Attribute(node_uuid=uuid, name=name, value=value))


def set_attributes(db: Database, uuid: str, attributes: dict[str, list[str]]) -> None:
    """Replace the lookup attributes of ``uuid``."""
    with db.session() as session:
        session.execute(
            sa.delete(models.Attribute).where(models.Attribute.node_uuid == uuid)
        )
        _insert_attributes(session, uuid, attributes)


@functools.cache
def _lookup_statement(names: tuple[str, ...]) -> sa.Select[Any]:
    """Running introspections with any of ``names`` among the given values."""
    attribute = _ATTRIBUTES.c
    return (
        sa.select(_TABLE)
        .join(_ATTRIBUTES, attribute.node_uuid == _TABLE.c.uuid)
        .where(
            sa.or_(
                *(
                    sa.and_(
                        attribute.name == name,
                        attribute.value.in_(
                            sa.bindparam(f"values_{index}", expanding=True)
                        ),
                    )
                    for index, name in enumerate(names)
                )
            )
        )
        .where(_TABLE.c.state.in_(sorted(states.TRANSIENT)))
        .distinct()
    )


def lookup(db: Database, attributes: dict[str, list[str]]) -> Introspection:
    """Find the single running introspection matching any of ``attributes``."""
    wanted = {name: values for name, values in sorted(attributes.items()) if values}
    if not wanted:
        raise exceptions.LookupFailed(
            "The ramdisk reported no MAC or BMC address to look the node up by"
        )
    params = {f"values_{i}": list(values) for i, values in enumerate(wanted.values())}
    try:
        with db.engine.connect() as conn:
            rows = conn.execute(_lookup_statement(tuple(wanted)), params).all()
    except UNREACHABLE as exc:
        raise unreachable(exc) from exc
    if not rows:
        raise exceptions.NoMatch(attributes=_describe(attributes))
    if len(rows) > 1:
        raise exceptions.LookupFailed(
            "Multiple nodes under introspection match attributes "
            f"{_describe(attributes)}: {', '.join(sorted(r.uuid for r in rows))}"
        )
    return Introspection(**rows[0]._asdict())


def _describe(attributes: dict[str, list[str]]) -> str:
    return ", ".join(f"{k}={','.join(v)}" for k, v in sorted(attributes.items()) if v)


def timed_out(db: Database, started_before: datetime.datetime) -> list[Introspection]:
    """Running introspections started before the given time."""
    model = models.Introspection
    with db.session() as session:
        query = (
            sa.select(model)
            .where(model.state.in_(states.TRANSIENT))
            .where(model.started_at < started_before)
        )
        return [_snapshot(r) for r in session.scalars(query)]


def delete(db: Database, uuid: str) -> None:
    with db.session() as session:
        session.execute(
            sa.delete(models.Introspection).where(models.Introspection.uuid == uuid)
        )
