"""The dnsmasq PXE filter with real DHCP: a dnsmasq in a network namespace
started by the standalone process's filter, a DHCP client (busybox udhcpc)
taking each machine's MAC, and a real Ironic."""

import pathlib
import random
import signal
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from inspector import exceptions
from lab.machines import dhcp
from lab.machines.dhcp import DhcpSegment, Dnsmasq
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from lab.servers.split_cluster import SplitCluster
from lab.waiting import wait_until
from tests.integration.conftest import (
    Client,
    Lab,
    SplitFactory,
    start,
    start_inspector,
)

SYNC_PERIOD = 2
V121 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.21"}


def unknown_mac() -> str:
    return "52:54:01:" + ":".join(f"{random.randrange(256):02x}" for _ in range(3))


@pytest.fixture
def segment(tmp_path: pathlib.Path) -> Iterator[DhcpSegment]:
    reason = dhcp.missing()
    assert reason is None, reason  # make packages installs what it needs
    with DhcpSegment(tmp_path / "dhcp") as made:
        yield made


def filtered(
    tmp_path: pathlib.Path, ironic: IronicServer, server: Dnsmasq, **processing: str
) -> InspectorServer:
    return start_inspector(
        tmp_path / "inspector",
        ironic,
        options={
            "DEFAULT": {"introspection_delay": "0"},
            "pxe_filter": {"driver": "dnsmasq", "sync_period": str(SYNC_PERIOD)},
            "dnsmasq_pxe_filter": {
                "dhcp_hostsdir": str(server.hostsdir),
                "dnsmasq_start_command": server.start_command(),
                "dnsmasq_stop_command": server.stop_command(),
            },
            "processing": dict(processing),
        },
    )


def answered(segment: DhcpSegment, mac: str, timeout: float = 8) -> str:
    """The offer to ``mac``, asking again while dnsmasq catches up with a
    change (inotify, or a SIGHUP's re-read, take a fraction of a second)."""
    deadline = time.monotonic() + timeout
    while True:
        offer = segment.offered(mac)
        if offer is not None:
            return offer
        assert time.monotonic() < deadline, f"no offer to {mac}"


def refused(segment: DhcpSegment, mac: str, timeout: float = 8) -> None:
    """No server offers ``mac`` (asking again while dnsmasq catches up)."""
    deadline = time.monotonic() + timeout
    while segment.offered(mac) is not None:
        assert time.monotonic() < deadline, f"{mac} still gets offers"


def says(server: Dnsmasq, name: str) -> str | None:
    path = server.hostsdir / name
    return path.read_text().strip() if path.exists() else None


def settle(server: Dnsmasq, mac: str, allowed: bool, timeout: float = 10) -> float:
    """Waits for the filter's entry of ``mac``; the seconds it took."""
    wanted = mac if allowed else f"{mac},ignore"
    started = time.monotonic()
    wait_until(
        lambda: says(server, mac),
        timeout,
        f"{server.name}'s entry {wanted!r}",
        until=wanted.__eq__,
        interval=0.02,
    )
    return time.monotonic() - started


