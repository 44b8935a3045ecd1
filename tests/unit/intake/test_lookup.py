from typing import Any

from oslo_config import cfg

from inspector.conf import opts
from inspector.intake import lookup


def _conf() -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([])
    return conf


def test_from_data_normalises() -> None:
    data = {
        "inventory": {
            "interfaces": [
                {"mac_address": "AA-BB-CC-DD-EE-FF"},
                {"mac_address": "not a mac"},
                {"name": "lo"},
                "junk",
            ],
            "bmc_address": "192.0.2.1",
            "bmc_v6address": "::/0",
        }
    }
    attrs = lookup.from_data(data)
    assert attrs == {"mac": ["aa:bb:cc:dd:ee:ff"], "bmc_address": ["192.0.2.1"]}


def test_from_data_tolerates_garbage() -> None:
    assert lookup.from_data({"inventory": "x"}) == {"mac": [], "bmc_address": []}
    assert lookup.from_data({}) == {"mac": [], "bmc_address": []}


def test_from_data_ignores_zero_bmc() -> None:
    data = {"inventory": {"bmc_address": "0.0.0.0", "bmc_v6address": "::"}}
    assert lookup.from_data(data)["bmc_address"] == []


def test_from_node_reads_configured_fields() -> None:
    conf = _conf()
    node = {
        "driver_info": {
            "redfish_address": "https://10.0.0.5:8000/redfish/v1",
            "ipmi_address": "10.0.0.6",
            "other": "10.0.0.7",
        }
    }
    ports: list[dict[str, Any]] = [{"address": "AA:bb:cc:dd:ee:01"}, {"address": None}]
    attrs = lookup.from_node(conf, node, ports)
    assert attrs == {
        "mac": ["aa:bb:cc:dd:ee:01"],
        "bmc_address": ["10.0.0.5", "10.0.0.6"],
    }


def test_from_node_ipv6_and_hostnames() -> None:
    conf = _conf()
    node = {
        "driver_info": {
            "ipmi_address": "[2001:db8::1]",
            "ilo_address": "BMC-7.example.com:623",
        }
    }
    attrs = lookup.from_node(conf, node, [])
    assert attrs["bmc_address"] == ["2001:db8::1", "bmc-7.example.com"]


def test_a_bmc_address_that_is_no_url_is_ignored() -> None:
    """Found by the API fuzz test: an unbalanced "[" made urlsplit raise,
    and the ramdisk's post answered 500."""
    data = {"inventory": {"bmc_address": "[m&v_O", "bmc_v6address": "x]["}}
    assert lookup.from_data(data)["bmc_address"] == []
    assert lookup.host_of("https://[2001:db8::1]:623/") == "2001:db8::1"
    assert lookup.host_of("BMC.example.com:623") == "bmc.example.com"
