"""The fleet view kept up to date run by run answers what the pure
modules answer over every node: random sequences of runs (new nodes,
changed facts, another peer group, a NIC moved to another switch port,
nodes deleted, a latest run pruned) applied to it, and after each step
every answer compared with a computation from scratch."""

import json
import random
from typing import Any

import pytest

from inspector.fleet import cabling, expected, outliers, queries
from inspector.fleet.live import LiveFleet

RULES = expected.parse(
    "rack1-*, eno1, tor-1, Eth[12]\nrack2-03, 52:54:00:00:00:05, tor-2, Eth3\n"
    "rack2-*, eno2, 00:1c:73:00:00:02, Eth*\n",
    "cabling.csv",
)
OPTIONS: list[dict[str, Any]] = [
    {"peer_facts": ("vendor", "product"), "min_peers": 2, "share": 0.5},
    {"peer_facts": ("vendor", "product"), "min_peers": 5, "share": 0.8},
    {"peer_facts": ("product",), "min_peers": 1, "share": 1.0},
]
CHOICES: dict[str, list[Any]] = {
    "cpus": [32, 64],
    "cpu_model": ["Xeon 6338", "EPYC 7543", None],
    "cpu_arch": ["x86_64"],
    "memory_mb": [131072, 262144, 65536],
    "local_gb": [446, 893],
    "disks": [2, 3],
    "nics": [2],
    "vendor": ["Dell Inc.", "HPE"],
    "product": ["R650", "DL360", None],
    "bios_version": ["1.10.2", "1.9.0", None],
}


def _nic(rng: random.Random) -> dict[str, Any]:
    mac = f"52:54:00:00:00:{rng.randrange(12):02x}"
    if rng.random() < 0.25:  # no LLDP data
        switch_id = switch_name = port_id = None
    else:
        switch = rng.randrange(1, 3)
        switch_id = f"00:1c:73:00:00:{switch:02x}"
        switch_name = rng.choice([f"tor-{switch}", None])
        port_id = rng.choice(["Eth1", "Eth2", "Eth3", None])
    return {
        "mac": mac,
        "name": rng.choice(["eno1", "eno2", None]),
        "pxe": rng.random() < 0.5,
        "switch_id": switch_id,
        "switch_name": switch_name,
        "port_id": port_id,
    }


def _facts(rng: random.Random, uuid: str, name: str, run: int) -> dict[str, Any]:
    found: dict[str, Any] = {"uuid": uuid}
    for fact in queries.FACTS:
        if fact in CHOICES:
            # mostly the first value: peer groups with a majority
            choices = CHOICES[fact]
            found[fact] = choices[0] if rng.random() < 0.6 else rng.choice(choices)
        elif fact == "finished_at":
            found[fact] = f"2026-01-01T00:{run // 60 % 60:02d}:{run % 60:02d}"
        elif fact == "name":
            found[fact] = name
        else:  # serial
            found[fact] = f"SN{rng.randrange(10**6)}"
    return found


