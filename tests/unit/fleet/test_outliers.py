"""Outliers among peers: the share, the minimum of peers, null values."""

from typing import Any

from inspector.fleet import outliers


def _node(index: int, **facts: Any) -> dict[str, Any]:
    base = {
        "uuid": f"node-{index:02d}",
        "name": f"n{index}",
        "serial": f"S{index}",
        "vendor": "Dell Inc.",
        "product": "R650",
        "memory_mb": 262144,
        "bios_version": "1.10",
    }
    return {**base, **facts}


def _find(nodes: list[dict[str, Any]], **kwargs: Any) -> list[dict[str, Any]]:
    options = {"peer_facts": ["vendor", "product"], "min_peers": 5, "share": 0.8}
    return outliers.find(nodes, **{**options, **kwargs})


def test_one_odd_node_among_enough_peers() -> None:
    nodes = [_node(0, memory_mb=131072)] + [_node(i) for i in range(1, 6)]
    assert _find(nodes) == [
        {
            "uuid": "node-00",
            "fact": "memory_mb",
            "value": 131072,
            "expected": 262144,
            "peers": 5,
        }
    ]


def test_the_node_does_not_count_itself() -> None:
    nodes = [_node(0, memory_mb=131072)] + [_node(i) for i in range(1, 5)]
    assert _find(nodes) == []  # 4 peers
    assert len(_find(nodes, min_peers=4)) == 1


def test_the_share_of_peers_agreeing() -> None:
    # 10 nodes: the odd one's 9 peers; 7 of them (78 %) agree
    nodes = [_node(0, bios_version="0.9")]
    nodes += [_node(i, bios_version="2.0") for i in (1, 2)]
    nodes += [_node(i) for i in range(3, 10)]
    assert _find(nodes) == []
    found = _find(nodes, share=0.75)
    assert {(o["uuid"], o["expected"]) for o in found} == {
        ("node-00", "1.10"),
        ("node-01", "1.10"),
        ("node-02", "1.10"),
    }


def test_peers_are_by_the_peer_facts_and_identities_never_compared() -> None:
    nodes = [_node(i) for i in range(6)]
    nodes += [_node(10 + i, product="R750", memory_mb=524288) for i in range(6)]
    assert _find(nodes) == []  # serials and names all differ: not compared
    assert _find(nodes, peer_facts=["vendor"]) == []  # 6 of 12: no majority


def test_a_missing_value_is_a_value() -> None:
    nodes = [_node(0, bios_version=None)] + [_node(i) for i in range(1, 7)]
    assert _find(nodes) == [
        {
            "uuid": "node-00",
            "fact": "bios_version",
            "value": None,
            "expected": "1.10",
            "peers": 6,
        }
    ]
