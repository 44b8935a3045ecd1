"""One source of truth for conductors: after every change, made through any
interface, the HTTP view, the CLI view and the routing decision agree.
Split mode on etcd and on Redis, casts on RabbitMQ, and on etcd with casts
on JSON-RPC (the standalone shape: functional tests)."""

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lab.servers.split_cluster import SplitCluster
from tests.integration.conftest import (
    MEMBERSHIP_TIMEOUT,
    Client,
    Lab,
    SplitFactory,
    introspect,
    kill,
    wait_for_router,
    wait_until,
)

V119 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.19"}
BIN = Path(sys.executable).parent


@pytest.fixture(
    scope="module",
    params=[("etcd", "oslo"), ("redis", "oslo"), ("etcd", "json-rpc")],
    ids=["etcd", "redis", "etcd-json-rpc"],
)
def cluster(
    request: pytest.FixtureRequest, split_cluster: SplitFactory
) -> Iterator[SplitCluster]:
    coordination, transport = request.param
    with split_cluster(
        f"group_{coordination}_{transport.replace('-', '_')}",
        coordination=coordination,
        rpc_transport=transport,
        options={"DEFAULT": {"introspection_delay": "0"}},
    ) as split:
        yield split


def http_view(client: Client) -> dict[str, tuple[bool, bool, Any]]:
    resp = client.get("/v1/conductors", headers=V119)
    assert resp.status_code == 200, resp.text
    return {
        c["hostname"]: (c["alive"], c["enabled"], c["disabled_reason"])
        for c in resp.json()["conductors"]
    }