class Fleet:
    """The reference: each node's facts and links, nothing derived."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.nodes: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        self.older: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        self.run = 0

    def record(self, uuid: str, name: str, links: list[Any]) -> tuple[Any, Any]:
        self.run += 1
        found = _facts(self.rng, uuid, name, self.run)
        return found, {"uuid": uuid, "name": name, "links": links}

    def step(self) -> tuple[str, str]:
        """One change, as the view would read it: (what, node)."""
        rng = self.rng
        kinds = ["new", "facts", "group", "port", "same", "deleted", "pruned", "older"]
        kind = rng.choice(kinds) if len(self.nodes) > 3 else "new"
        if kind == "new":
            uuid = f"{rng.getrandbits(32):08x}-node"
            name = f"rack{rng.randrange(1, 3)}-{rng.randrange(10):02d}"
            links = [_nic(rng) for _ in range(rng.randrange(0, 4))]
            self.nodes[uuid] = self.record(uuid, name, links)
            return kind, uuid
        uuid = rng.choice(sorted(self.nodes))
        old_facts, old_links = self.nodes[uuid]
        if kind in ("deleted", "pruned"):
            # a node deleted, or its latest run gone: it leaves the view
            self.older[uuid] = self.nodes.pop(uuid)
            return kind, uuid
        if kind == "older" and uuid in self.older:
            # the run before comes back (the view read a node's older run)
            self.nodes[uuid] = self.older.pop(uuid)
            return kind, uuid
        if kind == "same":  # read again, unchanged
            return kind, uuid
        self.older[uuid] = (old_facts, old_links)
        new_facts = {**old_facts, "finished_at": f"later-{self.run}"}
        self.run += 1
        links = [dict(nic) for nic in old_links["links"]]
        if kind == "facts":
            fact = rng.choice(sorted(CHOICES))
            new_facts[fact] = rng.choice(CHOICES[fact])
        elif kind == "group":
            new_facts["vendor"] = rng.choice(CHOICES["vendor"])
            new_facts["product"] = rng.choice(CHOICES["product"])
        elif links:  # port: a cable moved
            nic = rng.choice(links)
            nic["switch_id"] = f"00:1c:73:00:00:{rng.randrange(1, 3):02x}"
            nic["port_id"] = rng.choice(["Eth1", "Eth2", "Eth3", "Eth4"])
        else:
            links.append(_nic(rng))
        if rng.random() < 0.2:  # renamed in Ironic
            new_facts["name"] = f"rack{rng.randrange(1, 3)}-{rng.randrange(10):02d}"
        self.nodes[uuid] = (
            new_facts,
            {**old_links, "name": new_facts["name"], "links": links},
        )
        return kind, uuid

    def apply(self, live: LiveFleet, uuid: str) -> None:
        held = self.nodes.get(uuid)
        if held is None:
            live.drop(uuid)
        else:
            # copies: the view reads new dicts from the database each time
            live.put(json.loads(json.dumps(held[0])), json.loads(json.dumps(held[1])))


def _compare(
    live: LiveFleet, fleet: Fleet, options: dict[str, Any], rules: Any
) -> None:
    ordered = sorted(fleet.nodes)
    node_facts = [fleet.nodes[u][0] for u in ordered]
    node_links = [fleet.nodes[u][1] for u in ordered]
    assert live.facts() == node_facts
    assert live.uuids() == ordered
    for fact in ("memory_mb", "product", "bios_version", "name", "uuid", "cpu_model"):
        assert live.summary(fact) == queries.summary(node_facts, fact), fact
    products: dict[Any, int] = {}
    for node in node_facts:
        key = (node["vendor"], node["product"])
        products[key] = products.get(key, 0) + 1
    assert live.products() == sorted(products.items(), key=lambda p: (-p[1], str(p[0])))
    found = live.peer_groups(**options).outliers()
    assert found == outliers.find(node_facts, **options)
    ports = live.switch_ports(rules)
    view = cabling.view(node_links, rules)
    assert ports.view() == view
    assert ports.json() == json.dumps(view)
    assert ports.links_count == len(view["links"])
    assert ports.problems() == view["problems"]


@pytest.mark.parametrize("seed", range(12))
def test_random_runs_match_a_computation_from_scratch(seed: int) -> None:
    fleet = Fleet(seed)
    live = LiveFleet()
    rng = random.Random(seed + 1000)
    options = OPTIONS[seed % len(OPTIONS)]
    rules: Any = RULES if seed % 2 else ()
    seen = set()
    for _step in range(150):
        # a few runs between two requests, sometimes one
        for _ in range(rng.choice([1, 1, 2, 4])):
            kind, uuid = fleet.step()
            fleet.apply(live, uuid)
            seen.add(kind)
        if rng.random() < 0.05:  # the options changed: built again
            options = rng.choice(OPTIONS)
        if rng.random() < 0.05:  # the expected cabling file changed
            rules = () if rules else RULES
        _compare(live, fleet, options, rules)
    assert seen >= {"new", "facts", "group", "port", "same", "deleted", "pruned"}


def test_the_outliers_were_found() -> None:
    # the sequences above are worth something only if they find outliers
    # and cabling problems of every kind
    fleet = Fleet(3)
    live = LiveFleet()
    totals = {"outliers": 0, "no-neighbour": 0, "duplicate-port": 0, "unexpected": 0}
    for _step in range(150):
        _kind, uuid = fleet.step()
        fleet.apply(live, uuid)
        totals["outliers"] += len(live.peer_groups(**OPTIONS[0]).outliers())
        for problem in live.switch_ports(RULES).problems():
            totals[problem["kind"]] += 1
    assert all(totals.values()), totals


def test_an_unchanged_node_changes_nothing() -> None:
    live = LiveFleet()
    node = {"uuid": "u1", **{f: None for f in queries.FACTS}}
    assert live.put(node, {"uuid": "u1", "name": None, "links": []})
    version = live.version
    assert not live.put(dict(node), {"uuid": "u1", "name": None, "links": []})
    assert live.version == version
    assert not live.drop("u2")
    assert live.drop("u1") and live.version == version + 1
