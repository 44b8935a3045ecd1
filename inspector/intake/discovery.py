"""Discovery: ramdisk data from a machine Ironic does not know yet.

With ``[processing]node_not_found_hook = enroll``, data that matches no
node under introspection creates the node in Ironic (hardware type
``[discovery]enroll_node_driver``, the BMC address in ``driver_info``, the
fields of ``[discovery]enroll_node_fields``), is recorded in ``enrolling``
and processed like any other (``auto_discovered: true`` in the data); rules
can then name it, set its driver and so on. A machine whose BMC address or
MAC Ironic already has is not enrolled again: that answers 409 naming it.
"""

import logging
from typing import Any

from inspector import exceptions
from inspector.db import introspections, transitions
from inspector.intake import lookup
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

ADDRESS_FIELDS = {
    "ipmi": "ipmi_address",
    "redfish": "redfish_address",
    "idrac": "drac_address",
    "ilo": "ilo_address",
}
"""Where each hardware type keeps the BMC address (ipmi_address otherwise)."""


BMC_ADDRESS_KEYS = {"4": "bmc_address", "6": "bmc_v6address"}
"""[discovery]enabled_bmc_address_version -> the inventory's field."""


def bmc_address(rt: Runtime, data: dict[str, Any]) -> str | None:
    """The BMC address a discovered node gets, as enabled_bmc_address_version
    orders the versions; None when the ramdisk reported none of them."""
    inventory = data.get("inventory")
    inventory = inventory if isinstance(inventory, dict) else {}
    for version in rt.conf.discovery.enabled_bmc_address_version:
        host = lookup.host_of(inventory.get(BMC_ADDRESS_KEYS[version]))
        if host and host not in ("0.0.0.0", "::"):
            return host
    return None


def _refuse_known(rt: Runtime, bmc: str | None, macs: list[str]) -> None:
    if bmc:
        fields = ["ipmi_address", *rt.conf.ipmi_address_fields]
        for node in rt.baremetal.list_nodes_driver_info():
            info = node["driver_info"]
            if any(lookup.host_of(info.get(f)) == bmc for f in fields):
                raise exceptions.Conflict(
                    f"Node {node['uuid']} in Ironic already has BMC address {bmc} "
                    "but is not under introspection: start its introspection "
                    "instead of enrolling it again"
                )
    for mac in macs:
        if rt.baremetal.port_exists(mac):
            raise exceptions.Conflict(
                f"A port with MAC {mac} already exists in Ironic: this machine "
                "is known, start the introspection of its node instead"
            )


def node_body(rt: Runtime, bmc: str | None) -> dict[str, Any]:
    driver = rt.conf.discovery.enroll_node_driver
    body: dict[str, Any] = dict(rt.conf.discovery.enroll_node_fields)
    body["driver"] = driver
    if bmc:
        body["driver_info"] = {ADDRESS_FIELDS.get(driver, "ipmi_address"): bmc}
    return body


def enroll(rt: Runtime, data: dict[str, Any], logs: Any, claim_within: float) -> Any:
    """Create the node, record it and store ``data``; returns the record."""
    bmc = bmc_address(rt, data)
    macs = lookup.from_data(data).get(lookup.MAC, [])
    if not bmc and not macs:
        raise exceptions.InvalidInput(
            "Cannot enroll a machine that reports neither a BMC address nor a MAC"
        )
    _refuse_known(rt, bmc, macs)
    node = rt.baremetal.create_node(node_body(rt, bmc))
    uuid = node["uuid"]
    LOG.info(
        "Enrolled node %s (BMC %s, MACs %s) from unknown ramdisk data",
        uuid,
        bmc or "none",
        ", ".join(macs) or "none",
    )
    data["auto_discovered"] = True
    record = introspections.enroll(rt.db, uuid, claim_within=claim_within)
    return transitions.posted(rt.db, record, data, logs=logs, claim_within=claim_within)
