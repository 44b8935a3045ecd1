"""Fencing: a step's work is its conductor's while its version is current."""

import pytest

from inspector import exceptions
from inspector.conductor import fencing
from inspector.db import introspections
from inspector.runtime import Runtime
from tests.unit.conductor.conftest import UUID, moved_on, posted


def test_current_work_passes(rt: Runtime) -> None:
    record = posted(rt, {"inventory": {"cpu": 1}}, "logs")
    fencing.fence(rt, record)
    post = fencing.fenced_post(rt, record)
    assert post.data == {"inventory": {"cpu": 1}} and post.logs == "logs"


def test_work_taken_over_is_stale(rt: Runtime) -> None:
    record = posted(rt)
    moved_on(rt, record)
    with pytest.raises(exceptions.StaleState):
        fencing.fence(rt, record)
    with pytest.raises(exceptions.StaleState):
        fencing.fenced_post(rt, record)


def test_work_on_a_deleted_introspection_is_stale(rt: Runtime) -> None:
    record = posted(rt)
    introspections.delete(rt.db, UUID)
    with pytest.raises(exceptions.StaleState):
        fencing.fence(rt, record)
    with pytest.raises(exceptions.StaleState):
        fencing.fenced_post(rt, record)
