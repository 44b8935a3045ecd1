"""Ironic stopped in the middle of processing 20 machines: after it is back,
``ironic-inspector-manage sync`` leaves every machine right in Ironic."""

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.machines.enroll import IronicAPI
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from lab.venvs import default_cache_dir
from tests.integration.conftest import Client, Lab, introspect, start_inspector

BIN = Path(sys.executable).parent
V120 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.20"}


@pytest.fixture(scope="module")
def own_ironic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IronicServer]:
    """An Ironic of this module's own: the test stops it."""
    server = IronicServer(default_cache_dir(), tmp_path_factory.mktemp("ironic-sync"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def inspector(
    own_ironic: IronicServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InspectorServer]:
    server = start_inspector(
        tmp_path_factory.mktemp("inspector-sync"),
        own_ironic,
        options={
            "processing": {"store_data": "database", "sync_interval": "0"},
            "ironic": {"max_retries": "1", "retry_interval": "0.2"},
            "DEFAULT": {"introspection_delay": "0"},
        },
    )
    yield server
    assert server.stop() == 0, server.log_tail()


def sync(inspector: InspectorServer, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(BIN / "ironic-inspector-manage"),
            "--config-file",
            str(inspector.config_file),
            "sync",
            "--json",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_ironic_stopped_mid_processing(
    own_ironic: IronicServer, inspector: InspectorServer
) -> None:
    client = Client(inspector.url)
    lab = Lab(IronicAPI(own_ironic.url), seed=13)
    machines = lab.machines(20)
    introspect(client, *machines, until="waiting", timeout=60)
    for machine, _uuid in machines:
        assert client.post("/v1/continue", json=machine.payload()).status_code == 200
    own_ironic.stop()  # while the conductor processes them
    for _machine, uuid in machines:
        assert (
            client.wait_for(uuid, "finished", "error", timeout=120)["state"]
            == "finished"
        ), uuid
    pending = [
        u
        for _m, u in machines
        if client.get(f"/v1/introspection/{u}", headers=V120).json()[
            "pending_ironic_sync"
        ]
    ]
    assert pending, "Ironic went away too late: nothing is pending"

    down = sync(inspector)
    assert down.returncode != 0
    assert "Ironic cannot be reached, nothing was changed" in down.stderr

    own_ironic.start()
    dry = sync(inspector, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    would = {
        f["node"]
        for f in json.loads(dry.stdout)["findings"]
        if f["kind"] == "owed" and f["action"] == "would do"
    }
    assert would == set(pending)
    done = sync(inspector)
    assert done.returncode == 0, done.stdout + done.stderr
    assert {
        f["node"]
        for f in json.loads(done.stdout)["findings"]
        if f["kind"] == "owed" and f["action"] == "done"
    } == set(pending)
    for machine, uuid in machines:
        node = lab.api.node(uuid)
        assert node["properties"]["cpus"] == machine.cpus, uuid
        assert node["properties"]["memory_mb"] == machine.memory_mb, uuid
        assert machine.pxe_mac in {p["address"] for p in lab.api.ports(uuid)}, uuid
        status = client.get(f"/v1/introspection/{uuid}", headers=V120).json()
        assert status["pending_ironic_sync"] is False
    print(f"{len(pending)} of 20 machines were pending when Ironic stopped")

    # a node deleted from Ironic disappears; drift is reported and repaired
    gone = machines[0][1]
    lab.api.request("DELETE", f"/v1/nodes/{gone}")
    drifted = machines[1][1]
    lab.api.request(
        "PATCH",
        f"/v1/nodes/{drifted}",
        json=[{"op": "replace", "path": "/properties/cpus", "value": 1}],
    )
    report = json.loads(sync(inspector).stdout)["findings"]
    assert {(f["node"], f["kind"]) for f in report} >= {
        (gone, "deleted"),
        (drifted, "drift"),
    }
    assert client.get(f"/v1/introspection/{gone}").status_code == 404
    assert lab.api.node(drifted)["properties"]["cpus"] == 1  # reported only
    assert sync(inspector, "--apply").returncode == 0
    assert lab.api.node(drifted)["properties"]["cpus"] == machines[1][0].cpus


def test_rebuild_after_losing_the_database(
    own_ironic: IronicServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """store_data = directory; the SQLite database is deleted; sync --rebuild
    brings statuses and data back from the store and Ironic."""
    if own_ironic.pid is None:
        own_ironic.start()
    work = tmp_path_factory.mktemp("inspector-rebuild")
    store = work / "store"
    server = start_inspector(
        work,
        own_ironic,
        options={
            "processing": {"store_data": "directory", "store_data_dir": str(store)},
            "DEFAULT": {"introspection_delay": "0"},
        },
    )
    client = Client(server.url)
    lab = Lab(IronicAPI(own_ironic.url), seed=17)
    machines = lab.machines(3)
    try:
        before = {}
        for (_machine, uuid), status in zip(
            machines, introspect(client, *machines), strict=True
        ):
            before[uuid] = status
            assert before[uuid]["state"] == "finished"
        assert server.stop() == 0
        (work / "inspector.sqlite").unlink()  # the database is lost
        server.start()
        for _machine, uuid in machines:
            assert client.get(f"/v1/introspection/{uuid}").status_code == 404
        rebuilt = sync(server, "--rebuild")
        assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
        report = json.loads(rebuilt.stdout)
        assert {
            f["node"]
            for f in report["findings"]
            if f["kind"] == "rebuild" and f["action"] == "done"
        } == set(before)
        assert "introspection rules" in report["notes"][0]
        for machine, uuid in machines:
            status = client.get(f"/v1/introspection/{uuid}").json()
            assert status["state"] == "finished"
            assert status["finished_at"] == before[uuid]["finished_at"]
            data = client.get(f"/v1/introspection/{uuid}/data").json()
            assert data["cpus"] == machine.cpus
    finally:
        server.stop()
