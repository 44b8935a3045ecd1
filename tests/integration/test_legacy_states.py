"""Upgrading split mode: a conductor an earlier release disabled (its
state a key in etcd or Redis, as that release wrote it) is disabled in
the database once a process of this release starts, for every interface,
and the earlier release still reads its key as it was."""

import json
import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
from oslo_config import cfg

from inspector.conf import opts
from inspector.coordination import service_group
from inspector.coordination.backend import direct_access, start_coordinator
from inspector.db import engine, migration
from lab.servers.etcd import EtcdServer
from lab.servers.redis import RedisServer

KEY = "ironic_inspector.conductor_state.c-1"
"""Where the earlier release kept conductor c-1's state."""
DISABLED = {"enabled": False, "reason": "firmware", "changed_at": "2026-11-30"}


@pytest.fixture(scope="module", params=["etcd", "redis"])
def backend_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    work = tmp_path_factory.mktemp(f"legacy-{request.param}")
    server: Any = (
        EtcdServer(work, in_memory=True)
        if request.param == "etcd"
        else RedisServer(work)
    )
    server.start()
    yield server.tooz_url()
    server.stop()


def _conf(url: str, database: pathlib.Path) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([], project="ironic-inspector", default_config_files=[])
    conf.set_override("standalone", False)
    conf.set_override("backend_url", url, group="coordination")
    conf.set_override("connection", f"sqlite:///{database}", group="database")
    return conf


def test_a_disabled_conductor_stays_disabled(
    backend_url: str, tmp_path: pathlib.Path
) -> None:
    conf = _conf(backend_url, tmp_path / "inspector.db")
    db = engine.from_conf(conf)
    migration.ensure_schema(db)
    coordinator = start_coordinator(conf, "manage")
    try:
        driver, client = direct_access(coordinator)
        # as the earlier release's Etcd3gwStore and RedisStore wrote it
        (client.put if driver == "etcd3gw" else client.set)(KEY, json.dumps(DISABLED))
        group = service_group.for_split(coordinator, db)
        (view,) = group.conductors()
        assert (view["hostname"], view["alive"], view["enabled"]) == (
            "c-1",
            False,
            False,
        )
        assert view["disabled_reason"] == "firmware"
        # marked carried; what the earlier release reads is unchanged
        raw = client.get(KEY)
        kept = json.loads(raw[0] if driver == "etcd3gw" else raw)
        assert kept == {**DISABLED, "carried_to_database": True}
        # enabled through this release: it stays enabled at the next start
        group.set_enabled("c-1", True)
        again = service_group.for_split(coordinator, db)
        assert again.conductors() == []
    finally:
        coordinator.stop()
        db.dispose()
