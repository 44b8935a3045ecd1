"""containers/kube/inspector.yaml under ``podman kube play`` (runc,
containers/containers.conf): the split shape from the images of ``make
image`` against the lab's real etcd, RabbitMQ, PostgreSQL and Ironic, given
as the manifest's ConfigMap options and Secret URLs. Machines are
introspected through the API pod; a conductor container killed while it
owns a start, and that start still ends finished. dnsmasq is left out of
the PXE filter pod (no image of it is built here); its agent runs."""

import os
import shutil
import time
from collections.abc import Iterator

import pytest
import requests
import sqlalchemy as sa

from lab.machines.ramdisk import RamdiskPlayer
from lab.servers import loopback
from lab.servers.container import RUNTIME
from lab.servers.container_kube import KubePlay
from lab.servers.etcd import EtcdServer
from lab.servers.ironic import IronicServer
from lab.servers.postgres import PostgresServer
from lab.servers.rabbitmq import RabbitMQServer
from lab.waiting import wait_until
from tests.integration.conftest import Client, Lab, start, wait_for_router
from tools import images

pytestmark = pytest.mark.skipif(
    not (shutil.which("podman") and shutil.which("mmdebstrap"))
    or not os.path.exists(RUNTIME)
    or os.geteuid() != 0,
    reason="podman, runc or mmdebstrap is missing (make packages installs "
    "them), or not root (the lab runs podman rootful)",
)

DELAY = 3
"""Seconds between power-ons: a start waiting for its slot is owned work."""

CONDUCTORS = ("inspector-conductor-pod-0", "inspector-conductor-pod-1")
AGENT = "inspector-pxe-filter-pod-0"
V121 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.21"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The split shape's images (the base rootfs comes from the lab's cache)."""
    started = time.monotonic()
    ids = images.build(
        ("api", "conductor", "pxe-filter"), tmp_path_factory.mktemp("image")
    )
    print(f"\nimages built in {time.monotonic() - started:.0f} s")
    return ids


@pytest.fixture(scope="module")
def backends(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[EtcdServer, RabbitMQServer]]:
    work = tmp_path_factory.mktemp("kube-backends")
    etcd = EtcdServer(work / "etcd", in_memory=True)
    rabbit = RabbitMQServer(work / "rabbitmq")
    try:
        started = time.monotonic()
        etcd.start()
        rabbit.start(90)
        print(f"\netcd and RabbitMQ up in {time.monotonic() - started:.0f} s")
        yield etcd, rabbit
    finally:
        rabbit.stop()
        etcd.close()


