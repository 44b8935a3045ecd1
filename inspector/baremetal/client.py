"""The Ironic client (openstacksdk), with retries and error translation.

Callers get plain dicts with Ironic's JSON field names and only
:mod:`inspector.exceptions`; nothing from openstacksdk or keystoneauth leaks
out of this module.
"""

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from oslo_config import cfg

from inspector import exceptions, metrics

LOG = logging.getLogger(__name__)

T = TypeVar("T")

API_VERSION = "1.80"
"""Baremetal API microversion: names in node URLs (1.5), port
physical_network (1.34), and everything else used here exist at 1.80."""

NODE_FIELDS = {
    "uuid": "id",
    "name": "name",
    "provision_state": "provision_state",
    "power_state": "power_state",
    "target_power_state": "target_power_state",
    "maintenance": "is_maintenance",
    "driver": "driver",
    "driver_info": "driver_info",
    "properties": "properties",
    "extra": "extra",
    "reservation": "reservation",
    "traits": "traits",
}
PORT_FIELDS = {
    "uuid": "id",
    "address": "address",
    "node_uuid": "node_id",
    "pxe_enabled": "is_pxe_enabled",
    "extra": "extra",
    "local_link_connection": "local_link_connection",
    "physical_network": "physical_network",
}
PORT_BODY_FIELDS = {
    "address": "address",
    "pxe_enabled": "is_pxe_enabled",
    "extra": "extra",
    "local_link_connection": "local_link_connection",
    "physical_network": "physical_network",
}


def _to_dict(resource: Any, fields: dict[str, str]) -> dict[str, Any]:
    return {ours: getattr(resource, theirs, None) for ours, theirs in fields.items()}