def test_standalone_filter_with_real_dhcp(
    tmp_path: pathlib.Path, ironic: IronicServer, lab: Lab, segment: DhcpSegment
) -> None:
    server = segment.servers[0]
    (first, first_uuid), (second, second_uuid), (third, third_uuid) = (
        lab.machine(enroll_port=True) for _ in range(3)
    )
    stranger = unknown_mac()
    inspector = filtered(tmp_path, ironic, server)
    try:
        # dnsmasq was started by the filter, after its first complete sync
        assert server.running()
        log = inspector.log_tail(10**6)
        assert "PXE filter: dnsmasq started" in log
        client = Client(inspector.url)
        for machine in (first, second):  # known to Ironic, not introspected
            settle(server, machine.pxe_mac, allowed=False)
            refused(segment, machine.pxe_mac)
        refused(segment, stranger)  # nothing runs: unknown denied

        started = time.monotonic()
        start(client, first_uuid)
        took = settle(server, first.pxe_mac, allowed=True)
        offer = answered(segment, first.pxe_mac)
        offered_after = time.monotonic() - started
        assert offer.startswith("192.0.2.")
        refused(segment, second.pxe_mac)  # still denied
        answered(segment, stranger)  # an introspection runs
        print(
            f"\nPXE filter: allowed {took:.2f} s after the start, "
            f"offer {offered_after:.2f} s after it"
        )

        client.wait_for(first_uuid, "waiting")
        resp = client.post("/v1/continue", json=first.payload())
        assert resp.status_code == 200, resp.text
        client.wait_for(first_uuid, "finished")
        settle(server, first.pxe_mac, allowed=False)
        refused(segment, first.pxe_mac)
        refused(segment, stranger)

        # a deleted port follows the unknown-MAC policy
        port = lab.api.request("GET", f"/v1/ports?address={second.pxe_mac}")
        lab.api.request("DELETE", f"/v1/ports/{port['ports'][0]['uuid']}")
        start(client, third_uuid)  # an introspection runs: unknown allowed
        settle(server, second.pxe_mac, allowed=True, timeout=SYNC_PERIOD + 8)
        answered(segment, second.pxe_mac)
        client.post(f"/v1/introspection/{third_uuid}/abort")
        client.wait_for(third_uuid, "error")
        settle(server, second.pxe_mac, allowed=False)
        refused(segment, second.pxe_mac)
        refused(segment, third.pxe_mac)
    finally:
        inspector.stop()
    assert not server.running()  # dnsmasq_stop_command ran
    assert second_uuid


def test_discovery_lets_unknown_machines_boot(
    tmp_path: pathlib.Path, ironic: IronicServer, lab: Lab, segment: DhcpSegment
) -> None:
    server = segment.servers[0]
    known, _uuid = lab.machine(enroll_port=True)
    inspector = filtered(tmp_path, ironic, server, node_not_found_hook="enroll")
    try:
        settle(server, known.pxe_mac, allowed=False)
        answered(segment, unknown_mac())  # discovery: allowed
        refused(segment, known.pxe_mac)  # known: still denied
    finally:
        inspector.stop()


def test_a_hostsdir_that_is_missing_stops_the_start(
    tmp_path: pathlib.Path, ironic: IronicServer
) -> None:
    server = InspectorServer(
        tmp_path / "inspector",
        ironic.url,
        options={
            "pxe_filter": {"driver": "dnsmasq"},
            "dnsmasq_pxe_filter": {"dhcp_hostsdir": str(tmp_path / "nowhere")},
        },
    )
    with pytest.raises(RuntimeError):
        server.start(timeout=20)
    text = server.log_tail(10**6)
    assert "[dnsmasq_pxe_filter]dhcp_hostsdir" in text and "is not a directory" in text
    server.stop()


def both_allow(servers: list[Dnsmasq], mac: str) -> bool:
    return all(says(s, mac) == mac for s in servers)


def test_split_two_dhcp_servers_each_with_its_agent(
    tmp_path: pathlib.Path,
    lab: Lab,
    split_cluster: SplitFactory,
) -> None:
    """Two dnsmasq servers on one segment (disjoint pools), each guarded by
    its own agent, two conductors: a node boots only while it is being
    introspected, from either server; a killed agent leaves its dnsmasq
    denying what it denied."""
    reason = dhcp.missing()
    assert reason is None, reason
    with (
        DhcpSegment(tmp_path / "dhcp", servers=2) as segment,
        split_cluster(
            "pxe_split",
            conductors=2,
            options={
                "DEFAULT": {"introspection_delay": "0"},
                "pxe_filter": {"driver": "dnsmasq", "sync_period": str(SYNC_PERIOD)},
            },
        ) as cluster,
    ):
        agents = [
            cluster.add_pxe_agent(
                f"pxe-agent-{n}",
                {
                    "dnsmasq_pxe_filter": {
                        "dhcp_hostsdir": str(server.hostsdir),
                        "dnsmasq_start_command": server.start_command(),
                        "dnsmasq_stop_command": server.stop_command(),
                    }
                },
            )
            for n, server in enumerate(segment.servers, 1)
        ]
        try:
            _split_scenario(cluster, segment, agents, lab)
        finally:
            for agent in agents:
                agent.stop()


