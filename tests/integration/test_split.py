"""Split mode against real etcd, RabbitMQ, PostgreSQL and Ironic.

One cluster for the module: the API (ironic-inspector-api-wsgi) and
conductors (ironic-inspector-conductor) as separate processes.
"""

import pathlib
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from tooz import coordination

from inspector.coordination.backend import GROUP_ID
from lab.servers.inspector import ConductorServer, InspectorServer
from lab.servers.ironic import IronicServer
from lab.servers.split_cluster import SplitCluster
from lab.waiting import wait_until
from tests.integration.conftest import (
    MEMBERSHIP_TIMEOUT,
    Client,
    Lab,
    SplitFactory,
    ensure_conductors,
    introspect,
    kill,
    metric,
    start_inspector,
    wait_for_router,
)


@pytest.fixture(scope="module", params=["local", "apache"])
def split(
    request: pytest.FixtureRequest, split_cluster: SplitFactory
) -> Iterator[SplitCluster]:
    """The whole scenario runs twice: the API on its own threaded server,
    then under a real Apache with mod_wsgi daemon processes."""
    with split_cluster(
        f"split_{request.param}", conductors=0, api_server=request.param
    ) as cluster:
        yield cluster
    for conductor in cluster.conductors:
        assert "Traceback" not in conductor.log_tail(10**6), conductor.log_tail()


@pytest.fixture
def cluster(split: SplitCluster) -> SplitCluster:
    """The split cluster with three running conductors."""
    return ensure_conductors(split, 3)


@pytest.fixture
def client(cluster: SplitCluster) -> Client:
    return Client(cluster.url)


@pytest.fixture
def etcd_members(split: SplitCluster) -> Iterator[Any]:
    coordinator = coordination.get_coordinator(split.etcd.tooz_url(), b"test-observer")
    coordinator.start()

    def members() -> set[str]:
        return {m.decode() for m in coordinator.get_members(GROUP_ID).get()}

    yield members
    coordinator.stop()


def owner(conductors: list[ConductorServer], text: str) -> set[str]:
    """Hosts whose log contains ``text``."""
    return {c.host for c in conductors if text in c.log_tail(10**6)}


def test_no_conductor_answers_503(split: SplitCluster, lab: Lab) -> None:
    assert not split.conductors
    _machine, uuid = lab.machine()
    resp = Client(split.url).post(f"/v1/introspection/{uuid}")
    assert resp.status_code == 503
    assert resp.headers["Retry-After"] == "5"
    message = resp.json()["error"]["message"]
    assert "no conductor is available" in message
    # what to do is for the operator, in the API's log
    assert "ironic-inspector-conductor" not in message
    assert split.api is not None
    assert "start ironic-inspector-conductor" in split.api.log_tail(10**6)
    # nothing was recorded: no introspection stranded in "starting", and
    # the retry once a conductor runs starts afresh
    assert Client(split.url).get(f"/v1/introspection/{uuid}").status_code == 404


def test_work_spreads_and_continues_on_another_conductor(
    client: Client, cluster: SplitCluster, lab: Lab
) -> None:
    nodes = lab.machines(20)
    for status in introspect(client, *nodes):
        assert status["state"] == "finished", status
    starters, finishers = {}, {}
    for machine, uuid in nodes:
        started = owner(cluster.conductors, f"Node {uuid} is booting")
        finished = owner(
            cluster.conductors,
            f"Introspection of node {uuid} ({machine.name}) finished",
        )
        assert len(started) == 1 and len(finished) == 1, (uuid, started, finished)
        starters[uuid], finishers[uuid] = started.pop(), finished.pop()
    every = {c.host for c in cluster.conductors}
    assert set(starters.values()) == every
    assert set(finishers.values()) == every
    assert any(starters[u] != finishers[u] for u in starters)
    node = lab.api.node(nodes[0][1])
    assert node["properties"]["cpus"] == nodes[0][0].cpus


