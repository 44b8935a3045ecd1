"""Filing the results: finished (complete or with writes owed), failed,
settled by the reconcile; the data where ``store_data`` says."""

import json
import pathlib
from typing import Any

import pytest
from oslo_config import cfg

from inspector import exceptions, states
from inspector.conductor import filing, owed
from inspector.db import hardware_runs, introspections, stored_data
from inspector.runtime import Runtime
from tests.unit.conductor.conftest import UUID, moved_on, posted

PROCESSED: dict[str, Any] = {"inventory": {}, "interfaces": {}}


def test_a_complete_outcome_is_kept_then_finished(rt: Runtime) -> None:
    record = posted(rt)
    finished = filing.finish(rt, record, filing.Outcome(PROCESSED))
    assert finished.state == states.FINISHED and finished.owed_writes is None
    assert stored_data.get(rt.db, UUID, processed=True) == PROCESSED


def test_writes_owed_are_recorded_with_the_data_whatever_the_store(
    rt: Runtime, conf: cfg.ConfigOpts
) -> None:
    conf.set_override("store_data", "none", group="processing")
    pending = owed.WritesOwed({"node_patches": [1]}, "Ironic away", PROCESSED)
    finished = filing.finish(rt, posted(rt), filing.Outcome(PROCESSED, pending))
    assert finished.state == states.FINISHED
    assert finished.owed_reason == "Ironic away"
    assert finished.owed == {"node_patches": [1]}
    assert stored_data.get(rt.db, UUID, processed=True) == PROCESSED


def test_a_directory_store_takes_the_data_out_of_the_database(
    rt: Runtime, conf: cfg.ConfigOpts, tmp_path: pathlib.Path
) -> None:
    conf.set_override("store_data", "directory", group="processing")
    conf.set_override("store_data_dir", str(tmp_path / "store"), group="processing")
    filing.finish(rt, posted(rt, {"inventory": {"raw": 1}}), filing.Outcome(PROCESSED))
    folder = tmp_path / "store" / UUID
    assert json.loads((folder / "processed.json").read_text()) == PROCESSED
    assert json.loads((folder / "unprocessed.json").read_text()) == {
        "inventory": {"raw": 1}
    }
    assert json.loads((folder / "introspection.json").read_text())["state"] == (
        states.FINISHED
    )
    with pytest.raises(exceptions.DataNotFound):
        stored_data.get(rt.db, UUID, processed=False)


def test_fail_ends_in_error_and_keeps_the_raw_data(rt: Runtime) -> None:
    record = posted(rt, {"inventory": {"raw": 1}})
    filing.fail(rt, UUID, record.version, "the hook refused the data")
    failed = introspections.get(rt.db, UUID)
    assert failed.state == states.ERROR
    assert failed.error == "the hook refused the data"
    assert stored_data.get(rt.db, UUID, processed=False) == {"inventory": {"raw": 1}}
    [run] = hardware_runs.history(rt.db, UUID, limit=5)
    assert (run.state, run.error) == (states.ERROR, "the hook refused the data")
    assert run.started_at == failed.started_at and run.changes == 0


def test_fail_on_stale_work_changes_nothing(rt: Runtime) -> None:
    record = posted(rt)
    moved_on(rt, record)
    filing.fail(rt, UUID, record.version, "too late")
    current = introspections.get(rt.db, UUID)
    assert current.state == states.PROCESSING and current.error is None
    assert hardware_runs.history(rt.db, UUID, limit=5) == []  # rolled back


def test_settled_data_goes_where_the_store_says(
    rt: Runtime, conf: cfg.ConfigOpts, tmp_path: pathlib.Path
) -> None:
    pending = owed.WritesOwed({}, "Ironic away", PROCESSED)
    finished = filing.finish(rt, posted(rt), filing.Outcome(PROCESSED, pending))
    conf.set_override("store_data", "directory", group="processing")
    conf.set_override("store_data_dir", str(tmp_path / "store"), group="processing")
    filing.file_settled(rt, finished)
    processed = tmp_path / "store" / UUID / "processed.json"
    assert json.loads(processed.read_text()) == PROCESSED
    with pytest.raises(exceptions.DataNotFound):
        stored_data.get(rt.db, UUID, processed=True)
