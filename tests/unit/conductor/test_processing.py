"""The processing step: the post read once with the fence, the hooks and
rules, the writes to Ironic, power off, the logs when due, the outcome
filed."""

import base64
import gzip
import pathlib
from typing import Any

import pytest
from oslo_config import cfg

from inspector import exceptions, states
from inspector.conductor import processing
from inspector.db import introspections, stored_data, transitions
from inspector.hooks.base import Data, NodeContext, ProcessingHook
from inspector.runtime import Runtime
from tests.unit.conductor.conftest import (
    UUID,
    FakeIronic,
    away,
    claimed,
    moved_on,
    posted,
)

LOGS = base64.b64encode(gzip.compress(b"journal")).decode()


class Hook(ProcessingHook):
    """Sets a property; fails when asked to."""

    name = "test"

    def __init__(self, conf: cfg.ConfigOpts, fail: bool = False) -> None:
        super().__init__(conf)
        self.fail = fail

    def before_processing(self, data: Data) -> None:
        if self.fail:
            raise exceptions.ProcessingError("the hook refused the data")
        data["seen_by_hook"] = True

    def before_update(self, data: Data, ctx: NodeContext) -> None:
        ctx.node_patches.append({"op": "add", "path": "/properties/cpus", "value": 4})


@pytest.fixture
def logs_dir(conf: cfg.ConfigOpts, tmp_path: pathlib.Path) -> pathlib.Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    conf.set_override("ramdisk_logs_dir", str(folder), group="processing")
    return folder


def test_processes_writes_powers_off_and_finishes(
    rt: Runtime, conf: cfg.ConfigOpts, ironic: FakeIronic
) -> None:
    processing.run(rt, [Hook(conf)], posted(rt, {"inventory": {"cpu": 1}}))
    assert ironic.methods() == [
        "get_node",
        "list_ports",
        "patch_node",
        "set_power_state",
    ]
    assert ironic.calls[-1] == ("set_power_state", UUID, "power off")
    record = introspections.get(rt.db, UUID)
    assert record.state == states.FINISHED and record.owed_writes is None
    processed = stored_data.get(rt.db, UUID, processed=True)
    assert processed == {
        "inventory": {"cpu": 1},
        "seen_by_hook": True,
        "hardware_changes": [],  # a first run: nothing to compare with
    }
    # the post as the ramdisk sent it is not changed by the hooks
    raw = stored_data.get(rt.db, UUID, processed=False)
    assert raw == {"inventory": {"cpu": 1}}


def test_the_logs_are_let_go_and_written_when_due(
    rt: Runtime, conf: cfg.ConfigOpts, logs_dir: pathlib.Path
) -> None:
    record = posted(rt, {"inventory": {}, "error": "disk on fire"}, LOGS)
    assert stored_data.get_post(rt.db, UUID, record.version).logs == LOGS
    processing.run(rt, [], record)
    (written,) = logs_dir.iterdir()
    assert gzip.decompress(written.read_bytes()) == b"journal"
    with rt.db.connect() as conn:
        assert conn.exec_driver_sql("SELECT logs FROM introspection_data").all() == [
            (None,),
            (None,),
        ]


def test_success_writes_no_logs_unless_always(
    rt: Runtime, conf: cfg.ConfigOpts, logs_dir: pathlib.Path
) -> None:
    processing.run(rt, [], posted(rt, logs=LOGS))
    assert list(logs_dir.iterdir()) == []


def test_a_failing_hook_writes_the_logs_and_nothing_to_ironic(
    rt: Runtime, conf: cfg.ConfigOpts, ironic: FakeIronic, logs_dir: pathlib.Path
) -> None:
    with pytest.raises(exceptions.ProcessingError):
        processing.run(rt, [Hook(conf, fail=True)], posted(rt, logs=LOGS))
    assert ironic.calls == []
    assert len(list(logs_dir.iterdir())) == 1


def test_logs_an_earlier_api_kept_inline_are_taken_out(
    rt: Runtime, conf: cfg.ConfigOpts, logs_dir: pathlib.Path
) -> None:
    conf.set_override("always_store_ramdisk_logs", True, group="processing")
    processing.run(rt, [], posted(rt, {"inventory": {}, "logs": LOGS}))
    assert len(list(logs_dir.iterdir())) == 1
    assert stored_data.get(rt.db, UUID, processed=False) == {"inventory": {}}


def test_ironic_away_finishes_with_the_writes_owed(
    rt: Runtime, conf: cfg.ConfigOpts, ironic: FakeIronic
) -> None:
    ironic.fail["patch_node"] = away()
    processing.run(rt, [Hook(conf)], posted(rt))
    record = introspections.get(rt.db, UUID)
    assert record.state == states.FINISHED
    assert record.owed is not None and record.owed["power_off"] is True
    assert "set_power_state" not in ironic.methods()
    assert stored_data.get(rt.db, UUID, processed=True)["seen_by_hook"]


def test_ironic_away_before_any_write_owes_the_whole_processing(
    rt: Runtime, ironic: FakeIronic
) -> None:
    ironic.fail["get_node"] = away()
    processing.run(rt, [], posted(rt))
    record = introspections.get(rt.db, UUID)
    assert record.state == states.FINISHED
    assert record.owed is not None and record.owed["reprocess"] is True


def test_a_refused_power_off_fails_the_step(rt: Runtime, ironic: FakeIronic) -> None:
    ironic.fail["set_power_state"] = exceptions.InspectorError("refused")
    with pytest.raises(exceptions.InspectorError, match="^Failed to power off"):
        processing.run(rt, [], posted(rt))


def test_stale_work_reads_nothing_and_keeps_the_logs(
    rt: Runtime, ironic: FakeIronic, logs_dir: pathlib.Path
) -> None:
    record = posted(rt, logs=LOGS)
    moved_on(rt, record)
    with pytest.raises(exceptions.StaleState):
        processing.run(rt, [], record)
    assert ironic.calls == [] and list(logs_dir.iterdir()) == []
    current = introspections.get(rt.db, UUID)
    assert stored_data.get_post(rt.db, UUID, current.version).logs == LOGS


def test_a_reapply_writes_no_logs_and_leaves_the_power_alone(
    rt: Runtime, conf: cfg.ConfigOpts, ironic: FakeIronic, logs_dir: pathlib.Path
) -> None:
    conf.set_override("always_store_ramdisk_logs", True, group="processing")
    processing.run(rt, [], posted(rt))
    finished = introspections.get(rt.db, UUID)
    again = transitions.reapply_requested(rt.db, finished)
    with rt.db.begin() as conn:  # a stored post with logs: still none written
        stored_data.put(conn, UUID, {"inventory": {}}, processed=False, logs=LOGS)
    ironic.calls.clear()
    processing.run(rt, [], claimed(rt, again))
    assert "set_power_state" not in ironic.methods()
    assert list(logs_dir.iterdir()) == []
    assert introspections.get(rt.db, UUID).state == states.FINISHED


def test_update_node_lists_ports_only_when_not_given(
    rt: Runtime, ironic: FakeIronic
) -> None:
    data: dict[str, Any] = {"inventory": {}}
    assert processing.update_node(rt, [], UUID, data, ports=[]) is data
    assert ironic.methods() == ["get_node"]
