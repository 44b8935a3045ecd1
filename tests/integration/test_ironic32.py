"""Ironic 32.1 drives the service through its ``inspector`` inspect interface,
the path every Ironic up to 32 takes (issue 48).

A real Ironic 32.1 (PyPI ``ironic==32.1.0`` with ``oslo.service==4.3.0``,
in a virtualenv of its own) whose nodes default to the ``inspector``
interface, its ``[inspector]endpoint_override`` naming the service by a host
name (Ironic refuses a loopback address as the ramdisk's callback, not a
name that resolves to one): ``openstack baremetal node inspect`` as the API
calls it makes, for the standalone service and for a split cluster (an API
and two conductors). Eight nodes at once end ``manageable`` with Ironic's
copy of our processed data as their inventory; a ramdisk error ends
``inspect failed`` with our message in ``last_error``; an abort in ``inspect
wait`` reaches our abort; a ramdisk posting to Ironic's own
``/v1/continue_inspection`` is forwarded to us and finishes. Last, Ironic's
``[inspector]`` with keystone authentication as Kolla-Ansible writes it
(the endpoint found in the catalog), the service under keystonemiddleware.
"""

import contextlib
import dataclasses
import itertools
import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from lab.machines import hardware
from lab.machines.enroll import IronicAPI, enroll
from lab.machines.ramdisk import RamdiskPlayer
from lab.servers import loopback
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from lab.servers.keystone_standin import REGION, KeystoneStandin
from lab.venvs import default_cache_dir
from lab.waiting import wait_until
from tests.integration.conftest import Client, Node, split_factory

RELEASE = "32.1"
INVENTORY_API = {"X-OpenStack-Ironic-API-Version": "1.81"}
"""The first version with ``GET /v1/nodes/<node>/inventory``."""
FAILED = "ironic-inspector inspection failed: "
"""What Ironic's inspector interface puts before our error in last_error."""
TIMEOUT = 120
"""Seconds for Ironic to end an inspection (it looks every 2 s) on a loaded
machine."""

_indexes = itertools.count(1)


@dataclasses.dataclass
class Deployment:
    """Ironic 32.1 and the service it drives, in one shape."""

    shape: str
    ironic: IronicServer
    api: IronicAPI
    client: Client
    ramdisk_url: str
    """Where the ramdisks post: the service's API."""

    def enroll(self, count: int, behaviour: str = "normal") -> list[Node]:
        machines = [
            hardware.make_machine(next(_indexes), seed=32, behaviour=behaviour)
            for _ in range(count)
        ]
        uuids = enroll(self.api, machines)
        return [(machine, uuids[machine.name]) for machine in machines]

    @contextlib.contextmanager
    def ramdisks(self, nodes: list[Node]) -> Iterator[RamdiskPlayer]:
        """The ramdisks of ``nodes`` boot when the service powers them on."""
        player = RamdiskPlayer(
            self.api, self.ramdisk_url, [m for m, _ in nodes], poll_interval=0.5
        )
        player.start()
        try:
            yield player
        finally:
            player.stop()

    def inspect(self, nodes: list[Node]) -> None:
        """``openstack baremetal node inspect`` of every node."""
        for _machine, uuid in nodes:
            self.api.request(
                "PUT", f"/v1/nodes/{uuid}/states/provision", json={"target": "inspect"}
            )

    def wait_provision(
        self, nodes: list[Node], state: str, timeout: float = TIMEOUT
    ) -> dict[str, dict[str, Any]]:
        """Every node's Ironic record once all are in ``state``; a node in
        another final state fails at once."""
        uuids = {uuid for _m, uuid in nodes}
        final = {"manageable", "inspect failed"} - {state}

        def look() -> dict[str, dict[str, Any]]:
            found = {
                n["uuid"]: n
                for n in self.api.nodes("uuid,provision_state,last_error")
                if n["uuid"] in uuids
            }
            wrong = [n for n in found.values() if n["provision_state"] in final]
            assert not wrong, (wrong, self.logs())
            return found

        return wait_until(
            look,
            timeout,
            f"{len(uuids)} nodes to reach {state!r} in Ironic",
            until=lambda found: all(
                n["provision_state"] == state for n in found.values()
            ),
            interval=0.5,
        )

    def inventory(self, uuid: str) -> dict[str, Any]:
        """Ironic's copy of the node's inspection data."""
        body: dict[str, Any] = self.api.request(
            "GET", f"/v1/nodes/{uuid}/inventory", headers=INVENTORY_API
        )
        return body

    def logs(self) -> str:
        return self.ironic.log_tail()


