"""Puts lab machines into Ironic as fake-hardware nodes, and takes them out."""

import concurrent.futures
import logging
import time
from typing import Any

import requests

from lab.machines.hardware import Machine
from lab.waiting import wait_until

LOG = logging.getLogger(__name__)

HEADERS = {"X-OpenStack-Ironic-API-Version": "1.80"}
VERIFY_POLL = 0.25
"""Seconds between looks at a node Ironic verifies (``manage``)."""


class IronicAPI:
    """A small REST client for the lab's own use of Ironic."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.http = requests.Session()
        self.http.headers.update(HEADERS)
        # enrolling runs 16 threads on this session
        self.http.mount("http://", requests.adapters.HTTPAdapter(pool_maxsize=32))

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        for attempt in range(20):
            try:
                resp = self.http.request(method, self.url + path, timeout=30, **kwargs)
            except requests.ConnectionError:
                if attempt == 19:
                    raise
                time.sleep(0.2)
                continue
            if resp.status_code in (409, 503) and "locked" in resp.text.lower():
                time.sleep(0.2)
                continue
            if resp.status_code >= 400:
                raise RuntimeError(
                    f"Ironic {method} {path}: {resp.status_code} {resp.text[:300]}"
                )
            return resp.json() if resp.content else None
        raise RuntimeError(f"Ironic {method} {path}: node stayed locked")

    def node(self, node_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self.request("GET", f"/v1/nodes/{node_id}")
        return result

    def nodes(
        self,
        fields: str = "uuid,name,power_state,provision_state",
        recent: int | None = None,
    ) -> list[dict[str, Any]]:
        """Nodes with ``fields``; only the ``recent`` last updated when set
        (a fleet's full listing would load Ironic more than the work)."""
        query = f"fields={fields}"
        if recent is not None:
            query += f"&sort_key=updated_at&sort_dir=desc&limit={recent}"
        return list(self.request("GET", f"/v1/nodes?{query}")["nodes"])

    def ports(self, node_uuid: str) -> list[dict[str, Any]]:
        return list(
            self.request("GET", f"/v1/ports?node_uuid={node_uuid}&detail=true")["ports"]
        )


def enroll_one(api: IronicAPI, machine: Machine) -> str:
    """Create the node (and maybe its PXE port), move it to manageable."""
    node = api.request(
        "POST",
        "/v1/nodes",
        json={
            "name": machine.name,
            "driver": "fake-hardware",
            "driver_info": {
                "ipmi_address": machine.bmc_address,
                "ipmi_username": "admin",
                "ipmi_password": "lab-secret",
            },
            "resource_class": "baremetal",
        },
    )
    uuid = str(node["uuid"])
    if machine.enroll_port:
        api.request(
            "POST",
            "/v1/ports",
            json={"node_uuid": uuid, "address": machine.pxe_mac, "pxe_enabled": True},
        )
    api.request("PUT", f"/v1/nodes/{uuid}/states/provision", json={"target": "manage"})

    def verified() -> dict[str, Any]:
        node: dict[str, Any] = api.request(
            "GET", f"/v1/nodes/{uuid}?fields=provision_state,last_error"
        )
        if node["provision_state"] == "enroll" and node.get("last_error"):
            raise RuntimeError(
                f"{machine.name} failed to become manageable: {node['last_error']}"
            )
        return node

    # each look costs Ironic ~15 ms of CPU, as much as a third of what the
    # rest of the enrolment costs it when looked at every 0.1 s
    wait_until(
        verified,
        60,
        f"{machine.name} to become manageable",
        until=lambda node: node["provision_state"] == "manageable",
        interval=VERIFY_POLL,
    )
    return uuid


def enroll(api: IronicAPI, machines: list[Machine], workers: int = 8) -> dict[str, str]:
    """Enroll every machine concurrently; returns machine name -> node UUID."""
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        uuids = list(pool.map(lambda m: enroll_one(api, m), machines))
    return {m.name: u for m, u in zip(machines, uuids, strict=True)}


def delete_all(api: IronicAPI) -> None:
    for node in api.nodes("uuid"):
        api.request("DELETE", f"/v1/nodes/{node['uuid']}")
