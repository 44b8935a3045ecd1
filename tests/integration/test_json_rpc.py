"""A cluster without a message broker: the API calls the conductors over
JSON-RPC with TLS (a certificate of the test's own CA, verified) and HTTP
basic authentication. Real etcd, PostgreSQL, Ironic and processes.

``transport_url`` points at a port the test listens on: no process may
ever connect to it.
"""

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bcrypt
import pytest

from lab.servers.split_cluster import SplitCluster
from tests.integration.conftest import Client, Lab, SplitFactory, introspect
from tests.unit.net.certs import make_certs

PASSWORD = "api-Pa55word"
BIN = Path(sys.executable).parent


class Listener:
    """A TCP port that counts the connections it gets."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _addr = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


@pytest.fixture(scope="module")
def broker_trap() -> Iterator[Listener]:
    listener = Listener()
    yield listener
    listener.close()


@pytest.fixture(scope="module")
def cluster(
    split_cluster: SplitFactory,
    broker_trap: Listener,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[SplitCluster]:
    work = tmp_path_factory.mktemp("json-rpc-secrets")
    certs = make_certs(work / "certs")
    htpasswd = work / "htpasswd-json-rpc"
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4)).decode()
    htpasswd.write_text(f"inspector-api:{hashed}\n")
    with split_cluster(
        "json_rpc",
        conductors=2,
        rpc_transport="json-rpc",
        options={
            "DEFAULT": {
                "introspection_delay": "0",
                "transport_url": f"rabbit://guest:guest@127.0.0.1:{broker_trap.port}/",
            },
            "coordination": {"sweep_interval": "1", "claim_timeout": "5"},
            "json_rpc": {
                "use_ssl": "True",
                "cert_file": str(certs.server.cert),
                "key_file": str(certs.server.key),
                "cafile": str(certs.ca.cert),
                "auth_strategy": "http_basic",
                "http_basic_auth_user_file": str(htpasswd),
                "http_basic_username": "inspector-api",
                "http_basic_password": PASSWORD,
            },
        },
    ) as split:
        yield split


def status_check(config_file: Path) -> dict[str, Any]:
    done = subprocess.run(
        [
            str(BIN / "ironic-inspector-status"),
            "--config-file",
            str(config_file),
            "upgrade",
            "check",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return {c["check"]: c for c in json.loads(done.stdout)["checks"]}


def test_introspection_over_tls_and_basic_auth(
    cluster: SplitCluster, lab: Lab, broker_trap: Listener
) -> None:
    client = Client(cluster.url)
    statuses = introspect(client, *lab.machines(3))
    assert [s["state"] for s in statuses] == ["finished"] * 3, statuses
    for conductor in cluster.conductors:
        port = conductor.options["json_rpc"]["port"]
        log = conductor.log_tail(10**6)
        assert f"JSON-RPC listening on https://127.0.0.1:{port}" in log
        assert "DISABLED" not in log and "not encrypted" not in log  # loopback
        assert PASSWORD not in log
    health = client.get("/healthcheck")
    assert health.status_code == 200, health.text
    assert "messaging: OK" in health.text.splitlines(), health.text
    assert cluster.api is not None
    assert PASSWORD not in cluster.api.log_tail(10**6)
    checks = status_check(cluster.api.config_file)
    assert checks["Conductor endpoints"]["result"] == 0, checks
    for conductor in cluster.conductors:
        port = conductor.options["json_rpc"]["port"]
        assert (
            f"{conductor.host} https://127.0.0.1:{port}/: answers"
            in checks["Conductor endpoints"]["details"]
        )
    # every process ran and worked: none opened transport_url
    assert broker_trap.connections == 0


def test_wrong_password_is_503_before_anything_is_recorded(
    cluster: SplitCluster, lab: Lab, tmp_path: Path
) -> None:
    bad = cluster.add_api(
        "api_wrong_password", {"json_rpc": {"http_basic_password": "not-it"}}
    )
    try:
        client = Client(bad.url)
        _machine, uuid = lab.machine()
        started = time.monotonic()
        resp = client.post(f"/v1/introspection/{uuid}")
        took = time.monotonic() - started
        assert resp.status_code == 503, resp.text
        assert took < 5, took
        # the client reads what failed in general terms, the log the cause
        message = resp.json()["error"]["message"]
        assert "no conductor is available" in message
        assert "127.0.0.1" not in message and "401" not in message
        assert "not-it" not in message
        assert client.get(f"/v1/introspection/{uuid}").status_code == 404
        resp = client.post(f"/v1/introspection/{uuid}")  # a retry: same answer
        assert resp.status_code == 503, resp.text
        log = bad.log_tail(10**6)
        lines = [
            line
            for line in log.splitlines()
            if " WARNING " in line or " ERROR " in line
        ]
        refusals = [
            line for line in lines if "refused with 401 (wrong credentials" in line
        ]
        assert "no conductor takes work from this API" in refusals[0]
        assert len(refusals) == 1, lines  # one line per outage, not per request
        assert "not-it" not in log and PASSWORD not in log
        health = client.get("/healthcheck")
        assert health.status_code == 503, health.text
        assert "messaging: FAILED" in health.text.splitlines(), health.text
        checks = status_check(bad.config_file)
        assert checks["Conductor endpoints"]["result"] == 2, checks
        assert "refused with 401" in checks["Conductor endpoints"]["details"]
        # the same request on the good API works
        good = Client(cluster.url)
        resp = good.post(f"/v1/introspection/{uuid}")
        assert resp.status_code == 202, resp.text
        good.wait_for(uuid, "waiting", timeout=30)
        good.post(f"/v1/introspection/{uuid}/abort")
    finally:
        bad.stop()


def test_a_ramdisk_posting_to_a_misconfigured_api_loses_nothing(
    cluster: SplitCluster, lab: Lab
) -> None:
    """Data the API stored is never refused: the leader's sweep runs it."""
    good = Client(cluster.url)
    ((machine, uuid),) = lab.machines(1)
    introspect(good, (machine, uuid), until="waiting")
    bad = cluster.add_api(
        "api_wrong_password_2", {"json_rpc": {"http_basic_password": "not-it"}}
    )
    try:
        resp = Client(bad.url).post("/v1/continue", json=machine.payload())
        assert resp.status_code == 200, resp.text
        body = good.wait_for(uuid, "finished", "error", timeout=30)
        assert body["state"] == "finished", body
        assert "stored but no conductor took it" in bad.log_tail(10**6)
    finally:
        bad.stop()


def test_a_conductor_the_api_cannot_reach_is_skipped(
    cluster: SplitCluster, lab: Lab
) -> None:
    """A conductor that publishes an address nobody answers on (a wrong
    advertise_host) is in the group; calls to it fail at once and go to
    another conductor, with one warning per call naming the cause."""
    odd = cluster.add_conductor(
        "lab-conductor-unreachable", {"json_rpc": {"advertise_host": "127.0.0.2"}}
    )
    try:
        client = Client(cluster.url)
        assert cluster.api is not None
        api = cluster.api
        skipped: list[str] = []
        for _round in range(8):  # picks are random: until one went there
            statuses = introspect(client, *lab.machines(3))
            assert [s["state"] for s in statuses] == ["finished"] * 3
            skipped = [
                line
                for line in api.log_tail(10**6).splitlines()
                if "lab-conductor-unreachable: https://127.0.0.2:" in line
            ]
            if skipped:
                break
        assert skipped, "no call went to the unreachable conductor"
        assert all("connection refused); conductor lab-" in s for s in skipped)
    finally:
        odd.stop()
        cluster.conductors.remove(odd)