def ironic32(work_dir: pathlib.Path) -> IronicServer:
    return IronicServer(default_cache_dir(), work_dir, release=RELEASE)


@pytest.fixture(scope="module")
def named() -> tuple[str, str] | None:
    """A host name of a loopback address other than ``localhost``."""
    return loopback.named_loopback()


@pytest.fixture(scope="module", params=["standalone", "split"])
def deployment(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    named: tuple[str, str] | None,
) -> Iterator[Deployment]:
    """Ironic 32.1 whose ``[inspector]`` names the service as an operator
    would (``endpoint_override``, ``auth_type = none``), by a host name."""
    host, address = named or ("localhost", "127.0.0.1")
    ironic = ironic32(tmp_path_factory.mktemp(f"ironic32-{request.param}"))
    with contextlib.ExitStack() as stack:
        if request.param == "standalone":
            server = InspectorServer(
                tmp_path_factory.mktemp("inspector"), ironic.url, address=address
            )
            server.start()
            stack.callback(lambda: _stopped(server))
            url, port = server.url, server.port
        else:
            make = split_factory(
                ironic.url, request.getfixturevalue("postgres"), tmp_path_factory
            )
            cluster = stack.enter_context(
                make("ironic32", conductors=2, api_address=address)
            )
            url, port = cluster.url, cluster.api.port if cluster.api else 0
        ironic.extra_config = {
            "inspector": {"endpoint_override": f"http://{host}:{port}"}
        }
        ironic.start()
        stack.callback(ironic.stop)
        yield Deployment(request.param, ironic, IronicAPI(ironic.url), Client(url), url)


def _stopped(server: InspectorServer) -> None:
    assert server.stop() == 0, server.log_tail()


def test_many_nodes_at_once(deployment: Deployment) -> None:
    nodes = deployment.enroll(8)
    with deployment.ramdisks(nodes) as player:
        deployment.inspect(nodes)
        ended = deployment.wait_provision(nodes, "manageable")
    assert all(not n["last_error"] for n in ended.values()), ended
    assert sorted(c.status for c in player.callbacks) == [200] * 8, player.callbacks
    for machine, uuid in nodes:
        status = deployment.client.get(f"/v1/introspection/{uuid}").json()
        assert status["finished"] and status["error"] is None, status
        properties = deployment.api.node(uuid)["properties"]
        assert properties["cpus"] == machine.cpus
        assert properties["memory_mb"] == machine.memory_mb
        # what Ironic copied from our processed data when it saw us finish
        copied = deployment.inventory(uuid)
        assert copied["inventory"]["bmc_address"] == machine.bmc_address
        assert copied["inventory"]["cpu"] == machine.inventory["cpu"]
        ours = deployment.client.get(f"/v1/introspection/{uuid}/data").json()
        assert copied["plugin_data"]["all_interfaces"] == ours["all_interfaces"]
        assert copied["plugin_data"]["root_disk"] == ours["root_disk"]


def test_ramdisk_error_fails_inspection(deployment: Deployment) -> None:
    nodes = deployment.enroll(1, behaviour="error")
    ((_machine, uuid),) = nodes
    with deployment.ramdisks(nodes):
        deployment.inspect(nodes)
        ended = deployment.wait_provision(nodes, "inspect failed")
    status = deployment.client.get(f"/v1/introspection/{uuid}").json()
    assert status["error"].startswith("Ramdisk reported error: "), status
    assert ended[uuid]["last_error"] == FAILED + status["error"]


def test_abort_in_inspect_wait(deployment: Deployment) -> None:
    nodes = deployment.enroll(1, behaviour="silent")
    ((_machine, uuid),) = nodes
    with deployment.ramdisks(nodes):
        deployment.inspect(nodes)
        deployment.wait_provision(nodes, "inspect wait")
        # Ironic starts ours from a thread once the node waits
        deployment.client.wait_for(uuid, "waiting", timeout=60)
        deployment.api.request(
            "PUT", f"/v1/nodes/{uuid}/states/provision", json={"target": "abort"}
        )
        deployment.wait_provision(nodes, "inspect failed")
    status = deployment.client.wait_for(uuid, "error")
    assert status["error"] == "Canceled by operator", status
    wait_until(
        lambda: deployment.api.node(uuid)["power_state"],
        30,
        f"{uuid} powered off by the aborted introspection",
        until="power off".__eq__,
        interval=0.5,
    )


