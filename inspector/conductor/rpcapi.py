"""Client side of the conductor RPC API (casts only)."""

import logging
from typing import Any

import oslo_messaging as messaging
from oslo_config import cfg

from inspector import exceptions

LOG = logging.getLogger(__name__)

TOPIC = "ironic_inspector.conductor"
RPC_API_VERSION = "1.0"
"""1.0: start_introspection, process, reapply, abort."""


class ConductorClient:
    """Casts work to a conductor; never waits for the result."""

    def __init__(
        self, conf: cfg.ConfigOpts, transport: messaging.Transport, server: str
    ) -> None:
        target = messaging.Target(topic=TOPIC, version=RPC_API_VERSION, server=server)
        self._client = messaging.get_rpc_client(transport, target)

    def _cast(self, method: str, **kwargs: Any) -> None:
        try:
            self._client.prepare().cast({}, method, **kwargs)
        except messaging.MessageDeliveryFailure as exc:
            raise exceptions.ServiceUnavailable(
                reason=f"could not hand {method} over to a conductor: {exc}"
            ) from exc

    def start_introspection(self, uuid: str, version: int) -> None:
        self._cast("start_introspection", uuid=uuid, version=version)

    def process(self, uuid: str, version: int) -> None:
        self._cast("process", uuid=uuid, version=version)

    def reapply(self, uuid: str, version: int) -> None:
        self._cast("reapply", uuid=uuid, version=version)

    def abort(self, uuid: str, version: int) -> None:
        self._cast("abort", uuid=uuid, version=version)
