"""A fake :class:`~inspector.runtime.Runtime` for the conductor's workflow
modules: the real configuration, SQLite at the newest schema (the unit
layer's ``db``), an in-process lock provider and a fake Ironic that records
every call. No test here sleeps: time is injected."""

import datetime
from collections.abc import Iterator
from typing import Any

import pytest
from oslo_config import cfg
from oslo_config import fixture as config_fixture

from inspector import exceptions
from inspector.conf import opts
from inspector.db import claims, engine, introspections, transitions
from inspector.db.introspections import IntrospectionRecord
from inspector.runtime import Runtime
from tests.unit.conftest import runtime

UUID = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"


class FakeIronic:
    """The Ironic client's methods the workflows call; ``calls`` lists them
    in order as ``(method, node, argument)``; ``fail[method]`` is raised
    when that method is called."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.fail: dict[str, Exception] = {}
        self.nodes: dict[str, dict[str, Any]] = {}
        self.ports: dict[str, list[dict[str, Any]]] = {}
        self.inventories: dict[str, dict[str, Any]] = {}

    def _call(self, method: str, node: str, argument: Any = None) -> None:
        self.calls.append((method, node, argument))
        if method in self.fail:
            raise self.fail[method]

    def get_node(self, node_id: str) -> dict[str, Any]:
        self._call("get_node", node_id)
        return self.nodes.get(node_id, {"uuid": node_id, "properties": {}})

    def list_ports(self, node_uuid: str) -> list[dict[str, Any]]:
        self._call("list_ports", node_uuid)
        return self.ports.get(node_uuid, [])

    def set_boot_device(
        self, node_uuid: str, device: str, persistent: bool = False
    ) -> None:
        self._call("set_boot_device", node_uuid, device)

    def set_power_state(self, node_uuid: str, target: str) -> None:
        self._call("set_power_state", node_uuid, target)

    def patch_node(self, node_uuid: str, patches: list[dict[str, Any]]) -> None:
        self._call("patch_node", node_uuid, patches)

    def create_port(self, node_uuid: str, body: dict[str, Any]) -> dict[str, Any]:
        self._call("create_port", node_uuid, body)
        return {"uuid": "port-" + str(body.get("address")), **body}

    def delete_port(self, port_uuid: str) -> None:
        self._call("delete_port", port_uuid)

    def patch_port(self, port_uuid: str, patches: list[dict[str, Any]]) -> None:
        self._call("patch_port", port_uuid, patches)

    def add_trait(self, node_uuid: str, trait: str) -> None:
        self._call("add_trait", node_uuid, trait)

    def remove_trait(self, node_uuid: str, trait: str) -> None:
        self._call("remove_trait", node_uuid, trait)

    def set_provision_state(self, node_uuid: str, target: str) -> None:
        self._call("set_provision_state", node_uuid, target)

    def get_inventory(self, node_uuid: str) -> dict[str, Any]:
        self._call("get_inventory", node_uuid)
        return self.inventories.get(node_uuid, {})

    def list_node_uuids(self) -> set[str]:
        self._call("list_node_uuids", "")
        return set(self.nodes)

    def methods(self) -> list[str]:
        return [method for method, _node, _argument in self.calls]


@pytest.fixture
def conf() -> Iterator[cfg.ConfigOpts]:
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([], default_config_files=[])
    fixture = config_fixture.Config(conf)
    fixture.setUp()
    fixture.config(host="c1", introspection_delay=0)
    fixture.config(store_data="database", group="processing")
    yield conf
    fixture.cleanUp()


@pytest.fixture
def ironic() -> FakeIronic:
    return FakeIronic()


@pytest.fixture
def rt(conf: cfg.ConfigOpts, db: engine.Database, ironic: FakeIronic) -> Runtime:
    built: Runtime = runtime(conf, db, ironic)
    return built


def claimed(rt: Runtime, record: IntrospectionRecord) -> IntrospectionRecord:
    """``record``'s step claimed by this conductor, as the work queue does."""
    return claims.claim(
        rt.db, record.uuid, record.version, rt.conf.host, rt.run_id, record.state
    )


def starting(rt: Runtime, manage_boot: bool = True) -> IntrospectionRecord:
    """A claimed start step."""
    return claimed(rt, introspections.start(rt.db, UUID, manage_boot))


def posted(
    rt: Runtime,
    data: dict[str, Any] | None = None,
    logs: str | None = None,
    manage_boot: bool = True,
) -> IntrospectionRecord:
    """A claimed processing step with ``data`` (and ``logs``) posted."""
    record = introspections.start(rt.db, UUID, manage_boot)
    record = transitions.waiting(rt.db, record)
    record = transitions.posted(
        rt.db, record, {"inventory": {}} if data is None else data, logs=logs
    )
    return claimed(rt, record)


def moved_on(rt: Runtime, record: IntrospectionRecord) -> None:
    """Another conductor claims ``record``'s step: ours is stale."""
    claims.claim(rt.db, record.uuid, record.version, "c2", "run-2")


class Clock:
    """An injected ``utcnow``: naive UTC, moved by hand."""

    def __init__(self) -> None:
        self.now = introspections.utcnow()

    def __call__(self) -> datetime.datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += datetime.timedelta(seconds=seconds)


def away() -> exceptions.BaremetalError:
    """What the Ironic client raises when Ironic does not answer."""
    return exceptions.BaremetalError("Ironic did not answer")
