"""The Ironic client: plain REST requests authenticated by keystoneauth, with
retries and error translation.

Callers get plain dicts with Ironic's JSON field names and only
:mod:`inspector.exceptions`; nothing from keystoneauth leaks out of this
module. It speaks the Bare Metal REST API directly (no SDK resource
objects): each call is one request whose answer is the JSON Ironic sent,
which costs a third of the CPU the SDK took per call.
"""

import json
import logging
import threading
import time
import urllib.parse
from typing import Any

from oslo_config import cfg

from inspector import exceptions, metrics
from inspector.baremetal import direct

LOG = logging.getLogger(__name__)

API_VERSION = "1.80"
"""Baremetal API microversion: names in node URLs (1.5), port
physical_network (1.34), and everything else used here exist at 1.80."""
INVENTORY_API_VERSION = "1.81"
"""The node inventory endpoint's (asked only with [redfish]engine = ironic)."""

NODE_FIELDS = (
    "uuid",
    "name",
    "provision_state",
    "power_state",
    "target_power_state",
    "maintenance",
    "driver",
    "driver_info",
    "properties",
    "extra",
    "reservation",
    "traits",
    # [redfish]engine = ironic: may Ironic inspect it, and why it failed
    "inspect_interface",
    "last_error",
    # ... and which of Ironic's inspections it was (the follower skips it)
    "inspection_started_at",
    "inspection_finished_at",
)
INSPECTED_FIELDS = (
    "uuid",
    "name",
    "inspect_interface",
    "inspection_started_at",
    "inspection_finished_at",
)
"""What the follower reads of each node (API 1.6+)."""
PORT_FIELDS = (
    "uuid",
    "address",
    "node_uuid",
    "pxe_enabled",
    "extra",
    "local_link_connection",
    "physical_network",
)
PORT_BODY_FIELDS = (
    "address",
    "pxe_enabled",
    "extra",
    "local_link_connection",
    "physical_network",
)
RETRIED_STATUSES = (502, 503, 504)