def _split_scenario(
    cluster: SplitCluster, segment: DhcpSegment, agents: list[Any], lab: Lab
) -> None:
    servers = segment.servers
    assert all(s.running() for s in servers)  # each started by its agent
    client = Client(cluster.url)
    nodes = [lab.machine(enroll_port=True) for _ in range(13)]
    (first, first_uuid), (second, _), (third, third_uuid) = nodes[:3]
    for machine, _uuid in nodes:
        for server in servers:
            settle(server, machine.pxe_mac, allowed=False)
    refused(segment, first.pxe_mac)  # denied by both servers

    # convergence: from the 202 of a start to both agents allowing the node
    took = []
    for machine, uuid in nodes[3:]:
        started = time.monotonic()
        start(client, uuid)
        wait_until(
            lambda: both_allow(servers, machine.pxe_mac),  # noqa: B023
            10,
            f"both agents to allow {machine.pxe_mac}",
            interval=0.01,
        )
        took.append(time.monotonic() - started)
        client.post(f"/v1/introspection/{uuid}/abort")
    took.sort()
    print(
        f"\nPXE filter, 2 agents: start -> both allow p50 {took[len(took) // 2]:.2f} "
        f"s, max {took[-1]:.2f} s over {len(took)} starts"
    )
    assert took[-1] < 2.0

    start(client, first_uuid)
    wait_until(
        lambda: both_allow(servers, first.pxe_mac),
        10,
        f"both agents to allow {first.pxe_mac}",
        interval=0.01,
    )
    answered(segment, first.pxe_mac)
    refused(segment, second.pxe_mac)  # known, not introspected
    client.wait_for(first_uuid, "waiting")
    assert client.post("/v1/continue", json=first.payload()).status_code == 200
    client.wait_for(first_uuid, "finished", timeout=30)
    for server in servers:
        settle(server, first.pxe_mac, allowed=False)
    refused(segment, first.pxe_mac)

    views = client.get("/v1/pxe-filters", headers=V121).json()["pxe_filters"]
    mine = {v["host"]: v for v in views}
    assert mine["pxe-agent-1"]["healthy"] and mine["pxe-agent-2"]["healthy"], mine

    # agent 1 dies: its dnsmasq keeps denying what it denied
    agents[0].signal(signal.SIGKILL)
    agents[0].wait_exit(10)
    start(client, third_uuid)
    settle(servers[1], third.pxe_mac, allowed=True)
    assert says(servers[0], third.pxe_mac) == f"{third.pxe_mac},ignore"
    assert _in_pool(answered(segment, third.pxe_mac), servers[1])  # only server 2
    refused(segment, second.pxe_mac)

    # a deleted port follows the unknown policy (an introspection runs)
    port = lab.api.request("GET", f"/v1/ports?address={second.pxe_mac}")
    lab.api.request("DELETE", f"/v1/ports/{port['ports'][0]['uuid']}")
    settle(servers[1], second.pxe_mac, allowed=True, timeout=SYNC_PERIOD + 8)
    assert _in_pool(answered(segment, second.pxe_mac), servers[1])
    client.post(f"/v1/introspection/{third_uuid}/abort")

    def agent_one_unhealthy() -> bool:
        views = client.get("/v1/pxe-filters", headers=V121).json()["pxe_filters"]
        return not {v["host"]: v for v in views}["pxe-agent-1"]["healthy"]

    wait_until(
        agent_one_unhealthy, 20, "the dead agent to look unhealthy", interval=0.5
    )


def _in_pool(address: str, server: Dnsmasq) -> bool:
    last = int(address.rsplit(".", 1)[1])
    low, high = (int(a.rsplit(".", 1)[1]) for a in server.pool)
    return low <= last <= high


