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
    assert processed == {"inventory": data["inventory"]}