def _pick(item: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    return {field: item.get(field) for field in fields}


def _quote(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _message(resp: Any) -> str:
    """Ironic's own error text (``faultstring``), else the body's start."""
    try:
        body = resp.json()
    except ValueError:
        return (resp.text or "").strip()[:300] or f"HTTP {resp.status_code}"
    error = body.get("error_message") if isinstance(body, dict) else None
    if isinstance(error, str):
        try:
            error = json.loads(error)
        except ValueError:
            return error.strip()
    if isinstance(error, dict) and error.get("faultstring"):
        return str(error["faultstring"]).strip()
    return json.dumps(body)[:300]


class BaremetalClient:
    """Thread-safe Ironic client built from the ``[ironic]`` options."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self._conf = conf
        self._conn: direct.DirectTransport | None = None
        self._base: str | None = None
        self._lock = threading.Lock()

    def _adapter(self) -> tuple[direct.DirectTransport, str]:
        """The transport and Ironic's root URL, made once.

        Finding the endpoint may authenticate and read the catalog; made
        lazily by many threads at once, each would do its own. Requests go
        over :mod:`inspector.baremetal.direct` (through a proxy from the
        environment where one applies).
        """
        with self._lock:
            if self._conn is None:
                adapter = self._connect()
                self._base = self._root(adapter)
                self._conn = direct.DirectTransport(adapter, self._base)
            elif self._base is None:
                self._base = self._root(self._conn)
            return self._conn, self._base

    @staticmethod
    def _root(conn: Any) -> str:
        endpoint = conn.get_endpoint()
        if not endpoint:
            raise exceptions.ConfigError(
                "Invalid configuration: no Ironic endpoint: set "
                "[ironic]endpoint_override or register the baremetal "
                "service in the catalog"
            )
        base = str(endpoint).rstrip("/")
        return base[: -len("/v1")] if base.endswith("/v1") else base

    def _connect(self) -> Any:
        from keystoneauth1 import adapter
        from keystoneauth1 import exceptions as ks_exc
        from keystoneauth1 import loading as ks_loading

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
        return adapter.Adapter(
            session,
            service_type=opts.service_type or "baremetal",
            interface=opts.valid_interfaces or None,
            region_name=opts.region_name,
            endpoint_override=opts.endpoint_override,
            additional_headers={"X-OpenStack-Ironic-API-Version": API_VERSION},
            # retries are ours, so that they follow [ironic]max_retries
            connect_retries=0,
            status_code_retries=0,
            raise_exc=False,
        )

    def _call(
        self,
        what: str,
        target: str,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """One request with retries; the JSON answer (None when empty).

        At DEBUG, one line per call: what, for which node, how it ended and
        how long it took (``debug = True`` follows a node through Ironic).
        """
        started = time.monotonic()
        outcome = "failed"
        try:
            with metrics.IronicCallTimer(what):
                result = self._call_with_retries(
                    what, target, method, path, body, headers
                )
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

    def _call_with_retries(
        self,
        what: str,
        target: str,
        method: str,
        path: str,
        body: Any,
        headers: dict[str, str] | None = None,
    ) -> Any:
        from keystoneauth1 import exceptions as ks_exc

        attempts = self._conf.ironic.max_retries + 1
        interval = self._conf.ironic.retry_interval
        for attempt in range(1, attempts + 1):
            last = attempt == attempts
            try:
                conn, base = self._adapter()
                url = path if "://" in path else base + path
                kwargs: dict[str, Any] = {} if body is None else {"json": body}
                if headers:
                    kwargs["headers"] = headers
                resp = conn.request(url, method, **kwargs)
            except (
                ks_exc.ConnectFailure,
                ks_exc.ConnectTimeout,
                ks_exc.UnknownConnectionError,
                ks_exc.RetriableConnectionFailure,
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
            else:
                status = resp.status_code
                if status < 300:
                    return self._json(what, target, resp)
                self._refuse(what, target, resp, last)
            LOG.debug(
                "Retrying %s for %s (attempt %d of %d)", what, target, attempt, attempts
            )
            time.sleep(interval)
        raise AssertionError("unreachable")

    @staticmethod
    def _json(what: str, target: str, resp: Any) -> Any:
        if not resp.content:
            return None
        try:
            data = resp.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            # a proxy's page where Ironic should have answered
            raise exceptions.BaremetalError(
                reason=f"{what} for {target}: unexpected answer from Ironic "
                f"(HTTP {resp.status_code}, not a JSON object: {resp.text[:100]!r})"
            )
        return data

    @staticmethod
    def _refuse(what: str, target: str, resp: Any, last: bool) -> None:
        """Raise for an error answer, or return when it is worth a retry."""
        status, message = resp.status_code, _message(resp)
        if status == 404:
            if what in ("get node", "list ports"):
                raise exceptions.NodeNotFound(node=target)
            raise exceptions.NotFound(
                f"Ironic has no such resource while trying to {what} for "
                f"{target}: {message}"
            )
        if status == 409:
            if "locked" not in message.lower() and "reservation" not in message.lower():
                raise exceptions.Conflict(
                    f"Ironic refused to {what} for {target}: {message}"
                )
            if last:
                raise exceptions.NodeLocked(
                    f"Node {target} stayed locked in Ironic during the attempts "
                    f"to {what}: {message}"
                )
            return
        if status in RETRIED_STATUSES and not last:
            return
        if status == 403:
            raise exceptions.BaremetalForbidden(
                f"Ironic's policy refused the request to {what} for {target}: {message}"
            )
        if 400 <= status < 500:
            raise exceptions.InvalidInput(
                f"Ironic rejected the request to {what} for {target}: {message}"
            )
        raise exceptions.BaremetalError(reason=f"{what} for {target}: {message}")

    def _list(self, what: str, target: str, path: str, key: str) -> list[Any]:
        """Every item of a listing, following Ironic's pages."""
        items: list[Any] = []
        next_url: str | None = path
        while next_url:
            page = self._call(what, target, "GET", next_url) or {}
            items += page.get(key) or []
            next_url = page.get("next")
        return items

    # the interface used by the service

    def get_node(self, node_id: str) -> dict[str, Any]:
        fields = ",".join(NODE_FIELDS)
        node = self._call(
            "get node", node_id, "GET", f"/v1/nodes/{_quote(node_id)}?fields={fields}"
        )
        if not node:
            raise exceptions.BaremetalError(
                reason=f"get node for {node_id}: Ironic answered with no node"
            )
        return _pick(node, NODE_FIELDS)

    def list_ports(self, node_uuid: str) -> list[dict[str, Any]]:
        query = urllib.parse.urlencode(
            {"node_uuid": node_uuid, "fields": ",".join(PORT_FIELDS)}
        )
        ports = self._list("list ports", node_uuid, f"/v1/ports?{query}", "ports")
        return [_pick(p, PORT_FIELDS) for p in ports]

    def set_boot_device(
        self, node_uuid: str, device: str = "pxe", persistent: bool = False
    ) -> None:
        self._call(
            "set boot device",
            node_uuid,
            "PUT",
            f"/v1/nodes/{_quote(node_uuid)}/management/boot_device",
            {"boot_device": device, "persistent": persistent},
        )

    def set_power_state(self, node_uuid: str, target: str) -> None:
        self._call(
            f"set power state {target!r}",
            node_uuid,
            "PUT",
            f"/v1/nodes/{_quote(node_uuid)}/states/power",
            {"target": target},
        )

    def set_provision_state(self, node_uuid: str, target: str) -> None:
        """Ask Ironic for a provision action (``inspect``: its own
        inspection through the node's inspect interface)."""
        self._call(
            f"set provision state {target!r}",
            node_uuid,
            "PUT",
            f"/v1/nodes/{_quote(node_uuid)}/states/provision",
            {"target": target},
        )

    def get_inventory(self, node_uuid: str) -> dict[str, Any]:
        """What Ironic's own inspection stored: ``inventory`` (in
        ironic-python-agent's shape) and ``plugin_data`` (API 1.81)."""
        answer = self._call(
            "get inventory",
            node_uuid,
            "GET",
            f"/v1/nodes/{_quote(node_uuid)}/inventory",
            headers={"X-OpenStack-Ironic-API-Version": INVENTORY_API_VERSION},
        )
        return answer or {}

    def inspected_page(
        self, limit: int, marker: str | None = None, by_finish: bool = True
    ) -> list[dict[str, Any]]:
        """One page of nodes with the fields the follower reads
        (:data:`INSPECTED_FIELDS`): sorted on ``inspection_finished_at``
        after the node ``marker`` (Ironic breaks ties itself), else in
        Ironic's default order (a whole scan's pages, ``marker`` the last
        node of the page before)."""
        query: dict[str, Any] = {"fields": ",".join(INSPECTED_FIELDS), "limit": limit}
        if by_finish:
            query.update(sort_key="inspection_finished_at", sort_dir="asc")
        if marker is not None:
            query["marker"] = marker
        path = "/v1/nodes?" + urllib.parse.urlencode(query)
        page = self._call("list inspected nodes", "the node list", "GET", path) or {}
        return [_pick(node, INSPECTED_FIELDS) for node in page.get("nodes") or []]

    def inspected_node(self, node_uuid: str) -> dict[str, Any]:
        """One node with the fields the follower reads."""
        fields = ",".join(INSPECTED_FIELDS)
        path = f"/v1/nodes/{_quote(node_uuid)}?fields={fields}"
        return _pick(
            self._call("get node", node_uuid, "GET", path) or {}, INSPECTED_FIELDS
        )

    def max_version(self) -> str | None:
        """Ironic's newest API microversion (``GET /``), None if unsaid."""
        root = self._call("read API versions", "Ironic", "GET", "/") or {}
        default = root.get("default_version") or {}
        version = default.get("version") if isinstance(default, dict) else None
        return str(version) if version else None

    def patch_node(
        self, node_uuid: str, patches: list[dict[str, Any]]
    ) -> dict[str, Any]:
        node = self._call(
            "update node", node_uuid, "PATCH", f"/v1/nodes/{_quote(node_uuid)}", patches
        )
        return _pick(node or {}, NODE_FIELDS)

    def create_port(self, node_uuid: str, body: dict[str, Any]) -> dict[str, Any]:
        wanted = {k: v for k, v in body.items() if k in PORT_BODY_FIELDS}
        port = self._call(
            "create port",
            node_uuid,
            "POST",
            "/v1/ports",
            {"node_uuid": node_uuid, **wanted},
        )
        return _pick(port or {}, PORT_FIELDS)

    def delete_port(self, port_uuid: str) -> None:
        try:
            self._call(
                "delete port", port_uuid, "DELETE", f"/v1/ports/{_quote(port_uuid)}"
            )
        except exceptions.NotFound:
            LOG.debug("Port %s was already gone", port_uuid)

    def patch_port(
        self, port_uuid: str, patches: list[dict[str, Any]]
    ) -> dict[str, Any]:
        port = self._call(
            "update port", port_uuid, "PATCH", f"/v1/ports/{_quote(port_uuid)}", patches
        )
        return _pick(port or {}, PORT_FIELDS)

    def create_node(self, body: dict[str, Any]) -> dict[str, Any]:
        """Create a node (discovery); ``body`` uses Ironic's field names."""
        node = self._call(
            "create node", body.get("driver", "?"), "POST", "/v1/nodes", body
        )
        return _pick(node or {}, NODE_FIELDS)

    def list_nodes_driver_info(self) -> list[dict[str, Any]]:
        """Every node's uuid and driver_info: to find a BMC address."""
        nodes = self._list(
            "list nodes", "all", "/v1/nodes?fields=uuid,driver_info", "nodes"
        )
        return [
            {"uuid": n["uuid"], "driver_info": n.get("driver_info") or {}}
            for n in nodes
        ]

    def list_node_uuids(self) -> set[str]:
        """Every node Ironic has (the reconcile's first and only listing)."""
        nodes = self._list("list nodes", "all", "/v1/nodes?fields=uuid", "nodes")
        return {str(n["uuid"]) for n in nodes}

    def list_port_addresses(self) -> set[str]:
        """The MAC address of every port Ironic has (one paginated listing
        asking for the address only): the PXE filter's repair sync."""
        ports = self._list("list ports", "all", "/v1/ports?fields=address", "ports")
        return {str(p["address"]).lower() for p in ports if p.get("address")}

    def port_exists(self, address: str) -> bool:
        query = urllib.parse.urlencode({"address": address, "fields": "uuid"})
        ports = self._list("find port", address, f"/v1/ports?{query}", "ports")
        return bool(ports)

    def add_trait(self, node_uuid: str, trait: str) -> None:
        self._call(
            "add trait",
            node_uuid,
            "PUT",
            f"/v1/nodes/{_quote(node_uuid)}/traits/{_quote(trait)}",
        )

    def remove_trait(self, node_uuid: str, trait: str) -> None:
        """Remove ``trait``; a node without it is left as it is."""
        try:
            self._call(
                "remove trait",
                node_uuid,
                "DELETE",
                f"/v1/nodes/{_quote(node_uuid)}/traits/{_quote(trait)}",
            )
        except exceptions.NotFound as exc:
            # Ironic answers 404 "Node X doesn't have a trait 'T'" (a
            # missing node is a 404 too, and still raises)
            if f"trait '{trait}'" not in str(exc):
                raise
            LOG.debug("Node %s has no trait %s to remove", node_uuid, trait)
