"""Switching a running ironic-inspector 12.5 (PyPI) over, with its data
(issue 48): 12.5 introspects machines of the real Ironic (one still
waiting for its ramdisk) and holds rules; then ``ironic-inspector-manage
import upstream`` reads its database into ours, and ours answers the
same statuses, keeps the rule UUIDs, serves the stored data, reapplies
it with the same outcome, finishes the waiting node when its ramdisk
posts here, and shows each node's history from its first run."""

import json
import pathlib
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from lab.introspections import start_all
from lab.machines import hardware
from lab.machines.enroll import IronicAPI, enroll
from lab.machines.hardware import Machine
from lab.machines.ramdisk import RamdiskPlayer, post_continue
from lab.servers import upstream
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from lab.waiting import wait_until

MANAGE = pathlib.Path(sys.executable).parent / "ironic-inspector-manage"
STATUS_FIELDS = ("uuid", "state", "finished", "error", "started_at", "finished_at")
RULE: dict[str, Any] = {
    "uuid": "5e1d7f1c-4b8a-4b8e-9d0e-48a1b2c3d4e5",
    "description": "switch-over: mark every node",
    "conditions": [{"op": "ge", "field": "memory_mb", "value": 1}],
    "actions": [{"action": "set-attribute", "path": "/extra/imported", "value": "yes"}],
}


def _manage(config: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MANAGE), "--config-file", str(config), "import", "upstream", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _statuses(url: str, uuids: list[str]) -> dict[str, dict[str, Any]]:
    found = {}
    for uuid in uuids:
        body = requests.get(f"{url}/v1/introspection/{uuid}", timeout=30).json()
        found[uuid] = {k: body.get(k) for k in STATUS_FIELDS}
    return found


@pytest.fixture(scope="module")
def fleet(ironic_api: IronicAPI) -> list[tuple[Machine, str]]:
    made = [hardware.make_machine(48_000 + i, seed=48) for i in range(4)]
    made[-1].behaviour = "silent"  # 12.x waits for its ramdisk at the switch
    uuids = enroll(ironic_api, made)
    return [(m, uuids[m.name]) for m in made]


@pytest.fixture(scope="module")
def upstream_url(
    ironic: IronicServer,
    ironic_api: IronicAPI,
    fleet: list[tuple[Machine, str]],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """12.5 after introspecting the fleet: its URL, its database URL and
    what it answered (statuses, rules, data) before the switch."""
    server = upstream.UpstreamServer(
        tmp_path_factory.mktemp("upstream-12.5"), ironic.url, upstream.install()
    )
    player = RamdiskPlayer(ironic_api, "http://unused", [m for m, _u in fleet])
    server.start()
    player.inspector_url = server.url
    player.start()
    try:
        url = server.url
        resp = requests.post(f"{url}/v1/rules", json=RULE, timeout=30)
        assert resp.status_code in (200, 201), resp.text
        uuids = [u for _m, u in fleet]
        start_all(url, uuids)
        done, waiting = uuids[:-1], uuids[-1]
        wait_until(
            lambda: _statuses(url, uuids),
            180,
            "12.5 to finish three machines",
            until=lambda s: (
                all(s[u]["finished"] for u in done) and s[waiting]["state"] == "waiting"
            ),
            interval=0.5,
        )
        before = {
            "statuses": _statuses(url, uuids),
            "rules": requests.get(f"{url}/v1/rules", timeout=30).json()["rules"],
            "data": {
                u: requests.get(f"{url}/v1/introspection/{u}/data", timeout=30).json()
                for u in done
            },
        }
        yield url, server.database_url, before
    finally:
        player.stop()
        server.stop()


def test_import_from_a_running_12x(
    upstream_url: tuple[str, str, dict[str, Any]],
    fleet: list[tuple[Machine, str]],
    ironic: IronicServer,
    ironic_api: IronicAPI,
    tmp_path: pathlib.Path,
) -> None:
    url, database_url, before = upstream_url
    uuids = [u for _m, u in fleet]
    done, (machine, waiting) = uuids[:-1], fleet[-1]

    ours = InspectorServer(
        tmp_path / "ours",
        ironic.url,
        database_url=f"sqlite:///{tmp_path / 'ours.sqlite'}",
    )
    ours.start()
    ours.stop()  # its schema and configuration, no work yet

    # through the API: the node 12.x waits for cannot be looked up here
    blocked = _manage(ours.config_file, "--url", url, "--dry-run", "--json")
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert f"node {waiting} waits for its ramdisk" in blocked.stdout
    assert json.loads(blocked.stdout)["nodes"] == 3
    dry = _manage(ours.config_file, "--connection", database_url, "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    planned = json.loads(dry.stdout)
    assert planned["nodes"] == 4 and planned["rules"] == 1
    assert planned["nodes_by_state"] == {"finished": 3, "waiting": 1}
    assert planned["stored_data"] == {"processed": 3, "unprocessed": 3}

    imported = _manage(ours.config_file, "--connection", database_url)
    assert imported.returncode == 0, imported.stderr
    assert "Imported 4 nodes" in imported.stdout, imported.stdout
    again = _manage(ours.config_file, "--connection", database_url, "--json")
    assert json.loads(again.stdout)["nodes_already_here"] == 4
    assert json.loads(again.stdout)["nodes"] == 0

    ours.start()
    try:
        base = ours.url
        # the statuses Ironic would poll answer the same
        assert _statuses(base, uuids) == before["statuses"]
        rules = requests.get(f"{base}/v1/rules", timeout=30).json()["rules"]
        assert [r["uuid"] for r in rules] == [r["uuid"] for r in before["rules"]]
        for uuid in done:
            data = requests.get(f"{base}/v1/introspection/{uuid}/data", timeout=30)
            assert data.json() == before["data"][uuid]
            history = requests.get(
                f"{base}/v1/introspection/{uuid}/history", timeout=30
            ).json()["history"]
            assert [h["source"] for h in history] == ["upstream"]

        # a reapply here gives the rule's outcome again
        first = done[0]
        ironic_api.request(
            "PATCH",
            f"/v1/nodes/{first}",
            json=[{"op": "remove", "path": "/extra/imported"}],
        )
        resp = requests.post(
            f"{base}/v1/introspection/{first}/data/unprocessed", timeout=30
        )
        assert resp.status_code == 202, resp.text
        wait_until(
            lambda: ironic_api.node(first)["extra"].get("imported"),
            60,
            "the reapplied rule to mark the node",
        )

        # the node 12.x waited for finishes here when its ramdisk posts
        status, body, _tries, _took = post_continue(base, machine.payload())
        assert status == 200, body
        wait_until(
            lambda: requests.get(
                f"{base}/v1/introspection/{waiting}", timeout=30
            ).json(),
            60,
            "the waiting node to finish here",
            until=lambda s: s["finished"],
        )
        assert ironic_api.node(waiting)["extra"].get("imported") == "yes"
    finally:
        assert ours.stop() == 0, ours.log_tail()
