"""A node's Redfish BMC as Ironic's ``driver_info`` names it.

Pure: the API checks a start with it (a node without Redfish driver_info,
a masked password: 400 at once) without loading sushy.
"""

import dataclasses
import urllib.parse
from typing import Any

from inspector import exceptions

MASKED = "******"
"""What Ironic's node API shows for a password the caller may not read."""

SHOW_PASSWORD_POLICY = '"show_password": "role:service"'
"""The line of Ironic's policy file that lets the inspector's service
role read BMC passwords (doc/redfish.md)."""


@dataclasses.dataclass(frozen=True)
class BmcCredentials:
    """Where and as whom to ask one system's BMC."""

    address: str
    """The BMC's base URL (``https://10.0.0.1:8000``), scheme included."""
    system_id: str | None
    """The system's path (``/redfish/v1/Systems/1``), or None when the BMC
    has just one."""
    username: str | None
    password: str | None = dataclasses.field(repr=False)
    verify: bool | str
    """TLS verification: True, False, or a CA bundle's path."""

    @property
    def host(self) -> str:
        """The BMC host, what the per-host bound counts by."""
        return urllib.parse.urlsplit(self.address).netloc.lower()

    def describe(self) -> str:
        """The BMC as messages name it (no credentials)."""
        system = f" system {self.system_id}" if self.system_id else ""
        return f"BMC {self.address}{system}"


def has_redfish(node: dict[str, Any]) -> bool:
    """Whether ``node``'s driver_info names a Redfish BMC."""
    info = node.get("driver_info") or {}
    return isinstance(info, dict) and bool(info.get("redfish_address"))


def _verify(value: Any) -> bool | str:
    if value is None or value is True or value is False:
        return value is not False
    text = str(value).strip()
    if text.lower() in ("true", "yes", "1", "on"):
        return True
    if text.lower() in ("false", "no", "0", "off"):
        return False
    return text  # a CA bundle


def from_node(node: dict[str, Any]) -> BmcCredentials:
    """The BMC of ``node`` (as Ironic's node API answers it).

    :raises InvalidInput: no ``redfish_address``, or a password Ironic
        masked (its ``show_password`` policy does not let this service
        read it).
    """
    uuid = node.get("uuid")
    info = node.get("driver_info") or {}
    if not isinstance(info, dict) or not info.get("redfish_address"):
        raise exceptions.InvalidInput(
            f"Node {uuid} has no Redfish BMC: its driver_info has no "
            "redfish_address, so it cannot be introspected out of band; use "
            "mode=in-band, or set redfish_address, redfish_username and "
            "redfish_password"
        )
    address = str(info["redfish_address"]).strip()
    if "://" not in address:
        address = f"https://{address}"
    password = info.get("redfish_password")
    if password == MASKED:
        raise exceptions.InvalidInput(
            f"Ironic hides the Redfish password of node {uuid} from this "
            "service (redfish_password is '******'): allow the inspector's "
            "service role to read it with Ironic's show_password policy, "
            f"{SHOW_PASSWORD_POLICY}, or use mode=in-band"
        )
    system_id = info.get("redfish_system_id")
    username = info.get("redfish_username")
    return BmcCredentials(
        address=address.rstrip("/"),
        system_id=str(system_id) if system_id else None,
        username=str(username) if username is not None else None,
        password=str(password) if password is not None else None,
        verify=_verify(info.get("redfish_verify_ca")),
    )