def manage(cluster: SplitCluster, *args: str) -> subprocess.CompletedProcess[str]:
    assert cluster.api is not None
    return subprocess.run(
        [
            str(BIN / "ironic-inspector-manage"),
            "--config-file",
            str(cluster.api.config_file),
            "conductor",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


def cli_view(cluster: SplitCluster) -> dict[str, tuple[bool, bool, Any]]:
    result = manage(cluster, "list", "--json")
    assert result.returncode == 0, result.stderr
    return {
        c["hostname"]: (c["alive"], c["enabled"], c["disabled_reason"])
        for c in json.loads(result.stdout)
    }


def routed(client: Client, lab: Lab, cluster: SplitCluster, count: int) -> set[str]:
    """Hosts that booted ``count`` new introspections (then aborted)."""
    nodes = lab.machines(count)
    introspect(client, *nodes, until="waiting")
    logs = {c.host: c.log_tail(10**6) for c in cluster.conductors}
    hosts = set()
    for _machine, uuid in nodes:
        hosts |= {
            host for host, log in logs.items() if f"Node {uuid} is booting" in log
        }
        client.post(f"/v1/introspection/{uuid}/abort")
    return hosts


def agree(
    client: Client, cluster: SplitCluster, until: Any = None, timeout: float = 15
) -> dict[str, Any]:
    """HTTP and CLI show the same conductors; with ``until``, once the view
    satisfies it (a death shows after the membership timeout).

    The wait for ``until`` looks at the HTTP view alone (a request): each
    look at the CLI's is a new Python process, ~1 s of CPU.
    """
    if until is not None:
        wait_until(
            lambda: http_view(client),
            timeout,
            "the HTTP view to satisfy the condition",
            until=until,
            interval=0.2,
        )
    http, _cli = wait_until(
        lambda: (http_view(client), cli_view(cluster)),
        timeout,
        "the HTTP and CLI views to agree"
        + (" and satisfy the condition" if until else ""),
        until=lambda views: views[0] == views[1] and (until is None or until(views[0])),
        interval=0.5,
    )
    return http


def routable(view: dict[str, Any]) -> set[str]:
    return {h for h, (alive, enabled, _r) in view.items() if alive and enabled}


def routes_around(
    client: Client, lab: Lab, cluster: SplitCluster, hosts: set[str]
) -> None:
    """Waits until the API's routing (behind its member cache) sends new
    work only to ``hosts``: probes of two introspections, until two probes
    in a row do."""
    seen: list[set[str]] = []

    def probes() -> list[set[str]]:
        seen.append(routed(client, lab, cluster, 2))
        return seen[-2:]

    wait_until(
        probes,
        30,
        f"two probes in a row to route only to {sorted(hosts)}",
        until=lambda last: len(last) == 2 and all(probe <= hosts for probe in last),
        interval=0,
    )


def refused_start(client: Client, lab: Lab, timeout: float = 10) -> Any:
    """Starts new introspections until the API refuses one (while its member
    cache is behind, one may still be accepted); the refusal."""
    accepted: list[str] = []

    def start_one() -> tuple[Any, list[str]]:
        _machine, uuid = lab.machine()
        resp = client.post(f"/v1/introspection/{uuid}")
        if resp.status_code == 202:
            accepted.append(uuid)
        return resp, list(accepted)

    refused, _accepted = wait_until(
        start_one,
        timeout,
        "the API to refuse a start (last seen: the answer, the starts accepted)",
        until=lambda answer: answer[0].status_code != 202,
        interval=0.1,
    )
    return refused


def test_views_and_routing_agree(cluster: SplitCluster, lab: Lab) -> None:
    client = Client(cluster.url)
    c1, c2, c3 = (c.host for c in cluster.conductors)
    view = agree(client, cluster)
    assert view == {h: (True, True, None) for h in (c1, c2, c3)}
    first = cluster.conductors[0]
    assert "last_heartbeat" in client.get(f"/v1/conductors/{c1}", headers=V119).json()

    # disable through HTTP: the CLI sees it, and no new work goes there
    resp = client.patch(
        f"/v1/conductors/{c1}",
        headers=V119,
        json={"enabled": False, "disabled_reason": "maintenance"},
    )
    assert resp.status_code == 200, resp.text
    assert "warning" not in resp.json()
    view = agree(client, cluster)
    assert view[c1] == (True, False, "maintenance")
    # the API routes by its member cache (1 s): probe until it leaves c1 out
    routes_around(client, lab, cluster, {c2, c3})
    assert routed(client, lab, cluster, 8) <= routable(view) == {c2, c3}
    assert first.pid is not None  # drained, not stopped

    # enable through the CLI: HTTP sees it, work may go there again
    assert manage(cluster, "enable", c1).returncode == 0
    view = agree(client, cluster)
    assert view[c1] == (True, True, None)

    # disable through the CLI with a reason
    result = manage(cluster, "disable", c2, "--reason", "disk swap")
    assert result.returncode == 0 and "disabled (disk swap)" in result.stdout
    view = agree(client, cluster)
    assert view[c2] == (True, False, "disk swap")

    # a clean stop: gone from the group, and from the view (it had no state)
    cluster.conductors[2].stop()
    view = agree(client, cluster, until=lambda v: c3 not in v)
    assert c3 not in view

    # a disabled conductor dies: still listed (its state stays), not alive
    kill(cluster.conductors[1])
    view = agree(
        client, cluster, until=lambda v: not v[c2][0], timeout=MEMBERSHIP_TIMEOUT + 15
    )
    assert view[c2] == (False, False, "disk swap")
    assert routable(view) == {c1}
    wait_for_router(client, alive=1)  # c2's death has reached the API's cache
    assert routed(client, lab, cluster, 3) == {c1}

    # it comes back under the same name: alive, and still disabled
    cluster.conductors[1] = cluster.add_conductor(c2)
    cluster.conductors.pop()  # add_conductor appended it too
    view = agree(client, cluster, until=lambda v: v[c2][0])
    assert view[c2] == (True, False, "disk swap")

    # disabling the last enabled one: allowed, with a warning; nothing starts
    resp = client.patch(f"/v1/conductors/{c1}", headers=V119, json={"enabled": False})
    assert resp.status_code == 200
    assert "last enabled conductor" in resp.json()["warning"]
    refused = refused_start(client, lab)
    assert refused.status_code == 503
    message = refused.json()["error"]["message"]
    assert "no conductor is available" in message  # which ones: the log's
    assert c1 not in message and c2 not in message
    for host in (c1, c2):
        assert manage(cluster, "enable", host).returncode == 0
    assert routable(agree(client, cluster)) == {c1, c2}

    # enabled again, then a clean stop: gone, as if never disabled (it
    # used to stay listed as dead until `conductor forget`)
    cluster.conductors[1].stop()
    view = agree(client, cluster, until=lambda v: c2 not in v)
    assert c2 not in view


def test_unknown_conductor_and_old_versions(cluster: SplitCluster) -> None:
    client = Client(cluster.url)
    resp = client.patch("/v1/conductors/nobody", headers=V119, json={"enabled": False})
    assert resp.status_code == 404
    assert resp.json()["error"]["message"] == "Conductor nobody was not found"
    result = manage(cluster, "disable", "nobody")
    assert result.returncode == 1 and "Conductor nobody was not found" in result.stderr
    old = client.get(
        "/v1/conductors", headers={"X-OpenStack-Ironic-Inspector-API-Version": "1.18"}
    )
    assert old.status_code == 404
    names = [
        r["name"]
        for r in client.get(
            "/v1", headers={"X-OpenStack-Ironic-Inspector-API-Version": "1.18"}
        ).json()["resources"]
    ]
    assert "conductors" not in names
    bad = client.patch("/v1/conductors/x", headers=V119, json={"enabled": "no"})
    assert bad.status_code == 400
