"""What an ironic-inspector 12.x deployment holds, as both readers give
it: its nodes (status, lookup attributes, options, stored data) and its
rules in 12.x's API shape."""

import dataclasses
import datetime
from typing import Any


@dataclasses.dataclass
class UpstreamNode:
    """One node of 12.x: its introspection status and what it keeps."""

    uuid: str
    state: str
    started_at: datetime.datetime | None
    finished_at: datetime.datetime | None
    error: str | None
    manage_boot: bool
    attributes: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    """Lookup attributes (``mac``, ``bmc_address``...), as 12.x keeps them."""
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    processed: dict[str, Any] | None = None
    unprocessed: dict[str, Any] | None = None
    data_known: bool = True
    """False when the reader could not tell whether data is stored (the
    API answers 404 alike for none and for an unreadable store)."""


@dataclasses.dataclass
class Upstream:
    """A whole 12.x deployment, and where it was read from."""

    where: str
    nodes: list[UpstreamNode] = dataclasses.field(default_factory=list)
    rules: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """Each as 12.x's ``GET /v1/rules/<uuid>`` answers it (``uuid``,
    ``description``, ``conditions``, ``actions``, ``scope``, ``disabled``,
    ``created_at``)."""
    through_api: bool = False
    """Read through the API: no lookup attributes or options."""