def _introspect_all(client: Client, lab: Lab, count: int) -> list[str]:
    """Starts ``count`` new introspections; their UUIDs, once all wait."""
    statuses = introspect(client, *lab.machines(count), until="waiting", timeout=20)
    return [status["uuid"] for status in statuses]


def test_clean_stop_leaves_group_at_once(
    client: Client, cluster: SplitCluster, lab: Lab, etcd_members: Any
) -> None:
    leaving = cluster.conductors[-1]
    assert leaving.host in etcd_members()
    assert leaving.stop() == 0, leaving.log_tail()
    assert "left the group" in leaving.log_tail(10**6)
    assert leaving.host not in etcd_members()
    wait_for_router(client, alive=len(cluster.conductors) - 1)
    uuids = _introspect_all(client, lab, 6)
    survivors = [c for c in cluster.conductors if c is not leaving]
    for uuid in uuids:
        assert owner(survivors, f"Node {uuid} is booting")


def test_killed_conductor_stops_being_picked(
    client: Client, cluster: SplitCluster, lab: Lab, etcd_members: Any
) -> None:
    victim = cluster.conductors[-1]
    killed_at = time.monotonic()
    kill(victim)
    wait_until(
        lambda: victim.host not in etcd_members(),
        MEMBERSHIP_TIMEOUT + 5,
        f"{victim.host} to leave the group",
        interval=0.1,
    )
    gone_after = time.monotonic() - killed_at
    wait_for_router(client, alive=len(cluster.conductors) - 1)
    uuids = _introspect_all(client, lab, 6)
    assert gone_after <= MEMBERSHIP_TIMEOUT + 2, gone_after
    for uuid in uuids:
        assert f"Node {uuid} is booting" not in victim.log_tail(10**6)


def test_lock_held_elsewhere_gives_409(
    client: Client, cluster: SplitCluster, lab: Lab
) -> None:
    machine, uuid = lab.machine()
    (status,) = introspect(client, (machine, uuid))
    assert status["state"] == "finished", status
    other = coordination.get_coordinator(cluster.etcd.tooz_url(), b"other-conductor")
    other.start()
    lock = other.get_lock(f"ironic_inspector.{uuid}".encode())
    assert lock.acquire(blocking=False)
    try:
        for path in ("abort", "data/unprocessed"):
            resp = client.post(f"/v1/introspection/{uuid}/{path}")
            assert resp.status_code == 409, (path, resp.text)
            assert "locked by another operation" in resp.json()["error"]["message"]
    finally:
        lock.release()
        other.stop()
    assert client.post(f"/v1/introspection/{uuid}/data/unprocessed").status_code == 202
    assert client.wait_for(uuid, "finished", "error")["state"] == "finished"


UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _error_answers(client: Client, lab: Lab) -> dict[str, tuple[int, str]]:
    """Every client-visible error, with node UUIDs blanked out."""
    machine, uuid = lab.machine()
    unknown = "7f1a2b3c-0000-4000-8000-000000000000"
    requests: list[tuple[str, str, str, dict[str, Any]]] = [
        ("unknown node start", "post", f"/v1/introspection/{unknown}", {}),
        ("unknown introspection", "get", f"/v1/introspection/{unknown}", {}),
        ("bad node id", "get", "/v1/introspection/not a node!", {}),
        ("bad limit", "get", "/v1/introspection?limit=-1", {}),
        ("bad marker", "get", "/v1/introspection?marker=xyz", {}),
        (
            "bad version",
            "get",
            "/v1/introspection",
            {"headers": {"X-OpenStack-Ironic-Inspector-API-Version": "1.99"}},
        ),
        ("bad manage_boot", "post", f"/v1/introspection/{uuid}?manage_boot=maybe", {}),
        (
            "unknown mac",
            "post",
            "/v1/continue",
            {
                "json": {
                    "inventory": {
                        "interfaces": [
                            {"name": "x", "mac_address": "66:77:88:99:aa:bb"}
                        ]
                    }
                }
            },
        ),
        (
            "not json",
            "post",
            "/v1/continue",
            {"data": b"{", "headers": {"Content-Type": "application/json"}},
        ),
        ("not an object", "post", "/v1/continue", {"json": [1]}),
        ("data of unknown", "get", f"/v1/introspection/{unknown}/data", {}),
        ("abort unknown", "post", f"/v1/introspection/{unknown}/abort", {}),
    ]
    answers: dict[str, tuple[int, str]] = {}
    for name, method, path, kwargs in requests:
        resp = getattr(client.http, method)(client.url + path, timeout=30, **kwargs)
        answers[name] = (resp.status_code, UUID_RE.sub("<uuid>", resp.text))
    # state-dependent errors on a node of this shape
    introspect(client, (machine, uuid), until="waiting")
    resp = client.post(f"/v1/introspection/{uuid}/data/unprocessed")
    answers["reapply while waiting"] = (
        resp.status_code,
        UUID_RE.sub("<uuid>", resp.text),
    )
    resp = client.post(f"/v1/introspection/{uuid}/abort")
    assert resp.status_code == 202, resp.text
    client.wait_for(uuid, "error")
    return answers


