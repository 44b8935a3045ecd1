"""The fleet view reads what the processing step wrote: machines
introspected through the API (no hand-written rows), one of them again
with a disk swapped and less memory, seen by /v1/inventory, its summary
and the /fleet page at once."""

import copy
import uuid as uuidlib
from typing import Any

import pytest

from inspector import exceptions
from inspector.osc import fleet as osc_fleet
from tests.functional.conftest import (
    Service,
    add_node,
    build_payload,
    introspect,
    random_mac,
)
from tests.functional.test_history import osc_entry_points, run_osc

V123 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.23"}


def _payload(node: dict[str, Any], product: str) -> dict[str, Any]:
    data = build_payload(random_mac(), node["driver_info"]["ipmi_address"])
    data["inventory"]["system_vendor"]["product_name"] = product
    return data


def _get(service: Service, path: str) -> Any:
    resp = service.client.get(path, headers=V123)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return resp.get_json()


def test_introspected_machines_and_their_drift_in_the_fleet_view(
    service: Service,
) -> None:
    product = f"Model {uuidlib.uuid4().hex[:8]}"  # this test's machines only
    nodes, payloads = [], []
    for _ in range(3):
        node = add_node(service)
        data = _payload(node, product)
        assert introspect(service, node, data=copy.deepcopy(data))["error"] is None
        nodes.append(node)
        payloads.append(data)
    memory = payloads[0]["inventory"]["memory"]["physical_mb"]
    disks = len(payloads[0]["inventory"]["disks"])

    listed = _get(service, f"/v1/inventory?product={product}&fields=memory_mb,disks")
    assert sorted(n["uuid"] for n in listed["nodes"]) == sorted(
        n["uuid"] for n in nodes
    )
    assert {(n["memory_mb"], n["disks"]) for n in listed["nodes"]} == {(memory, disks)}

    # the first machine comes back with a disk swapped and a quarter less memory
    drifted = payloads[0]
    drifted["inventory"]["disks"][0].update(serial="SWAPPED-1", wwn=None)
    drifted["inventory"]["memory"]["physical_mb"] = memory * 3 // 4
    again = introspect(service, nodes[0], data=drifted)
    assert again["error"] is None, again

    listed = _get(service, f"/v1/inventory?product={product}&memory_mb={memory}")
    assert sorted(n["uuid"] for n in listed["nodes"]) == sorted(
        n["uuid"] for n in nodes[1:]
    )
    groups = _get(
        service, f"/v1/inventory/summary?group_by=memory_mb&product={product}"
    )["groups"]
    assert sorted((g["value"], g["count"]) for g in groups) == [
        (memory * 3 // 4, 1),
        (memory, 2),
    ]
    page = service.client.get("/fleet")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    # the latest changes name the drifted machine and link to its page
    assert f'href="fleet/nodes/{nodes[0]["uuid"]}"' in html
    node_page = service.client.get(f"/fleet/nodes/{nodes[0]['uuid']}")
    assert node_page.status_code == 200
    text = node_page.get_data(as_text=True)
    assert "disk:SWAPPED-1" in text and "total_mb" in text


def test_openstack_client_inventory_commands(service: Service) -> None:
    assert osc_entry_points("inspector.osc.fleet") == {
        "baremetal_introspection_inventory_list": osc_fleet.InventoryList,
        "baremetal_introspection_inventory_summary": osc_fleet.InventorySummary,
        "baremetal_introspection_inventory_outliers": osc_fleet.InventoryOutliers,
        "baremetal_introspection_inventory_cabling": osc_fleet.InventoryCabling,
    }
    product = f"Model {uuidlib.uuid4().hex[:8]}"
    node = add_node(service)
    assert introspect(service, node, data=_payload(node, product))["error"] is None

    def run(command: Any, *args: str) -> Any:
        return run_osc(service, command, *args)

    columns, rows = run(
        osc_fleet.InventoryList,
        "--fields",
        "product,disks",
        "--filter",
        f"product={product}",
    )
    assert columns == ("uuid", "product", "disks")
    assert [r[:2] for r in rows] == [(node["uuid"], product)]
    columns, rows = run(
        osc_fleet.InventorySummary, "--group-by", "product", "--filter",
        f"product={product}",
    )  # fmt: skip
    assert columns == ("Value", "Count") and rows == [(product, 1)]
    columns, _rows = run(osc_fleet.InventoryOutliers)
    assert columns[0] == "Node"
    columns, rows = run(osc_fleet.InventoryCabling, "--links")
    assert columns[0] == "Switch"
    assert node["uuid"] in {r[3] for r in rows}
    with pytest.raises(RuntimeError, match="400.*nonsense"):
        run(osc_fleet.InventorySummary, "--group-by", "nonsense")
    with pytest.raises(exceptions.InvalidInput, match="FACT=VALUE"):
        run(osc_fleet.InventoryList, "--filter", "product")