class BaremetalClient:
    """Thread-safe Ironic client built from the ``[ironic]`` options."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self._conf = conf
        self._conn: Any = None
        self._lock = threading.Lock()

    def _proxy(self) -> Any:
        """The baremetal proxy, made once under the lock.

        Making it runs openstacksdk's version discovery (two requests to
        Ironic); made lazily by many threads at once, every thread would
        run its own.
        """
        with self._lock:
            if self._conn is None:
                self._conn = self._connect().baremetal
            return self._conn

    def _connect(self) -> Any:
        from keystoneauth1 import exceptions as ks_exc
        from keystoneauth1 import loading as ks_loading
        from openstack import connection

        group = "ironic"
        try:
            auth = ks_loading.load_auth_from_conf_options(self._conf, group)
        except ks_exc.MissingRequiredOptions as exc:
            raise exceptions.ConfigError(
                f"Invalid configuration: [ironic] authentication: {exc}"
            ) from exc
        session = ks_loading.load_session_from_conf_options(
            self._conf, group, auth=auth
        )
        opts = self._conf.ironic
        kwargs: dict[str, Any] = {
            "baremetal_api_version": API_VERSION,
            # retries are ours, so that they follow [ironic]max_retries
            "baremetal_status_code_retries": 0,
            "baremetal_connect_retries": 0,
        }
        if opts.endpoint_override:
            kwargs["baremetal_endpoint_override"] = opts.endpoint_override
        if opts.region_name:
            kwargs["region_name"] = opts.region_name
        if opts.valid_interfaces:
            kwargs["baremetal_interface"] = opts.valid_interfaces[0]
        return connection.Connection(session=session, **kwargs)

    def _call(self, what: str, target: str, func: Callable[[Any], T]) -> T:
        """Run ``func(proxy)`` with retries; translate every failure.

        At DEBUG, one line per call: what, for which node, how it ended and
        how long it took (``debug = True`` follows a node through Ironic).
        """
        started = time.monotonic()
        outcome = "failed"
        try:
            with metrics.IronicCallTimer(what):
                result = self._call_with_retries(what, target, func)
            outcome = "ok"
            return result
        finally:
            LOG.debug(
                "Ironic %s for %s: %s in %.0f ms",
                what,
                target,
                outcome,
                (time.monotonic() - started) * 1000,
            )

    def _call_with_retries(self, what: str, target: str, func: Callable[[Any], T]) -> T:
        from keystoneauth1 import exceptions as ks_exc
        from openstack import exceptions as sdk_exc

        attempts = self._conf.ironic.max_retries + 1
        interval = self._conf.ironic.retry_interval
        for attempt in range(1, attempts + 1):
            last = attempt == attempts
            try:
                return func(self._proxy())
            except sdk_exc.NotFoundException as exc:
                raise self._not_found(what, target, exc) from exc
            except sdk_exc.ConflictException as exc:
                if "locked" in str(exc).lower() or "reservation" in str(exc).lower():
                    if last:
                        raise exceptions.NodeLocked(
                            f"Node {target} stayed locked in Ironic during "
                            f"{attempts} attempts to {what}: {_message(exc)}"
                        ) from exc
                else:
                    raise exceptions.Conflict(
                        f"Ironic refused to {what} for {target}: {_message(exc)}"
                    ) from exc
            except sdk_exc.HttpException as exc:
                status = exc.status_code or 0
                if status in (502, 503, 504) and not last:
                    pass
                elif 400 <= status < 500:
                    raise exceptions.InvalidInput(
                        f"Ironic rejected the request to {what} for {target}: "
                        f"{_message(exc)}"
                    ) from exc
                else:
                    raise exceptions.BaremetalError(
                        reason=f"{what} for {target}: {_message(exc)}"
                    ) from exc
            except (
                ks_exc.ConnectFailure,
                ks_exc.ConnectTimeout,
                ks_exc.UnknownConnectionError,
                sdk_exc.SDKException,
                ConnectionError,
            ) as exc:
                if last:
                    raise exceptions.BaremetalError(
                        reason=f"{what} for {target}: cannot reach Ironic: {exc}"
                    ) from exc
            except ks_exc.ClientException as exc:
                raise exceptions.BaremetalError(
                    reason=f"{what} for {target}: {exc}"
                ) from exc
            except (TypeError, ValueError, KeyError, AttributeError) as exc:
                # the client libraries choking on an answer they did not
                # expect (a proxy's page, a broken version document)
                raise exceptions.BaremetalError(
                    reason=f"{what} for {target}: unexpected answer from Ironic "
                    f"({type(exc).__name__}: {exc})"
                ) from exc
            LOG.debug(
                "Retrying %s for %s (attempt %d of %d)", what, target, attempt, attempts
            )
            time.sleep(interval)
        raise AssertionError("unreachable")

    @staticmethod
    def _not_found(what: str, target: str, exc: Exception) -> exceptions.NotFound:
        if what in ("get node", "list ports"):
            return exceptions.NodeNotFound(node=target)
        return exceptions.NotFound(
            f"Ironic has no such resource while trying to {what} for {target}: "
            f"{_message(exc)}"
        )

    # the interface used by the service

    def get_node(self, node_id: str) -> dict[str, Any]:
        node = self._call(
            "get node",
            node_id,
            lambda bm: bm.get_node(node_id, fields=list(NODE_FIELDS)),
        )
        return _to_dict(node, NODE_FIELDS)

    def list_ports(self, node_uuid: str) -> list[dict[str, Any]]:
        ports = self._call(
            "list ports",
            node_uuid,
            lambda bm: list(bm.ports(node_uuid=node_uuid, fields=list(PORT_FIELDS))),
        )
        return [_to_dict(p, PORT_FIELDS) for p in ports]

    def set_boot_device(
        self, node_uuid: str, device: str = "pxe", persistent: bool = False
    ) -> None:
        self._call(
            "set boot device",
            node_uuid,
            lambda bm: bm.set_node_boot_device(
                node_uuid, device, persistent=persistent
            ),
        )

    def set_power_state(self, node_uuid: str, target: str) -> None:
        self._call(
            f"set power state {target!r}",
            node_uuid,
            lambda bm: bm.set_node_power_state(node_uuid, target, wait=False),
        )

    def patch_node(
        self, node_uuid: str, patches: list[dict[str, Any]]
    ) -> dict[str, Any]:
        node = self._call(
            "update node", node_uuid, lambda bm: bm.patch_node(node_uuid, patches)
        )
        return _to_dict(node, NODE_FIELDS)

    def create_port(self, node_uuid: str, body: dict[str, Any]) -> dict[str, Any]:
        attrs = {
            PORT_BODY_FIELDS[k]: v for k, v in body.items() if k in PORT_BODY_FIELDS
        }
        port = self._call(
            "create port",
            node_uuid,
            lambda bm: bm.create_port(node_id=node_uuid, **attrs),
        )
        return _to_dict(port, PORT_FIELDS)

    def delete_port(self, port_uuid: str) -> None:
        self._call(
            "delete port",
            port_uuid,
            lambda bm: bm.delete_port(port_uuid, ignore_missing=True),
        )

    def patch_port(
        self, port_uuid: str, patches: list[dict[str, Any]]
    ) -> dict[str, Any]:
        port = self._call(
            "update port", port_uuid, lambda bm: bm.patch_port(port_uuid, patches)
        )
        return _to_dict(port, PORT_FIELDS)

    def create_node(self, body: dict[str, Any]) -> dict[str, Any]:
        """Create a node (discovery); ``body`` uses Ironic's field names."""
        node = self._call(
            "create node", body.get("driver", "?"), lambda bm: bm.create_node(**body)
        )
        return _to_dict(node, NODE_FIELDS)

    def list_nodes_driver_info(self) -> list[dict[str, Any]]:
        """Every node's uuid and driver_info: to find a BMC address."""
        nodes = self._call(
            "list nodes",
            "all",
            lambda bm: list(bm.nodes(fields=["uuid", "driver_info"])),
        )
        return [{"uuid": n.id, "driver_info": n.driver_info or {}} for n in nodes]

    def list_node_uuids(self) -> set[str]:
        """Every node Ironic has (the reconcile's first and only listing)."""
        nodes = self._call(
            "list nodes", "all", lambda bm: list(bm.nodes(fields=["uuid"]))
        )
        return {str(n.id) for n in nodes}

    def list_port_addresses(self) -> set[str]:
        """The MAC address of every port Ironic has (one paginated listing
        asking for the address only): the PXE filter's repair sync."""
        ports = self._call(
            "list ports", "all", lambda bm: list(bm.ports(fields=["address"]))
        )
        return {str(p.address).lower() for p in ports if p.address}

    def port_exists(self, address: str) -> bool:
        ports = self._call(
            "find port",
            address,
            lambda bm: list(bm.ports(address=address, fields=["uuid"])),
        )
        return bool(ports)

    def add_trait(self, node_uuid: str, trait: str) -> None:
        self._call(
            "add trait", node_uuid, lambda bm: bm.add_node_trait(node_uuid, trait)
        )

    def remove_trait(self, node_uuid: str, trait: str) -> None:
        """Remove ``trait``; a node without it is left as it is."""

        def remove(bm: Any) -> None:
            from openstack import exceptions as sdk_exc

            try:
                bm.remove_node_trait(node_uuid, trait, ignore_missing=True)
            except sdk_exc.NotFoundException as exc:
                # the SDK ignores only a 400; Ironic answers 404 "Node X
                # doesn't have a trait 'T'" (a missing node still raises)
                if f"trait '{trait}'" not in _message(exc):
                    raise
                LOG.debug("Node %s has no trait %s to remove", node_uuid, trait)

        self._call("remove trait", node_uuid, remove)


def _message(exc: Exception) -> str:
    """Ironic's own error text when the SDK kept it, else the exception."""
    details = getattr(exc, "details", None)
    return str(details or exc).strip()
