"""The real ``openstack`` command (python-openstackclient, the stock
python-ironic-inspector-client plugin and ours) against a running service
and the real Ironic: ``start --mode``, ``rule import`` at 1.24, ``rule
test``, ``conductor list|show`` and ``pxe-filter list``, each at its
microversion, their errors as the API's message with exit status 1.

``start`` and ``rule import`` are also the stock client's names: that the
``openstack`` command runs ours is shown by its own debug line and by what
only ours can do (``--mode``, a rule with a priority).
"""

import json
import os
import pathlib
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from lab.waiting import wait_until
from tests.integration.conftest import Client, Lab, start_inspector

OPENSTACK = str(pathlib.Path(sys.executable).with_name("openstack"))
V126 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.26"}


@pytest.fixture(scope="module")
def inspector(
    ironic: IronicServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InspectorServer]:
    work = tmp_path_factory.mktemp("openstack-cli")
    hosts = work / "dhcp-hosts"
    hosts.mkdir()
    server = start_inspector(
        work,
        ironic,
        options={
            # a start without a mode is refused for a node without a BMC:
            # an in-band run shows that --mode reached the service
            "DEFAULT": {"introspection_mode": "out-of-band"},
            # a filter that reports (no dnsmasq to start: it counts as
            # started after its first sync), for pxe-filter list
            "pxe_filter": {"driver": "dnsmasq"},
            "dnsmasq_pxe_filter": {"dhcp_hostsdir": str(hosts)},
        },
    )
    yield server
    assert server.stop() == 0, server.log_tail()


