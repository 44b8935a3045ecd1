"""An in-memory stand-in for Ironic at the client boundary (functional tests)."""

import copy
import threading
import uuid as uuidlib
from typing import Any

from inspector import exceptions


class FakeIronic:
    """Implements the BaremetalClient interface over dictionaries."""

    def __init__(self) -> None:
        self.nodes: dict[str, dict[str, Any]] = {}
        self.ports: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, str]] = []
        self.fail: dict[str, exceptions.InspectorError] = {}
        self._lock = threading.Lock()

    # test helpers

    def add_node(
        self,
        name: str | None = None,
        *,
        bmc: str | None = None,
        macs: tuple[str, ...] = (),
        provision_state: str = "manageable",
        properties: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        uuid = str(uuidlib.uuid4())
        node = {
            "uuid": uuid,
            "name": name,
            "provision_state": provision_state,
            "power_state": "power off",
            "maintenance": False,
            "driver": "fake-hardware",
            "driver_info": {"ipmi_address": bmc} if bmc else {},
            "properties": dict(properties or {}),
            "extra": {},
            "reservation": None,
            "boot_device": None,
        }
        self.nodes[uuid] = node
        for mac in macs:
            self.create_port(uuid, {"address": mac, "pxe_enabled": True})
        self.calls.clear()
        return node

    def node_ports(self, node_uuid: str) -> list[dict[str, Any]]:
        return [p for p in self.ports.values() if p["node_uuid"] == node_uuid]

    def _record(self, call: str, target: str) -> None:
        with self._lock:
            self.calls.append((call, target))
        if call in self.fail:
            raise self.fail[call]

    def _node(self, node_id: str) -> dict[str, Any]:
        if node_id in self.nodes:
            return self.nodes[node_id]
        for node in self.nodes.values():
            if node["name"] == node_id:
                return node
        raise exceptions.NodeNotFound(node=node_id)

    # the client interface

    def get_node(self, node_id: str) -> dict[str, Any]:
        self._record("get_node", node_id)
        return copy.deepcopy(self._node(node_id))

    def list_ports(self, node_uuid: str) -> list[dict[str, Any]]:
        self._record("list_ports", node_uuid)
        return copy.deepcopy(self.node_ports(node_uuid))

    def set_boot_device(
        self, node_uuid: str, device: str = "pxe", persistent: bool = False
    ) -> None:
        self._record("set_boot_device", node_uuid)
        self._node(node_uuid)["boot_device"] = device

    def set_power_state(self, node_uuid: str, target: str) -> None:
        self._record("set_power_state", node_uuid)
        state = "power off" if target == "power off" else "power on"
        self._node(node_uuid)["power_state"] = state

    def patch_node(
        self, node_uuid: str, patches: list[dict[str, Any]]
    ) -> dict[str, Any]:
        self._record("patch_node", node_uuid)
        node = self._node(node_uuid)
        for patch in patches:
            parts = patch["path"].strip("/").split("/")
            target = node
            for part in parts[:-1]:
                target = target.setdefault(part, {})
            if patch["op"] == "remove":
                target.pop(parts[-1], None)
            else:
                target[parts[-1]] = patch["value"]
        return copy.deepcopy(node)

    def create_node(self, body: dict[str, Any]) -> dict[str, Any]:
        self._record("create_node", body.get("driver", "?"))
        node = self.add_node(provision_state="enroll")
        node.update(copy.deepcopy(body))
        return copy.deepcopy(node)

    def list_nodes_driver_info(self) -> list[dict[str, Any]]:
        self._record("list_nodes", "all")
        return [
            {"uuid": n["uuid"], "driver_info": dict(n["driver_info"])}
            for n in self.nodes.values()
        ]

    def list_node_uuids(self) -> set[str]:
        self._record("list_nodes", "all")
        return set(self.nodes)

    def port_exists(self, address: str) -> bool:
        self._record("find_port", address)
        return any(p["address"] == address for p in self.ports.values())

    def add_trait(self, node_uuid: str, trait: str) -> None:
        self._record("add_trait", node_uuid)
        traits = self._node(node_uuid).setdefault("traits", [])
        if trait not in traits:
            traits.append(trait)

    def remove_trait(self, node_uuid: str, trait: str) -> None:
        self._record("remove_trait", node_uuid)
        traits = self._node(node_uuid).setdefault("traits", [])
        if trait in traits:
            traits.remove(trait)

    def create_port(self, node_uuid: str, body: dict[str, Any]) -> dict[str, Any]:
        self._record("create_port", node_uuid)
        address = body["address"].lower()
        if any(p["address"] == address for p in self.ports.values()):
            raise exceptions.Conflict(
                f"A port with MAC address {address} already exists"
            )
        port = {
            "uuid": str(uuidlib.uuid4()),
            "node_uuid": node_uuid,
            "extra": {},
            "local_link_connection": {},
            **body,
            "address": address,
        }
        self.ports[port["uuid"]] = port
        return copy.deepcopy(port)

    def delete_port(self, port_uuid: str) -> None:
        self._record("delete_port", port_uuid)
        self.ports.pop(port_uuid, None)

    def patch_port(
        self, port_uuid: str, patches: list[dict[str, Any]]
    ) -> dict[str, Any]:
        self._record("patch_port", port_uuid)
        port = self.ports[port_uuid]
        for patch in patches:
            port[patch["path"].strip("/")] = patch.get("value")
        return copy.deepcopy(port)

    # [redfish]engine = ironic: Ironic's own redfish inspection, done at once
    # with what a test put in the node's "_inspection" (its "inventory", or
    # its "last_error"); it creates ports and writes properties as Ironic's
    # does, so a test sees whether ours fight them

    def set_provision_state(self, node_uuid: str, target: str) -> None:
        self._record(f"set_provision_state {target}", node_uuid)
        node = self._node(node_uuid)
        inspection = node.get("_inspection") or {}
        if inspection.get("last_error"):
            node["provision_state"] = "inspect failed"
            node["last_error"] = inspection["last_error"]
            return
        inventory = inspection.get("inventory") or {}
        for nic in inventory.get("interfaces") or []:
            port = {
                "uuid": str(uuidlib.uuid4()),
                "node_uuid": node_uuid,
                "address": nic["mac_address"].lower(),
                "pxe_enabled": False,
                "extra": {},
                "local_link_connection": {},
            }
            self.ports[port["uuid"]] = port
        memory = (inventory.get("memory") or {}).get("physical_mb")
        if memory:
            node["properties"]["memory_mb"] = memory
        node["provision_state"] = "manageable"
        node["last_error"] = None

    def get_inventory(self, node_uuid: str) -> dict[str, Any]:
        self._record("get_inventory", node_uuid)
        inspection = self._node(node_uuid).get("_inspection") or {}
        if "inventory" not in inspection:
            raise exceptions.NotFound(f"Node {node_uuid} has no inventory")
        return {"inventory": copy.deepcopy(inspection["inventory"]), "plugin_data": {}}

    # Ironic's own inspections, as the hook's push is checked against them:
    # a test sets a node's "inspection_started_at" (and, once Ironic ends
    # it, "inspection_finished_at") as Ironic writes them

    def inspected_node(self, node_uuid: str) -> dict[str, Any]:
        self._record("inspected_node", node_uuid)
        node = self._node(node_uuid)
        return {
            "uuid": node["uuid"],
            "name": node["name"],
            "inspect_interface": node.get("inspect_interface"),
            "inspection_started_at": node.get("inspection_started_at"),
            "inspection_finished_at": node.get("inspection_finished_at"),
        }
