"""Introspection data kept in the database."""

import pytest

from inspector import exceptions
from inspector.db import engine, introspections, stored_data
from tests.unit.db import statements

UUID = "11111111-2222-4333-8444-555555555555"


@pytest.mark.parametrize("upsert", [True, False], ids=["upsert", "update, insert"])
def test_stored_data_is_replaced_in_one_statement_where_possible(
    db: engine.Database, upsert: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not upsert:  # a dialect without ON CONFLICT (MariaDB)
        monkeypatch.setattr(stored_data, "_UPSERTS", {})
    introspections.start(db, UUID, True)
    seen = statements.recorded(db)
    stored_data.store(db, UUID, {"first": 1}, processed=True)
    stored_data.store(db, UUID, {"second": 2}, processed=True)
    stored_data.store(db, UUID, {"raw": 3}, processed=False)
    assert stored_data.get(db, UUID, processed=True) == {"second": 2}
    assert stored_data.get(db, UUID, processed=False) == {"raw": 3}
    writes = [s for s in seen if s != "SELECT"]
    if upsert:
        assert writes == ["INSERT"] * 3
    else:
        assert writes == ["UPDATE", "INSERT", "UPDATE", "UPDATE", "INSERT"]


def test_data_read_with_the_fence_of_its_step(db: engine.Database) -> None:
    record = introspections.start(db, UUID, True)
    with pytest.raises(exceptions.DataNotFound):
        stored_data.get_post(db, UUID, record.version)
    stored_data.store(db, UUID, {"processed": 1}, processed=True)
    with pytest.raises(exceptions.DataNotFound):  # the raw post only
        stored_data.get_post(db, UUID, record.version)
    stored_data.store(db, UUID, {"raw": 1}, processed=False)
    seen = statements.recorded(db)
    assert stored_data.get_post(db, UUID, record.version).data == {"raw": 1}
    assert seen == ["SELECT"]
    with pytest.raises(exceptions.StaleState):
        stored_data.get_post(db, UUID, record.version - 1)
    with pytest.raises(exceptions.StaleState):  # no introspection at all
        stored_data.get_post(db, "0" * 8 + UUID[8:], 1)
