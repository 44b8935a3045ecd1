"""The cabling view: links, duplicate ports, PXE NICs without a
neighbour, and NICs not where the expected cabling says."""

from typing import Any

from inspector.fleet import cabling, expected


def _nic(mac: str, port: str | None, *, pxe: bool = True, name: str = "eno1") -> Any:
    switch = None if port is None else "00:1c:73:00:00:01"
    return {
        "mac": mac,
        "name": name,
        "pxe": pxe,
        "switch_id": switch,
        "switch_name": None if port is None else "tor-1",
        "port_id": port,
    }


def _nodes() -> list[dict[str, Any]]:
    return [
        {"uuid": "u1", "name": "a", "links": [_nic("52:54:00:00:00:01", "Eth1")]},
        {
            "uuid": "u2",
            "name": "b",
            "links": [
                _nic("52:54:00:00:00:02", "Eth1"),
                _nic("52:54:00:00:00:03", None, pxe=False, name="eno2"),
            ],
        },
        {"uuid": "u3", "name": "c", "links": [_nic("52:54:00:00:00:04", None)]},
        {"uuid": "u4", "name": "d", "links": [_nic("52:54:00:00:00:05", "Eth2")]},
    ]


def test_links_and_problems() -> None:
    view = cabling.view(_nodes())
    assert [(k["node"], k["port_id"]) for k in view["links"]] == [
        ("u1", "Eth1"),
        ("u2", "Eth1"),
        ("u4", "Eth2"),
    ]
    assert [(p["kind"], p["nodes"]) for p in view["problems"]] == [
        ("no-neighbour", ["u3"]),
        ("duplicate-port", ["u1", "u2"]),
    ]
    duplicate = view["problems"][1]["detail"]
    assert "52:54:00:00:00:01, 52:54:00:00:00:02" in duplicate and "Eth1" in duplicate


def test_one_mac_seen_twice_on_a_port_is_no_duplicate() -> None:
    nodes = [
        {"uuid": "u1", "name": "a", "links": [_nic("52:54:00:00:00:01", "Eth1")]},
        {"uuid": "u1", "name": "a", "links": [_nic("52:54:00:00:00:01", "Eth1")]},
    ]
    assert cabling.view(nodes)["problems"] == []


def test_unexpected_against_the_rules() -> None:
    rules = expected.parse(
        "a, eno1, tor-1, Eth1\n"  # right
        "d, eno1, tor-1, Eth9\n"  # wrong port
        "c, eno1, tor-1, Eth3\n"  # no LLDP data
        "b, eno7, tor-1, Eth1\n"  # no such NIC
        "zz*, eno1, tor-1, Eth1\n",  # no node
        "cabling.csv",
    )
    problems = [p for p in cabling.view(_nodes(), rules)["problems"]]
    unexpected = [
        (p["nodes"], p["detail"]) for p in problems if p["kind"] == "unexpected"
    ]
    assert [nodes for nodes, _ in unexpected] == [["u2"], ["u3"], ["u4"]]
    details = " | ".join(detail for _, detail in unexpected)
    assert "node b (u2) has no NIC eno7 (expected cabling line 4)" in details
    assert "seen no LLDP data (expected cabling line 3)" in details
    assert "expected switch tor-1 port Eth9, seen switch tor-1 port Eth2" in details
