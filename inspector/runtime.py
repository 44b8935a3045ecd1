"""The objects one service process shares between its API and conductor."""

import dataclasses
import uuid
from typing import TYPE_CHECKING

from oslo_config import cfg

from inspector.db.engine import Database
from inspector.locking.base import LockProvider

if TYPE_CHECKING:
    from inspector.baremetal.client import BaremetalClient
    from inspector.conductor.rpcapi import ConductorClient
    from inspector.coordination.service_group import ServiceGroup


@dataclasses.dataclass
class Runtime:
    """Process-wide dependencies, built once by an entry point and passed down."""

    conf: cfg.ConfigOpts
    db: Database
    baremetal: "BaremetalClient"
    locks: LockProvider
    rpc: "ConductorClient | None" = None
    conductors: "ServiceGroup | None" = None
    """The view of the conductors (list, enable/disable) the API serves."""
    run_id: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex)
    """This run of the process: a restart with the same host is a new run."""
