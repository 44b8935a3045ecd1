"""A node's Redfish BMC from Ironic's driver_info."""

import pytest

from inspector import exceptions
from inspector.redfish import credentials


def test_fields() -> None:
    creds = credentials.from_node(
        {
            "uuid": "n1",
            "driver_info": {
                "redfish_address": "10.0.0.1:8000",
                "redfish_system_id": "/redfish/v1/Systems/1",
                "redfish_username": "admin",
                "redfish_password": "secret",
                "redfish_verify_ca": "False",
            },
        }
    )
    assert creds.address == "https://10.0.0.1:8000"
    assert creds.host == "10.0.0.1:8000"
    assert creds.verify is False
    assert "secret" not in repr(creds)
    assert "secret" not in creds.describe()


def test_no_redfish_address() -> None:
    with pytest.raises(exceptions.InvalidInput, match="no redfish_address"):
        credentials.from_node({"uuid": "n1", "driver_info": {"ipmi_address": "x"}})


def test_masked_password_names_the_policy() -> None:
    node = {
        "uuid": "n1",
        "driver_info": {"redfish_address": "x", "redfish_password": "******"},
    }
    with pytest.raises(exceptions.InvalidInput) as caught:
        credentials.from_node(node)
    assert "show_password" in caught.value.message
    assert "role:service" in caught.value.message