def test_same_errors_in_both_shapes(
    client: Client,
    lab: Lab,
    ironic: IronicServer,
    tmp_path: pathlib.Path,
) -> None:
    standalone: InspectorServer = start_inspector(tmp_path, ironic)
    try:
        expected = _error_answers(Client(standalone.url), lab)
    finally:
        standalone.stop()
    got = _error_answers(client, lab)
    assert got == expected
    assert {code for code, _ in expected.values()} >= {400, 404, 406}
    for name, (code, _text) in expected.items():
        assert 400 <= code < 500, name


def test_health_and_metrics(client: Client, cluster: SplitCluster, lab: Lab) -> None:
    """/healthcheck and /metrics through the API (its own server, then
    Apache with two daemon processes that share their recorded values), and
    a conductor's own metrics port."""
    from lab.servers import loopback

    port = loopback.free_port()
    extra = cluster.add_conductor(
        "lab-conductor-metrics",
        {"metrics": {"conductor_port": str(port)}},
    )
    try:
        resp = client.get("/healthcheck")
        assert resp.status_code == 200, resp.text
        assert resp.text.splitlines() == [
            "database: OK",
            "coordination: OK",
            "messaging: OK",
        ]
        exporter = f"http://127.0.0.1:{port}/metrics"
        import requests

        before = client.get("/metrics").text
        extra_before = requests.get(exporter, timeout=5).text
        uuids = _introspect_all(client, lab, 6)
        scrapes = [client.get("/metrics").text for _ in range(6)]
        counts = {
            metric(s, "ironic_inspector_ironic_call_seconds_count", call="get_node")
            for s in scrapes
        }
        # every API process answers with the values of all of them
        assert len(counts) == 1, counts
        assert (
            counts.pop()
            >= metric(
                before, "ironic_inspector_ironic_call_seconds_count", call="get_node"
            )
            + 6
        )
        assert metric(scrapes[0], "ironic_inspector_conductors_alive") == 4
        assert (
            metric(scrapes[0], "ironic_inspector_introspections", state="waiting") >= 6
        )
        log = extra.log_tail(10**6)
        booted = sum(f"Node {uuid} is booting" in log for uuid in uuids)
        extra_after = requests.get(exporter, timeout=5).text
        name = "ironic_inspector_ironic_call_seconds_count"
        grew = metric(extra_after, name, call="set_boot_device") - metric(
            extra_before, name, call="set_boot_device"
        )
        assert grew == booted, (grew, booted)
        assert "ironic_inspector_lock_wait_seconds_count" in extra_after
        for uuid in uuids:
            client.post(f"/v1/introspection/{uuid}/abort")
    finally:
        extra.stop()
        cluster.conductors.remove(extra)
