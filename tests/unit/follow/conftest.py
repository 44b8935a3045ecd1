"""A fake Ironic node list for the follower: nodes with their inspection
times, sorted and paged as Ironic does (``sort_key`` then its own id,
``marker`` the node after which a page starts, NULLs first as on SQLite
or last as on PostgreSQL), and each node's stored inventory."""

import copy
import datetime
import json
import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
from oslo_config import cfg
from oslo_config import fixture as config_fixture

from inspector import exceptions
from inspector.conf import opts
from inspector.db import engine
from inspector.runtime import Runtime
from tests.unit.conftest import runtime

DATA = pathlib.Path(__file__).parents[2] / "data" / "ipa-inventory.json"
T0 = datetime.datetime(2026, 11, 30, 12, 0, 0)


def at(seconds: float) -> str:
    """Ironic's way of writing ``T0 + seconds``."""
    return (T0 + datetime.timedelta(seconds=seconds)).isoformat() + "+00:00"


class FakeIronic:
    """``nodes`` by UUID in creation order; ``fail[method]`` raised when it
    is called (once if ``fail_once``); ``calls`` lists ``(method, arg)``."""

    def __init__(self) -> None:
        self.nodes: dict[str, dict[str, Any]] = {}
        self.inventories: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, Any]] = []
        self.fail: dict[str, Exception] = {}
        self.fail_on: dict[str, str] = {}
        """``get_inventory`` fails for this node only (method -> node)."""
        self.version = "1.96"
        self.nulls_last = False

    def add(
        self,
        uuid: str,
        finished: float | None = None,
        interface: str = "agent",
        name: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        self.nodes[uuid] = {
            "uuid": uuid,
            "name": name,
            "inspect_interface": interface,
            "inspection_started_at": None,
            "inspection_finished_at": None,
        }
        if finished is not None:
            self.inspect(uuid, finished, data)

    def inspect(
        self, uuid: str, finished: float, data: dict[str, Any] | None = None
    ) -> None:
        """Ironic inspects ``uuid``, finishing at ``T0 + finished``: as
        Ironic does, the end clears the start (a failure would clear it
        without a finish)."""
        node = self.nodes[uuid]
        node["inspection_started_at"] = None
        node["inspection_finished_at"] = at(finished)
        post = data if data is not None else json.loads(DATA.read_text())
        plugin = {k: v for k, v in post.items() if k != "inventory"}
        self.inventories[uuid] = {"inventory": post["inventory"], "plugin_data": plugin}

    def _call(self, method: str, arg: Any) -> None:
        self.calls.append((method, arg))
        if method in self.fail:
            raise self.fail[method]
        if method in self.fail_on and self.fail_on[method] == arg:
            raise exceptions.BaremetalError("Ironic answered 503")

    def max_version(self) -> str | None:
        self._call("max_version", None)
        return self.version

    def inspected_page(
        self, limit: int, marker: str | None = None, by_finish: bool = True
    ) -> list[dict[str, Any]]:
        self._call("inspected_page", (marker, by_finish))
        order = list(self.nodes)
        rows = list(self.nodes.values())
        if by_finish:

            def key(node: dict[str, Any]) -> tuple[Any, ...]:
                finished = node["inspection_finished_at"]
                null_rank = (1 if self.nulls_last else -1) if finished is None else 0
                return (null_rank, finished or "", order.index(node["uuid"]))

            rows.sort(key=key)
        if marker is not None:
            if marker not in self.nodes:
                raise exceptions.InvalidInput(f"marker {marker} not found")
            index = [n["uuid"] for n in rows].index(marker)
            rows = rows[index + 1 :]
        return copy.deepcopy(rows[:limit])

    def inspected_node(self, node_uuid: str) -> dict[str, Any]:
        self._call("inspected_node", node_uuid)
        if node_uuid not in self.nodes:
            raise exceptions.NodeNotFound(node=node_uuid)
        return copy.deepcopy(self.nodes[node_uuid])

    def get_inventory(self, node_uuid: str) -> dict[str, Any]:
        self._call("get_inventory", node_uuid)
        if node_uuid not in self.nodes or node_uuid not in self.inventories:
            raise exceptions.NotFound(f"no inventory of {node_uuid}")
        return copy.deepcopy(self.inventories[node_uuid])

    def methods(self) -> list[str]:
        return [method for method, _arg in self.calls]


@pytest.fixture
def conf() -> Iterator[cfg.ConfigOpts]:
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([], default_config_files=[])
    fixture = config_fixture.Config(conf)
    fixture.setUp()
    fixture.config(host="c1")
    fixture.config(enabled=True, page_size=3, group="ironic_follow")
    yield conf
    fixture.cleanUp()


@pytest.fixture
def ironic() -> FakeIronic:
    return FakeIronic()


@pytest.fixture
def rt(conf: cfg.ConfigOpts, db: engine.Database, ironic: FakeIronic) -> Runtime:
    built: Runtime = runtime(conf, db, ironic)
    return built
