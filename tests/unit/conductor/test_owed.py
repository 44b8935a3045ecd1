"""Ironic writes owed: described for people, made later by the reconcile."""

from inspector.conductor import owed
from tests.unit.conductor.conftest import UUID, FakeIronic


def test_describe_counts_each_kind() -> None:
    writes = {
        "node_patches": [1, 2, 3],
        "ports_to_create": [{"address": "aa"}],
        "traits_to_add": [],
        "power_off": True,
    }
    assert owed.describe(writes) == "3 property changes, 1 ports to create, power off"
    assert owed.describe({}) == "nothing"
    assert owed.describe({"reprocess": True}).startswith("processing again")


def test_make_writes_then_powers_off(ironic: FakeIronic) -> None:
    patch = [{"op": "add", "path": "/properties/cpus", "value": 4}]
    owed.make(
        ironic,
        UUID,
        {"node_patches": patch, "traits_to_add": ["CUSTOM_X"], "power_off": True},
    )
    assert ("patch_node", UUID, patch) in ironic.calls
    assert ("add_trait", UUID, "CUSTOM_X") in ironic.calls
    assert ironic.calls[-1] == ("set_power_state", UUID, "power off")


def test_make_without_power_off_leaves_the_power(ironic: FakeIronic) -> None:
    owed.make(ironic, UUID, {"power_off": False})
    assert "set_power_state" not in ironic.methods()
