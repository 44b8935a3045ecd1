"""The listing's pages: newest first, filtered by state, through a marker."""

import datetime
import random
import uuid as uuidlib

import pytest

from inspector import exceptions
from inspector.db import engine, listing, models

BASE = datetime.datetime(2026, 1, 1)


def _seed(db: engine.Database, count: int) -> list[models.Introspection]:
    rng = random.Random(7)
    rows = []
    for index in range(count):
        rows.append(
            models.Introspection(
                uuid=str(uuidlib.UUID(int=rng.getrandbits(128), version=4)),
                state=rng.choice(["finished", "error", "waiting", "processing"]),
                version=1,
                # a few share a second: the UUID breaks the tie
                started_at=BASE + datetime.timedelta(seconds=index // 3),
                manage_boot=True,
            )
        )
    with db.session() as session:
        session.add_all(rows)
    return rows


def _walk(db: engine.Database, limit: int, states: list[str] | None) -> list[str]:
    seen: list[str] = []
    marker = None
    while True:
        page = listing.page(db, limit=limit, marker=marker, states_filter=states)
        assert len(page) <= limit
        if not page:
            return seen
        seen += [item.uuid for item in page]
        marker = page[-1].uuid


@pytest.mark.parametrize(
    "states",
    [None, ["finished"], ["error", "waiting"], ["finished", "error", "processing"]],
)
def test_pages_in_order(db: engine.Database, states: list[str] | None) -> None:
    rows = _seed(db, 100)
    wanted = sorted(
        (r for r in rows if states is None or r.state in states),
        key=lambda r: (r.started_at, r.uuid),
        reverse=True,
    )
    assert _walk(db, 7, states) == [r.uuid for r in wanted]


def test_marker_of_another_state_still_pages(db: engine.Database) -> None:
    """A marker is a position in time, whatever its own state."""
    rows = _seed(db, 30)
    ordered = sorted(rows, key=lambda r: (r.started_at, r.uuid), reverse=True)
    marker = next(r for r in ordered[5:] if r.state != "error")
    page = listing.page(db, limit=100, marker=marker.uuid, states_filter=["error"])
    after = ordered[ordered.index(marker) + 1 :]
    assert [p.uuid for p in page] == [r.uuid for r in after if r.state == "error"]


def test_unknown_marker(db: engine.Database) -> None:
    with pytest.raises(exceptions.NotFound, match="Marker"):
        listing.page(db, limit=5, marker=str(uuidlib.uuid4()))
