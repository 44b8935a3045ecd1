"""Ironic's own ``redfish`` inspection, measured: nodes of driver
``redfish`` inspected by the lab's real Ironic itself (its ``redfish``
hardware type is enabled), the out-of-band benchmark's comparison
(lab/bench/redfish.py).
"""

import concurrent.futures
import time
from typing import Any

import requests

from lab import procstat
from lab.machines import enroll
from lab.machines.redfish_nodes import MachineBmc
from lab.servers.ironic import IronicServer
from lab.waiting import wait_until


def inspects(
    api: enroll.IronicAPI, ironic: IronicServer, bmcs: list[MachineBmc]
) -> dict[str, Any]:
    """Ironic's own ``redfish`` inspection of the systems of ``bmcs``
    (nodes of driver ``redfish``), all at once: its CPU and the wall time."""

    def enroll_one(bmc: MachineBmc) -> str:
        node = api.request(
            "POST",
            "/v1/nodes",
            json={
                "name": f"ironic-{bmc.name}",
                "driver": "redfish",
                "inspect_interface": "redfish",
                "driver_info": bmc.driver_info(),
            },
        )
        return str(node["uuid"])

    # Ironic's redfish "manage" checks each BMC (a session, its PBKDF2):
    # few at a time, so the lab's one Ironic process keeps answering
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        uuids = list(pool.map(enroll_one, bmcs))
    for uuid in uuids:
        api.request(
            "PUT", f"/v1/nodes/{uuid}/states/provision", json={"target": "manage"}
        )

    def states() -> list[str]:
        # one listing: a poll per node kept the busy Ironic busier
        listed = api.request("GET", "/v1/nodes?fields=uuid,provision_state&limit=1000")
        by_uuid = {n["uuid"]: n["provision_state"] for n in listed["nodes"]}
        return [by_uuid.get(u, "") for u in uuids]

    wait_until(
        states,
        120 + 3 * len(uuids),
        "Ironic's redfish nodes to be manageable",
        until=lambda found: all(s == "manageable" for s in found),
        ignoring=(RuntimeError, requests.RequestException),
        interval=0.5,
    )
    before = procstat.cpu_seconds(ironic.pid or 0)
    started = time.monotonic()
    for uuid in uuids:
        api.request(
            "PUT", f"/v1/nodes/{uuid}/states/provision", json={"target": "inspect"}
        )
    found = wait_until(
        states,
        120 + 2 * len(uuids),
        "Ironic's inspections to end",
        until=lambda found: all(s in ("manageable", "inspect failed") for s in found),
        ignoring=(RuntimeError, requests.RequestException),
        interval=0.5,
    )
    wall = time.monotonic() - started
    cpu = procstat.cpu_seconds(ironic.pid or 0) - before
    failed = [u for u, s in zip(uuids, found, strict=True) if s == "inspect failed"]
    return {
        "wall_s": round(wall, 2),
        "failed": len(failed),
        "first_failure": api.node(failed[0]).get("last_error") if failed else None,
        "ironic_cpu_s": round(cpu, 2),
        "ironic_cpu_ms_per_machine": round(1000 * cpu / len(uuids), 1),
        "machines": len(uuids),
    }
