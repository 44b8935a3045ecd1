"""SQLAlchemy models of the inspector's database."""

import datetime

import sqlalchemy as sa
from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime.datetime:
    """Naive UTC now, as every timestamp column stores it."""
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class Introspection(Base):
    """One row per node: its latest introspection.

    ``version`` grows on every state write; writers compare-and-swap on it so
    a stale writer can never overwrite newer state.
    """

    __tablename__ = "introspections"

    uuid: Mapped[str] = mapped_column(String(36), primary_key=True)
    state: Mapped[str] = mapped_column(String(16), nullable=False)
    version: Mapped[int] = mapped_column(Integer, nullable=False, default=1)
    started_at: Mapped[datetime.datetime] = mapped_column(DateTime, nullable=False)
    finished_at: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    error: Mapped[str | None] = mapped_column(Text)
    manage_boot: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    owner: Mapped[str | None] = mapped_column(String(255))
    """Host of the conductor doing the current step (``states.WORKING``);
    NULL while the step waits for a conductor to claim it."""
    owner_run: Mapped[str | None] = mapped_column(String(36))
    """Which run of that conductor process: a restart is a new run."""
    deadline: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    handed_to: Mapped[str | None] = mapped_column(String(255))
    """Host the API cast the still unclaimed step to (RabbitMQ): when that
    conductor leaves the group before claiming it, the cast sits in its
    queue, and the leader takes the step over without waiting for the
    deadline."""
    claimed_at: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    """When ``owner`` claimed the current step (NULL while unclaimed)."""
    owed_writes: Mapped[str | None] = mapped_column(Text)
    """JSON of the Ironic writes a finished introspection could not make
    yet (Ironic was down); the reconcile applies them."""
    owed_reason: Mapped[str | None] = mapped_column(Text)
    """When an unclaimed step counts as lost (its cast never arrived)."""
    ports: Mapped[str | None] = mapped_column(Text)
    """JSON of the node's ports as the start read them from Ironic: the
    processing of the ramdisk's data uses them instead of listing again."""
    hardware_run: Mapped[str | None] = mapped_column(String(36))
    """The node's latest :class:`HardwareRun` with a hardware record: set by
    the write that finishes the run (no statement of its own), kept across
    later starts; the fleet view joins through it."""
    mode: Mapped[str | None] = mapped_column(String(16))
    """How this run learns the hardware (doc/redfish.md): ``out-of-band``,
    ``auto`` until its start step decides, NULL for in-band (a fallback
    of ``auto`` becomes in-band)."""
    bmc_data: Mapped[str | None] = mapped_column(Text)
    """JSON of the BMC's collected data an ``auto`` run that fell back to
    the ramdisk keeps for the merge; NULL otherwise and once it ends."""

    __table_args__ = (
        Index("introspections_started_at_idx", "started_at", "uuid"),
        # the state filter of the listing pages through this in order, and
        # the sweeps find the few running introspections by its prefix
        Index("introspections_state_started_at_idx", "state", "started_at", "uuid"),
        # the reconcile's "which finished ones owe Ironic writes", without
        # reading the history
        Index(
            "introspections_owing_idx",
            "uuid",
            sqlite_where=sa.text("owed_writes IS NOT NULL"),
            postgresql_where=sa.text("owed_writes IS NOT NULL"),
        ),
    )


class IronicInspection(Base):
    """The last inspection Ironic made of a node that the history recorded
    (or skipped, with ``run`` NULL): what the follower compares Ironic's
    ``inspection_started_at`` / ``inspection_finished_at`` with, so one
    inspection is recorded once, whichever way it arrived (a poll, a
    notification, the hook's push) and across restarts and leaders."""

    __tablename__ = "ironic_inspections"

    node_uuid: Mapped[str] = mapped_column(String(36), primary_key=True)
    started_at: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    """Ironic's ``inspection_started_at`` of that inspection (a push is
    recorded before Ironic sets the finish)."""
    finished_at: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    """Ironic's ``inspection_finished_at`` (NULL: pushed, not finished yet)."""
    run: Mapped[str | None] = mapped_column(String(36))
    """The run recorded for it; NULL when it could not be (no inventory)."""
    recorded_at: Mapped[datetime.datetime] = mapped_column(DateTime, nullable=False)

    __table_args__ = (
        # the poll's marker: the newest inspection recorded
        Index("ironic_inspections_finished_idx", "finished_at", "node_uuid"),
    )