def test_ramdisk_posts_to_ironic(
    deployment: Deployment, named: tuple[str, str] | None
) -> None:
    """IPA configured with Ironic's own callback URL, which the inspector
    interface forwards to the service's /v1/continue."""
    if named is None:
        pytest.skip(
            "no host name other than localhost resolves to a loopback address "
            "here, and Ironic forwards to no loopback callback address"
        )
    nodes = deployment.enroll(1)
    ((machine, uuid),) = nodes
    deployment.inspect(nodes)  # no ramdisk posts to the service itself
    deployment.client.wait_for(uuid, "waiting", timeout=60)
    answer = requests.post(
        deployment.ironic.url + "/v1/continue_inspection",
        json=machine.payload(),
        timeout=60,
    )
    # IPA sends no version header: the answer names the node only
    assert answer.status_code == 202, answer.text
    assert answer.json() == {"uuid": uuid}
    deployment.wait_provision(nodes, "manageable")
    status = deployment.client.get(f"/v1/introspection/{uuid}").json()
    assert status["finished"] and status["error"] is None, status
    copied = deployment.inventory(uuid)
    assert copied["inventory"]["bmc_address"] == machine.bmc_address


def test_keystone_as_kolla_writes_it(
    tmp_path: pathlib.Path, named: tuple[str, str] | None
) -> None:
    """Ironic's ``[inspector]`` authenticates as the inspector's service
    user and finds the service's internal endpoint in the catalog; the
    service validates that token (keystonemiddleware, as Kolla-Ansible
    configures it) and lets the service role start, read and fetch."""
    host, address = named or ("localhost", "127.0.0.1")
    keystone = KeystoneStandin("ironic-inspector", "inspector-service-password")
    ironic = ironic32(tmp_path / "ironic")
    server = InspectorServer(
        tmp_path / "inspector",
        ironic.url,
        address=address,
        options={
            "DEFAULT": {"auth_strategy": "keystone"},
            "keystone_authtoken": {
                "www_authenticate_uri": keystone.url,
                "auth_url": keystone.url,
                "auth_type": "password",
                "project_domain_id": "default",
                "user_domain_id": "default",
                "project_name": "service",
                "username": keystone.username,
                "password": keystone.password,
            },
        },
    )
    keystone.services["baremetal-introspection"] = f"http://{host}:{server.port}"
    ironic.extra_config = {
        "inspector": {
            "auth_url": keystone.url,
            "auth_type": "password",
            "project_domain_id": "default",
            "user_domain_id": "default",
            "project_name": "service",
            "username": keystone.username,
            "password": keystone.password,
            "region_name": REGION,
            "valid_interfaces": "internal",
        }
    }
    with contextlib.ExitStack() as stack:
        stack.enter_context(keystone)
        server.start()
        stack.callback(lambda: _stopped(server))
        ironic.start()
        stack.callback(ironic.stop)
        client = Client(server.url)
        client.http.headers["X-Auth-Token"] = keystone.issue("operator", ["admin"])
        deployment = Deployment(
            "keystone", ironic, IronicAPI(ironic.url), client, server.url
        )
        nodes = deployment.enroll(1)
        ((machine, uuid),) = nodes
        with deployment.ramdisks(nodes):
            deployment.inspect(nodes)
            deployment.wait_provision(nodes, "manageable")
        status = client.get(f"/v1/introspection/{uuid}").json()
        assert status["finished"] and status["error"] is None, status
        copied = deployment.inventory(uuid)
        assert copied["inventory"]["bmc_address"] == machine.bmc_address
    # Ironic's calls came with tokens of the service user, which the
    # service had validated (the operator's is not one of them)
    service_tokens = {
        token
        for token, body in keystone.tokens.items()
        if body["user"]["name"] == keystone.username
    }
    assert service_tokens & set(keystone.validations), keystone.validations
