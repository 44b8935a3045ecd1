"""ironic-inspector's own client library against us, as operators use it.

``python-ironic-inspector-client`` (behind ``openstack baremetal
introspection ...``) asks for API version 1.0 unless told otherwise, names
nodes by name and reads fields added in later versions. Everything it does
must work unchanged.
"""

import ironic_inspector_client
import pytest

from inspector.api import versions
from lab.machines.ramdisk import post_continue
from lab.servers.inspector import InspectorServer
from lab.waiting import wait_until
from tests.integration.conftest import Lab, module_inspector

inspector = module_inspector("stock-client")


@pytest.fixture
def client(inspector: InspectorServer) -> ironic_inspector_client.ClientV1:
    # no api_version: the library's default, 1.0, as the CLI sends it
    return ironic_inspector_client.ClientV1(inspector_url=inspector.url)


def test_default_version_is_1_0(client: ironic_inspector_client.ClientV1) -> None:
    assert client._version_str == "1.0"
    assert client.server_api_versions() == ((1, 0), versions.MAXIMUM)


def test_full_cycle_by_name(
    client: ironic_inspector_client.ClientV1, inspector: InspectorServer, lab: Lab
) -> None:
    machine, uuid = lab.machine()
    client.introspect(machine.name)
    status = client.get_status(machine.name)
    assert status["uuid"] == uuid and status["state"] in ("starting", "waiting")
    assert status["started_at"] and status["finished"] is False
    assert uuid in {s["uuid"] for s in client.list_statuses()}

    code, body, _, _ = post_continue(inspector.url, machine.payload())
    assert code == 200, body
    finished = client.wait_for_finish([machine.name], retry_interval=0.2)
    assert finished[machine.name]["error"] is None
    assert finished[machine.name]["state"] == "finished"

    data = client.get_data(machine.name)
    assert data["inventory"]["cpu"]["count"] == machine.cpus
    raw = client.get_data(machine.name, processed=False)
    assert "root_disk" not in raw or raw != data  # the data as the ramdisk sent it
    rows = client.get_all_interface_data(machine.name, ["interface", "mac"])
    assert {mac for _, mac in rows} >= set(machine.macs)

    client.reprocess(machine.name)
    finished = client.wait_for_finish([uuid], retry_interval=0.2)
    assert finished[uuid]["state"] == "finished"


def test_abort_and_no_manage_boot(
    client: ironic_inspector_client.ClientV1, lab: Lab
) -> None:
    machine, uuid = lab.machine()
    client.introspect(machine.name, manage_boot=False)
    wait_until(
        lambda: client.get_status(uuid),
        30,
        f"{uuid} to wait for its ramdisk",
        until=lambda status: status["state"] == "waiting",
    )
    client.abort(machine.name)
    status = client.wait_for_finish([uuid], retry_interval=0.2)[uuid]
    assert status["state"] == "error"
    assert "Canceled by operator" in status["error"]


def test_errors_reach_the_user(client: ironic_inspector_client.ClientV1) -> None:
    with pytest.raises(ironic_inspector_client.ClientError) as caught:
        client.get_status("3f2504e0-4f89-41d3-9a0c-0305e82c3301")
    assert caught.value.response.status_code == 404
    assert "3f2504e0-4f89-41d3-9a0c-0305e82c3301" in str(caught.value)
    with pytest.raises(ironic_inspector_client.ClientError) as caught:
        client.introspect("no-such-node-name")
    assert caught.value.response.status_code == 404
    assert "no-such-node-name" in str(caught.value)


def test_rules_through_the_client(client: ironic_inspector_client.ClientV1) -> None:
    client.rules.delete_all()
    created = client.rules.create(
        conditions=[
            {"op": "eq", "field": "inventory.cpu.architecture", "value": "x86_64"}
        ],
        actions=[{"action": "add-trait", "name": "CUSTOM_X86"}],
        description="x86 machines",
    )
    assert created["conditions"][0]["multiple"] == "any"
    imported = client.rules.from_json(
        {
            "description": "imported",
            "actions": [{"action": "fail", "message": "no"}],
            "conditions": [{"op": "lt", "field": "memory_mb", "value": 1}],
        }
    )
    listed = client.rules.get_all()
    assert [r["uuid"] for r in listed] == [created["uuid"], imported["uuid"]]
    assert client.rules.get(created["uuid"])["actions"] == created["actions"]
    with pytest.raises(ironic_inspector_client.ClientError) as caught:
        client.rules.create(conditions=[], actions=[{"action": "explode"}])
    assert caught.value.response.status_code == 400
    client.rules.delete(imported["uuid"])
    assert [r["uuid"] for r in client.rules.get_all()] == [created["uuid"]]
    client.rules.delete_all()
    assert client.rules.get_all() == []