class IronicFollowPoll(Base):
    """The follower's last poll, one row per way (``poll``): written by the
    process that polled (the standalone one or the leader), read by every
    API process's ``/metrics``."""

    __tablename__ = "ironic_follow_polls"

    name: Mapped[str] = mapped_column(String(16), primary_key=True)
    host: Mapped[str] = mapped_column(String(255), nullable=False)
    polled_at: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    """The last poll that ended (NULL: none yet)."""
    failed_at: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    """The last poll that stopped early (NULL: none since one ended)."""
    error: Mapped[str | None] = mapped_column(Text)
    lag: Mapped[float | None] = mapped_column(Float)
    """Seconds between Ironic's newest finished inspection and the newest
    recorded, at the last poll."""


class Lease(Base):
    """A named, expiring hold shared by every process of the deployment.

    ``leader``: which conductor runs the cluster-wide periodic work;
    ``power_on``: the next free power-on slot ([DEFAULT]introspection_delay).
    ``epoch`` grows on every change of holder (or slot), so writers can
    compare-and-swap on it.
    """

    __tablename__ = "leases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    holder: Mapped[str | None] = mapped_column(String(255))
    epoch: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    expires_at: Mapped[datetime.datetime] = mapped_column(DateTime, nullable=False)
    used: Mapped[int] = mapped_column(
        Integer, nullable=False, default=1, server_default="1"
    )
    """``power_on``: slots handed out in the window ending at ``expires_at``."""


class ConductorState(Base):
    """Operator-set state of a conductor (enabled, disabled with a reason),
    in every shape (:mod:`inspector.coordination.conductor_state`).
    """

    __tablename__ = "conductor_states"

    host: Mapped[str] = mapped_column(String(255), primary_key=True)
    state: Mapped[str] = mapped_column(Text, nullable=False)
    updated_at: Mapped[datetime.datetime] = mapped_column(DateTime, nullable=False)


class PxeFilter(Base):
    """What one PXE filter (an agent next to a dnsmasq, or the standalone
    process) last reported, and whether an operator asked it to sync."""

    __tablename__ = "pxe_filters"

    host: Mapped[str] = mapped_column(String(255), primary_key=True)
    driver: Mapped[str] = mapped_column(String(32), nullable=False)
    status: Mapped[str] = mapped_column(Text, nullable=False)
    heartbeat_at: Mapped[datetime.datetime] = mapped_column(DateTime, nullable=False)
    sync_requested_at: Mapped[datetime.datetime | None] = mapped_column(
        DateTime, nullable=True
    )


class Attribute(Base):
    """A lookup attribute (MAC or BMC address) of an active introspection."""

    __tablename__ = "attributes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    node_uuid: Mapped[str] = mapped_column(
        String(36),
        ForeignKey("introspections.uuid", ondelete="CASCADE"),
        nullable=False,
    )
    name: Mapped[str] = mapped_column(String(64), nullable=False)
    value: Mapped[str] = mapped_column(String(255), nullable=False)

    __table_args__ = (
        Index("attributes_name_value_idx", "name", "value"),
        Index("attributes_node_uuid_idx", "node_uuid"),
    )


class IntrospectionData(Base):
    """Raw (as posted) or processed introspection data of a node, as JSON."""

    __tablename__ = "introspection_data"

    node_uuid: Mapped[str] = mapped_column(
        String(36),
        ForeignKey("introspections.uuid", ondelete="CASCADE"),
        primary_key=True,
    )
    processed: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    data: Mapped[str] = mapped_column(Text, nullable=False)
    logs: Mapped[str | None] = mapped_column(Text)
    """A raw post's ``logs`` field, kept apart from its data until the
    conductor processing the post takes it."""
    stored_at: Mapped[datetime.datetime] = mapped_column(DateTime, nullable=False)


class Rule(Base):
    """An introspection rule (used by the rules API)."""

    __tablename__ = "rules"

    uuid: Mapped[str] = mapped_column(String(36), primary_key=True)
    created_at: Mapped[datetime.datetime] = mapped_column(DateTime, nullable=False)
    description: Mapped[str | None] = mapped_column(Text)
    disabled: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    scope: Mapped[str | None] = mapped_column(String(255))
    priority: Mapped[int] = mapped_column(
        Integer, nullable=False, default=0, server_default="0"
    )
    """API 1.24: higher runs first (0-9999)."""
    sensitive: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=False, server_default=sa.false()
    )
    """API 1.24: conditions and actions masked in answers and logs."""
    language: Mapped[int] = mapped_column(
        Integer, nullable=False, default=1, server_default="1"
    )
    """1: created below API 1.24 (or before it existed), run exactly as v1
    ran it (condition values never formatted); 2: the 1.24 language."""

    conditions: Mapped[list["RuleCondition"]] = relationship(
        cascade="all, delete-orphan", order_by="RuleCondition.id"
    )
    actions: Mapped[list["RuleAction"]] = relationship(
        cascade="all, delete-orphan", order_by="RuleAction.id"
    )