def openstack(
    inspector: InspectorServer, *args: str, debug: bool = False
) -> subprocess.CompletedProcess[str]:
    """``openstack [--debug] baremetal introspection ARGS`` without
    authentication (the service's noauth), as doc/deploy.md shows it."""
    return subprocess.run(
        _command(inspector, args, debug),
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _command(
    inspector: InspectorServer, args: tuple[str, ...], debug: bool
) -> list[str]:
    return [
        OPENSTACK,
        *(["--debug"] if debug else []),
        "--os-auth-type",
        "none",
        "--inspector-url",
        inspector.url,
        "baremetal",
        "introspection",
        *args,
    ]


def _environment() -> dict[str, str]:
    """This process's environment without a cloud of the developer's."""
    return {
        k: v for k, v in os.environ.items() if not k.startswith(("OS_", "INSPECTOR_"))
    }


def as_json(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_conductor_list_and_show(inspector: InspectorServer) -> None:
    [listed] = as_json(openstack(inspector, "conductor", "list", "-f", "json"))
    assert listed == {
        "Hostname": "lab-inspector",
        "Alive": True,
        "Enabled": True,
        "Disabled reason": None,
        "Introspections": 0,
    }
    shown = as_json(
        openstack(inspector, "conductor", "show", "lab-inspector", "-f", "json")
    )
    assert shown["Hostname"] == "lab-inspector" and shown["Alive"] is True
    assert shown["Last heartbeat"]
    missing = openstack(inspector, "conductor", "show", "no-such-host")
    assert missing.returncode == 1
    assert "404: Conductor no-such-host was not found" in missing.stderr


def test_pxe_filter_list(inspector: InspectorServer) -> None:
    client = Client(inspector.url)
    wait_until(
        lambda: client.get("/v1/pxe-filters", headers=V126).json()["pxe_filters"],
        20,
        "the PXE filter's first report",
        until=bool,
        interval=0.5,
    )
    [row] = as_json(openstack(inspector, "pxe-filter", "list", "--long", "-f", "json"))
    assert row["Host"] == "lab-inspector" and row["Driver"] == "dnsmasq"
    assert row["Healthy"] is True and row["Problems"] == []
    assert row["Failing closed"] is False


def test_out_of_band_start_of_a_node_without_a_bmc_is_refused(
    inspector: InspectorServer, lab: Lab
) -> None:
    _machine, uuid = lab.machine()
    done = openstack(inspector, "start", "--mode", "out-of-band", uuid, debug=True)
    # OpenStackClient ran ours, not the stock start (which has no --mode)
    assert (
        "command: baremetal introspection start -> "
        "inspector.osc.introspection.StartCommand" in done.stderr
    )
    assert done.returncode == 1
    assert (
        f"400: Node {uuid} has no Redfish BMC: its driver_info has no "
        "redfish_address" in done.stderr
    )
    assert Client(inspector.url).get(f"/v1/introspection/{uuid}").status_code == 404


RULES = [
    {
        "description": "memory, first",
        "priority": 100,
        "conditions": [
            {"op": "gt", "field": "{inventory[memory][physical_mb]}", "value": 0}
        ],
        "actions": [
            {
                "action": "set-attribute",
                "path": "/extra/osc_memory",
                "value": "{inventory[memory][physical_mb]}",
            }
        ],
    },
    {
        "description": "every NIC's name",
        "priority": 50,
        "actions": [
            {
                "action": "extend-attribute",
                "path": "/extra/osc_nics",
                "value": "{item[name]}",
                "loop": "{inventory[interfaces]}",
            }
        ],
    },
    {
        "description": "a secret",
        "sensitive": True,
        "actions": [
            {"action": "set-attribute", "path": "/extra/osc_secret", "value": "s3cret"}
        ],
    },
]
"""Rules only API 1.24 takes: a priority, a loop, a sensitive rule."""


def test_in_band_start_with_rules_of_1_24(
    inspector: InspectorServer, lab: Lab, tmp_path: pathlib.Path
) -> None:
    client = Client(inspector.url)
    client.http.delete(f"{inspector.url}/v1/rules", timeout=30)
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text(yaml.safe_dump(RULES))
    imported = as_json(
        openstack(inspector, "rule", "import", str(rules_file), "-f", "json")
    )
    assert [(r["Description"], r["Priority"], r["Sensitive"]) for r in imported] == [
        ("memory, first", 100, False),
        ("every NIC's name", 50, False),
        ("a secret", 0, True),
    ]
    secret = imported[2]["UUID"]

    machine, uuid = lab.machine()
    waiting = subprocess.Popen(
        _command(
            inspector,
            ("start", "--mode", "in-band", "--wait", "--wait-interval", "0.5")
            + ("-f", "json", machine.name),
            debug=False,
        ),
        env=_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        status = client.wait_for(uuid, "waiting")
        assert status["mode"] == "in-band"  # asked: the default is out-of-band
        resp = client.post("/v1/continue", json=machine.payload())
        assert resp.status_code == 200, resp.text
        out, err = waiting.communicate(timeout=60)
    finally:
        waiting.kill()
    assert waiting.returncode == 0, err
    assert json.loads(out) == [{"UUID": machine.name, "Error": None}]
    extra = lab.api.node(uuid)["extra"]
    assert extra["osc_memory"] == machine.inventory["memory"]["physical_mb"]
    assert extra["osc_nics"] == [i["name"] for i in machine.inventory["interfaces"]]
    assert extra["osc_secret"] == "s3cret"

    # the stored data and the node, tried again: nothing is written
    tried = as_json(
        openstack(
            inspector,
            *("rule", "test", "--node", machine.name, "--rule", secret),
            *("--rule", imported[0]["UUID"], "-f", "json"),
        )
    )
    assert tried["Would write"] is True and tried["Error"] is None
    assert [r["matched"] for r in tried["Rules"]] == [True, True]
    patches = {p["path"]: p["value"] for p in tried["Node patches"]}
    assert patches["/extra/osc_secret"] == "***"  # sensitive: masked
    assert patches["/extra/osc_memory"] == machine.inventory["memory"]["physical_mb"]

    failing = tmp_path / "failing.json"
    failing.write_text(json.dumps({"actions": [{"action": "fail", "message": "no"}]}))
    refused = openstack(
        inspector, "rule", "test", "--node", uuid, "--rule-file", str(failing)
    )
    assert refused.returncode == 1, refused.stderr
    assert "error: no" in refused.stdout and "False" in refused.stdout
