"""The objects one service process shares between its parts, built
complete by the composition root (:mod:`inspector.server.wiring`) and
never changed after."""

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
    from inspector.db.data_store import DataStores


@dataclasses.dataclass(frozen=True, kw_only=True)
class Runtime:
    """Process-wide dependencies, built once by an entry point and passed down."""

    conf: cfg.ConfigOpts
    db: Database
    baremetal: "BaremetalClient"
    locks: LockProvider
    stores: "DataStores"
    """Where the data goes once processing ends ([processing]store_data)."""
    run_id: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex)
    """This run of the process: a restart with the same host is a new run."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ApiRuntime(Runtime):
    """A process that serves the API (standalone, or the split API): it
    also hands work to conductors and shows them."""

    rpc: "ConductorClient"
    conductors: "ServiceGroup"
    """The view of the conductors (list, enable/disable) the API serves."""
