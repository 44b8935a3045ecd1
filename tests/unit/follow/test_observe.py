"""Ironic's stored inventory and plugin data read as the ramdisk's
processed data: the record and cabling come out as from our own run."""

import json
from typing import Any

import pytest

from inspector import exceptions
from inspector.follow import observe
from inspector.history import record
from tests.unit.follow.conftest import DATA


def post() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA.read_text())
    return data


def test_ironic_data_gives_the_record_our_run_gives() -> None:
    data = post()
    plugin = {k: v for k, v in data.items() if k != "inventory"}

    processed = observe.as_processed(data["inventory"], plugin)

    assert record.summarise(processed).record == record.summarise(data).record


def test_parsed_lldp_feeds_cabling() -> None:
    data = post()
    nic = data["inventory"]["interfaces"][0]
    nic["lldp"] = None  # Ironic's parse-lldp hook decoded it already
    plugin = {
        "parsed_lldp": {
            nic["name"]: {
                "switch_chassis_id": "00:1c:73:aa:bb:cc",
                "switch_system_name": "tor-r12",
                "switch_port_id": "Ethernet12",
            }
        }
    }

    processed = observe.as_processed(data["inventory"], plugin)
    summary = record.summarise(processed)

    link = next(x for x in summary.links if x["name"] == nic["name"])
    assert link["switch_name"] == "tor-r12"
    assert link["port_id"] == "Ethernet12"


@pytest.mark.parametrize(
    ("inventory", "message"),
    [
        (None, "not a JSON object"),
        ([1, 2], "not a JSON object"),
        ({"interfaces": "eth0"}, "not a JSON object"),
        ({"hostname": "x"}, "not an ironic-python-agent inventory"),
    ],
)
def test_what_is_not_an_inventory_is_refused(inventory: Any, message: str) -> None:
    with pytest.raises(exceptions.InvalidInput, match=message):
        observe.as_processed(inventory, {})


def test_plugin_data_of_another_shape_is_ignored() -> None:
    data = post()
    processed = observe.as_processed(data["inventory"], ["not", "a", "dict"])
    assert set(processed) == {"inventory", "root_disk"}


def test_without_ironics_root_disk_the_smallest_big_enough_disk_is() -> None:
    """Ironic's default hooks choose no root disk: local_gb comes from the
    disk our root disk hook chooses without hints."""
    gib = 1024**3
    inventory = {
        "memory": {"physical_mb": 4096},
        "disks": [
            {"name": "/dev/sda", "size": 960 * gib},
            {"name": "/dev/sdb", "size": 480 * gib},
            {"name": "/dev/sdc", "size": 1 * gib},  # too small for an image
        ],
    }
    processed = observe.as_processed(inventory, {})
    assert processed["root_disk"]["name"] == "/dev/sdb"
    summary = record.summarise(processed)
    assert summary.facts["local_gb"] == 480
    chosen = {"name": "/dev/sda", "size": 960 * gib}
    kept = observe.as_processed(inventory, {"root_disk": chosen})
    assert kept["root_disk"] == chosen