@pytest.fixture(scope="module")
def played(
    built: dict[str, str],
    backends: tuple[EtcdServer, RabbitMQServer],
    ironic: IronicServer,
    postgres: PostgresServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[KubePlay]:
    etcd, rabbit = backends
    postgres.create_database("inspector_kube")
    database = postgres.url.rsplit("/", 1)[0] + "/inspector_kube"
    port = loopback.free_port()
    kube = KubePlay(
        tmp_path_factory.mktemp("kube"),
        options={
            "DEFAULT": {
                "listen_address": "127.0.0.1",
                "listen_port": str(port),
                "introspection_delay": str(DELAY),
            },
            "ironic": {
                "endpoint_override": ironic.url,
                "retry_interval": "0.2",
                "max_retries": "30",
            },
            "coordination": {
                "member_cache_seconds": "1",
                "sweep_interval": "1",
                "leader_lease": "3",
                "claim_timeout": "5",
            },
        },
        secrets={
            "database-connection": database,
            "transport-url": rabbit.url,
            "coordination-backend-url": etcd.tooz_url(membership_timeout=3, timeout=10),
        },
        api_port=port,
        leave_out=("dnsmasq",),
    )
    kube.render()
    try:
        started = time.monotonic()
        kube.play()
        played_in = time.monotonic() - started
        client = Client(f"http://127.0.0.1:{port}")
        wait_until(
            lambda: client.get("/healthcheck").status_code == 200,
            120,
            "the API pod to answer",
            ignoring=requests.ConnectionError,
            interval=0.5,
        )
        wait_for_router(client, alive=len(CONDUCTORS), timeout=120)
        print(f"\nkube play took {played_in:.0f} s; the API and "
              f"{len(CONDUCTORS)} conductors up {time.monotonic() - started:.0f} s "
              "after it began")  # fmt: skip
        yield kube
    finally:
        kube.save_logs()
        kube.down()


@pytest.fixture
def client(played: KubePlay) -> Client:
    return Client(f"http://127.0.0.1:{played.api_port}")


def test_pods_run_the_manifest(played: KubePlay, client: Client) -> None:
    assert set(played.pods()) == {"inspector-api-pod-0", *CONDUCTORS, AGENT}
    for host in CONDUCTORS:  # [DEFAULT]host from the pod's name (fieldRef)
        log = played.logs(played.container(host, "conductor"))
        assert f"ironic-inspector-conductor {host} started" in log, log[-3000:]
    health = client.get("/healthcheck")
    assert health.status_code == 200, health.text
    filters = client.get("/v1/pxe-filters", headers=V121).json()["pxe_filters"]
    assert [f["host"] for f in filters] == [AGENT], filters


def test_introspection_through_the_pods(
    played: KubePlay, client: Client, lab: Lab
) -> None:
    nodes = [lab.machine(enroll_port=True) for _ in range(3)]
    player = RamdiskPlayer(lab.api, client.url, [m for m, _ in nodes])
    player.start()
    try:
        for _machine, uuid in nodes:
            start(client, uuid)
        # the agent allows the PXE MAC of a node being introspected: its
        # file in the hostsdir dnsmasq would read says so
        machine, uuid = nodes[0]
        entry = wait_until(
            lambda: played.podman(
                "exec", played.container(AGENT, "pxe-filter"), "cat",
                f"/var/lib/ironic-inspector/dhcp-hostsdir/{machine.pxe_mac}",
            ).stdout.strip(),
            20,
            f"the agent to allow {machine.pxe_mac}",
            until=machine.pxe_mac.__eq__,
            interval=0.5,
        )  # fmt: skip
        statuses = [
            client.wait_for(u, "finished", "error", timeout=90) for _m, u in nodes
        ]
    finally:
        player.stop()
    for status in statuses:
        assert status["state"] == "finished", status
    assert entry == machine.pxe_mac
    assert lab.api.node(uuid)["properties"]["cpus"] == machine.cpus


def _owned_and_waiting(
    db: sa.engine.Engine, uuids: list[str], lab: Lab
) -> tuple[str, str] | None:
    """A node a conductor owns while it waits for its power-on slot."""
    power = {u: lab.api.node(u)["power_state"] for u in uuids}
    if "power on" not in power.values():
        return None
    with db.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT uuid, state, owner FROM introspections WHERE uuid = ANY(:uuids)"
            ),
            {"uuids": uuids},
        ).all()
    for row in rows:
        if row.state == "starting" and row.owner and power[row.uuid] != "power on":
            return row.uuid, row.owner.split("/")[0]
    return None


def test_killed_conductor_container_work_is_taken_over(
    played: KubePlay, client: Client, lab: Lab, postgres: PostgresServer
) -> None:
    nodes = lab.machines(4)
    uuids = [uuid for _m, uuid in nodes]
    db = sa.create_engine(postgres.url.rsplit("/", 1)[0] + "/inspector_kube")
    player = RamdiskPlayer(lab.api, client.url, [m for m, _ in nodes])
    player.start()
    try:
        for uuid in uuids:
            start(client, uuid)
        found: list[tuple[str, str]] = []

        def owned() -> bool:
            one = _owned_and_waiting(db, uuids, lab)
            if one:
                found.append(one)
            return bool(one)

        wait_until(owned, 30, "a conductor to own a start waiting for its slot")
        uuid, host = found[0]
        victim = played.container(host, "conductor")
        killed = played.podman("kill", victim)
        assert killed.returncode == 0, killed.stderr
        killed_at = time.monotonic()
        statuses = [client.wait_for(u, "finished", "error", timeout=90) for u in uuids]
        took = time.monotonic() - killed_at
        state = played.podman(
            "inspect", "--format", "{{.State.Status}} {{.RestartCount}}", victim
        ).stdout.strip()
    finally:
        player.stop()
        db.dispose()
    for status in statuses:
        assert status["state"] == "finished", status
    resumed = [
        name
        for name in CONDUCTORS
        if f"Resuming the starting step of node {uuid}"
        in played.logs(played.container(name, "conductor"))
    ]
    print(f"\n{host} killed owning {uuid}; resumed by {resumed}; all finished "
          f"{took:.0f} s after the kill; the killed container: {state} "
          "(status, restarts)")  # fmt: skip
    assert resumed, [
        played.logs(played.container(n, "conductor"))[-2000:] for n in CONDUCTORS
    ]
