"""The reconcile: owed writes made and filed, introspections of deleted
nodes removed, drift reported or re-applied; nothing without Ironic."""

import pytest

from inspector import states
from inspector.conductor import processing, reconcile
from inspector.db import introspections, stored_data
from inspector.runtime import Runtime
from tests.unit.conductor.conftest import UUID, FakeIronic, away, posted


def owing(rt: Runtime, ironic: FakeIronic) -> None:
    """A finished introspection whose power off Ironic did not take."""
    ironic.nodes[UUID] = {"uuid": UUID, "properties": {}}
    ironic.fail["set_power_state"] = away()
    processing.run(rt, [], posted(rt, {"inventory": {}, "cpus": 4}))
    del ironic.fail["set_power_state"]
    assert introspections.get(rt.db, UUID).owed_writes is not None


def test_nothing_is_tried_without_ironic(rt: Runtime, ironic: FakeIronic) -> None:
    ironic.fail["list_node_uuids"] = away()
    with pytest.raises(reconcile.IronicUnreachable):
        reconcile.sync(rt)
    assert ironic.methods() == ["list_node_uuids"]


def test_owed_writes_are_made_and_the_data_filed(
    rt: Runtime, ironic: FakeIronic
) -> None:
    owing(rt, ironic)
    ironic.calls.clear()
    report = reconcile.sync(rt, drift=False)
    assert [(f.kind, f.action) for f in report.findings] == [("owed", "done")]
    assert ironic.calls[-1] == ("set_power_state", UUID, "power off")
    record = introspections.get(rt.db, UUID)
    assert record.state == states.FINISHED and record.owed_writes is None
    assert stored_data.get(rt.db, UUID, processed=True)["cpus"] == 4


def test_a_dry_run_changes_nothing(rt: Runtime, ironic: FakeIronic) -> None:
    owing(rt, ironic)
    ironic.calls.clear()
    report = reconcile.sync(rt, dry_run=True)
    assert [(f.kind, f.action) for f in report.findings] == [("owed", "would do")]
    assert ironic.methods() == ["list_node_uuids"]
    assert introspections.get(rt.db, UUID).owed_writes is not None


def test_the_introspection_of_a_deleted_node_is_removed(
    rt: Runtime, ironic: FakeIronic
) -> None:
    processing.run(rt, [], posted(rt))
    report = reconcile.sync(rt)
    assert [(f.kind, f.action) for f in report.findings] == [("deleted", "done")]
    with pytest.raises(introspections.exceptions.NotFound):
        introspections.get(rt.db, UUID)


@pytest.mark.parametrize(("apply", "action"), [(False, "reported"), (True, "done")])
def test_drift_is_reported_or_applied(
    rt: Runtime, ironic: FakeIronic, apply: bool, action: str
) -> None:
    ironic.nodes[UUID] = {"uuid": UUID, "properties": {}}
    processing.run(rt, [], posted(rt, {"inventory": {}, "cpus": 4}))
    ironic.calls.clear()
    report = reconcile.sync(rt, apply=apply)
    assert [(f.kind, f.action) for f in report.findings] == [("drift", action)]
    patched = [c for c in ironic.calls if c[0] == "patch_node"]
    assert bool(patched) is apply