def test_iptables_backend_with_real_dhcp(segment: DhcpSegment) -> None:
    """The iptables driver's chain in the DHCP server's namespace: one
    iptables-restore batch per change, real DHCP through it."""
    from inspector.pxe_filter import policy
    from inspector.pxe_filter.iptables import Chain

    server = segment.servers[0]
    subprocess.run(server.start_command(), shell=True, check=True, timeout=30)
    chain = Chain(
        "eth0", "ironic-inspector", prefix=("ip", "netns", "exec", server.namespace)
    )
    with pytest.raises(exceptions.ConfigError, match="br-nowhere is not an interface"):
        Chain("br-nowhere", "x", prefix=chain.prefix).check()
    chain.check()
    chain.prepare()
    chain.prepare()  # idempotent: one jump, an empty chain
    allowed, known, stranger = (unknown_mac() for _ in range(3))
    booting = policy.decide(
        frozenset({allowed}), frozenset({allowed, known}), True, False, False
    )
    assert chain.apply(booting) == 3
    answered(segment, allowed)
    refused(segment, known)
    answered(segment, stranger)  # an introspection runs
    idle = policy.decide(frozenset(), frozenset({allowed, known}), False, False, False)
    assert chain.apply(idle) == 2
    assert chain.apply(idle) == 0  # nothing changed: no batch
    refused(segment, allowed)
    refused(segment, stranger)
    rules = subprocess.run(
        [*chain.prefix, "iptables", "-S"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert (
        rules.count("-A INPUT -i eth0 -p udp -m udp --dport 67 -j ironic-inspector")
        == 1
    )
    assert (
        f"-A ironic-inspector -m mac --mac-source {known.upper()} -j DROP" in rules
        or (f"-A ironic-inspector -m mac --mac-source {known} -j DROP" in rules)
    )
    assert rules[-1] == "-A ironic-inspector -j DROP"


def test_single_hosts_file_with_real_dhcp(tmp_path: pathlib.Path) -> None:
    """dhcp_hostsfile: one file, rewritten whole, dnsmasq reloaded by SIGHUP."""
    from inspector.pxe_filter import policy
    from inspector.pxe_filter.hostsfile import HostsFile

    with DhcpSegment(tmp_path / "dhcp", hostsfile=True) as segment:
        server = segment.servers[0]
        subprocess.run(server.start_command(), shell=True, check=True, timeout=30)
        backend = HostsFile(str(server.hostsfile), str(server.pid_file))
        backend.check()
        backend.prepare()
        allowed, known, stranger = (unknown_mac() for _ in range(3))
        macs = frozenset({allowed, known})
        backend.apply(policy.decide(frozenset({allowed}), macs, True, False, False))
        assert backend.reloads == 1
        answered(segment, allowed)
        refused(segment, known)
        answered(segment, stranger)
        backend.apply(policy.decide(frozenset(), macs, False, False, False))
        refused(segment, allowed)
        refused(segment, stranger)
        assert server.hostsfile.read_text().splitlines()[-1] == "*:*:*:*:*:*,ignore"


def test_entries_of_deleted_ports_are_compacted(tmp_path: pathlib.Path) -> None:
    """dnsmasq keeps a deleted file's record until SIGHUP: with its pid
    file, the filter removes the entries of deleted ports and reloads it;
    the MAC then follows the wildcard, as before the removal."""
    from inspector.pxe_filter import policy
    from inspector.pxe_filter.dnsmasq import HostsDir

    with DhcpSegment(tmp_path / "dhcp") as segment:
        server = segment.servers[0]
        gone, kept = unknown_mac(), unknown_mac()
        backend = HostsDir(str(server.hostsdir), True, str(server.pid_file))
        backend.prepare()
        backend.apply(
            policy.decide(frozenset(), frozenset({gone, kept}), False, False, False)
        )
        subprocess.run(server.start_command(), shell=True, check=True, timeout=30)
        refused(segment, gone)
        # gone's port is deleted while an introspection runs: unknown allowed
        backend.apply(policy.decide(frozenset(), frozenset({kept}), True, False, False))
        answered(segment, gone)
        assert backend.compact() == 1
        assert not (server.hostsdir / gone).exists() and gone not in backend.written
        answered(segment, gone)  # the wildcard allows it
        refused(segment, kept)
        assert backend.compact() == 0