class RuleCondition(Base):
    __tablename__ = "rule_conditions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    rule_uuid: Mapped[str] = mapped_column(
        String(36), ForeignKey("rules.uuid", ondelete="CASCADE"), nullable=False
    )
    op: Mapped[str] = mapped_column(String(255), nullable=False)
    multiple: Mapped[str] = mapped_column(String(255), nullable=False)
    invert: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    field: Mapped[str] = mapped_column(Text, nullable=False)
    params: Mapped[str] = mapped_column(Text, nullable=False)


class RuleAction(Base):
    __tablename__ = "rule_actions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    rule_uuid: Mapped[str] = mapped_column(
        String(36), ForeignKey("rules.uuid", ondelete="CASCADE"), nullable=False
    )
    action: Mapped[str] = mapped_column(String(255), nullable=False)
    params: Mapped[str] = mapped_column(Text, nullable=False)


class RuleSetVersion(Base):
    """One row: a number every change of the rules raises, in the change's
    transaction. A conductor compares it with the version of the rule set
    it compiled, and reads the rules again only when it moved."""

    __tablename__ = "rule_set_version"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    version: Mapped[int] = mapped_column(BigInteger, nullable=False)


class HardwareRun(Base):
    """One finished run (introspection or reapply) of a node: its compact
    hardware record, what changed against the node's run before, and the
    facts the fleet view filters and groups on.

    Kept apart from ``introspections`` (one row per node, overwritten by
    every start) and without a foreign key to it: a node's history outlives
    its status row, and is pruned by ``[history]keep_runs`` and
    ``[history]max_age_days`` only.
    """

    __tablename__ = "hardware_runs"

    run: Mapped[str] = mapped_column(String(36), primary_key=True)
    """The run's own UUID (the history's marker, the ``run`` of its changes)."""
    node_uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    node_name: Mapped[str | None] = mapped_column(String(255))
    """The node's name in Ironic when the run finished (expected cabling
    names nodes)."""
    started_at: Mapped[datetime.datetime] = mapped_column(DateTime, nullable=False)
    finished_at: Mapped[datetime.datetime] = mapped_column(DateTime, nullable=False)
    state: Mapped[str] = mapped_column(String(16), nullable=False)
    error: Mapped[str | None] = mapped_column(Text)
    record: Mapped[str | None] = mapped_column(Text)
    """JSON of the hardware record (components by kind and identity); NULL
    for a run that ended before its data was processed."""
    changes: Mapped[str | None] = mapped_column(Text)
    """JSON list of the changes against the node's previous record."""
    change_count: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    links: Mapped[str | None] = mapped_column(Text)
    """JSON list of the NICs' switch links (LLDP) and PXE flags: the cabling
    view reads this, never the whole record."""
    # the facts of the fleet view, one column each: filters and groups are
    # SQL, not JSON parsing of every record
    cpus: Mapped[int | None] = mapped_column(Integer)
    cpu_model: Mapped[str | None] = mapped_column(String(255))
    cpu_arch: Mapped[str | None] = mapped_column(String(32))
    memory_mb: Mapped[int | None] = mapped_column(Integer)
    local_gb: Mapped[int | None] = mapped_column(Integer)
    disks: Mapped[int | None] = mapped_column(Integer)
    nics: Mapped[int | None] = mapped_column(Integer)
    vendor: Mapped[str | None] = mapped_column(String(255))
    product: Mapped[str | None] = mapped_column(String(255))
    serial: Mapped[str | None] = mapped_column(String(255))
    bios_version: Mapped[str | None] = mapped_column(String(255))
    source: Mapped[str] = mapped_column(
        String(16), nullable=False, default="inspector", server_default="inspector"
    )
    """Who inspected: ``inspector`` (this service), ``ironic`` (Ironic's own
    inspection, followed), ``upstream`` (imported from ironic-inspector)."""
    interface: Mapped[str | None] = mapped_column(String(32))
    """The Ironic inspect interface of a run whose source is ``ironic``
    (``agent``, ``redfish``...)."""

    __table_args__ = (
        # a node's history, newest first, paged by (finished_at, run)
        Index("hardware_runs_node_idx", "node_uuid", "finished_at", "run"),
        # the age pruning finds the oldest runs of the whole table
        Index("hardware_runs_finished_idx", "finished_at"),
    )
