"""The fleet view (1.23): GET /v1/inventory, its summary, outliers and
cabling, and the /fleet page, over hardware_runs rows written here.

The session's database is shared: each test makes its own product (the
peers of the outliers, the filter of the listings) and names its nodes.
"""

import datetime
import json
import pathlib
import uuid as uuidlib
from typing import Any

import pytest
from oslo_config import cfg

from inspector import exceptions
from inspector.fleet import expected
from lab.machines import fleet_rows
from tests.functional.conftest import Service, database_conf, run_script

V123 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.23"}
V122 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.22"}


def _product() -> str:
    return f"Model {uuidlib.uuid4().hex[:8]}"


def _enrolled(service: Service) -> str:
    """A node known to the fake Ironic, as a real one would be: a reconcile
    removes the records of nodes Ironic does not know, rows written here
    included."""
    return str(service.ironic.add_node()["uuid"])


def _fleet(
    service: Service, product: str, count: int, **odd: Any
) -> list[dict[str, Any]]:
    """``count`` identical nodes of ``product``; the first has ``odd``
    facts. Their rows, in UUID order."""
    rows = []
    for index in range(count):
        facts = odd if index == 0 else {}
        record = fleet_rows.machine(product=product, **facts)
        node = _enrolled(service)
        rows.append(
            fleet_rows.run_row(
                node, record, name=f"{product}-{index}".replace(" ", "-")
            )
        )
    fleet_rows.insert(service.rt.db, rows)
    return sorted(rows, key=lambda r: r["node_uuid"])


def get(service: Service, path: str, **headers: str) -> Any:
    resp = service.client.get(path, headers={**V123, **headers})
    return resp


def test_listing_filters_typed_and_pages(service: Service) -> None:
    product = _product()
    rows = _fleet(service, product, 4, memory_mb=131072)
    odd = next(r for r in rows if r["memory_mb"] == 131072)
    assert get(service, "/v1/inventory", **V122).status_code == 404

    resp = get(service, f"/v1/inventory?product={product}")
    assert resp.status_code == 200, resp.get_json()
    nodes = resp.get_json()["nodes"]
    assert [n["uuid"] for n in nodes] == [r["node_uuid"] for r in rows]
    first = nodes[0]
    assert first["product"] == product and first["vendor"] == "Dell Inc."
    assert first["cpus"] == 64 and first["disks"] == 2 and first["local_gb"] == 446
    assert first["finished_at"] == rows[0]["finished_at"].isoformat()

    resp = get(service, f"/v1/inventory?product={product}&memory_mb=131072")
    assert [n["uuid"] for n in resp.get_json()["nodes"]] == [odd["node_uuid"]]

    resp = get(
        service, f"/v1/inventory?product={product}&fields=memory_mb,name&limit=2"
    )
    page = resp.get_json()["nodes"]
    assert [sorted(n) for n in page] == [["memory_mb", "name", "uuid"]] * 2
    resp = get(
        service,
        f"/v1/inventory?product={product}&fields=uuid&marker={page[-1]['uuid']}",
    )
    assert [n["uuid"] for n in resp.get_json()["nodes"]] == [
        r["node_uuid"] for r in rows[2:]
    ]


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("fields=uuid,colour", "Unknown fact 'colour' in fields; the facts are uuid, "),
        ("colour=red", "'colour' in the filters"),
        ("memory_mb=lots", "Invalid value for memory_mb: 'lots', expected an integer"),
        ("finished_at=yesterday", "finished_at: 'yesterday'"),
        ("limit=-1", "limit: -1"),
        ("limit=ten", "limit: 'ten'"),
        ("limit=100000", "the maximum is"),
        (
            "marker=0bd0cbd6-1e4b-4bd4-9a4a-c0d6d2b4b2c1",
            "is not a node of the inventory",
        ),
    ],
)
def test_bad_input_is_a_400_naming_it(service: Service, query: str, named: str) -> None:
    resp = get(service, f"/v1/inventory?{query}")
    assert resp.status_code == 400, resp.get_json()
    assert named in resp.get_json()["error"]["message"]


def test_summary_groups_by_a_fact(service: Service) -> None:
    product = _product()
    _fleet(service, product, 3, memory_mb=131072)
    resp = get(service, f"/v1/inventory/summary?group_by=memory_mb&product={product}")
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json() == {
        "groups": [{"value": 262144, "count": 2}, {"value": 131072, "count": 1}]
    }
    groups = get(service, "/v1/inventory/summary").get_json()["groups"]
    assert {"value": product, "count": 3} in groups
    resp = get(service, "/v1/inventory/summary?group_by=colour")
    assert resp.status_code == 400
    assert "'colour' in group_by" in resp.get_json()["error"]["message"]


def test_outliers_need_enough_peers(service: Service) -> None:
    product = _product()
    rows = _fleet(service, product, 6, memory_mb=131072, bios_version="0.9")
    odd = next(r for r in rows if r["memory_mb"] == 131072)
    found = get(service, "/v1/inventory/outliers").get_json()["outliers"]
    mine = [o for o in found if o["uuid"] == odd["node_uuid"]]
    assert mine == [
        {
            "uuid": odd["node_uuid"],
            "fact": "bios_version",
            "value": "0.9",
            "expected": "1.10.2",
            "peers": 5,
        },
        {
            "uuid": odd["node_uuid"],
            "fact": "memory_mb",
            "value": 131072,
            "expected": 262144,
            "peers": 5,
        },
    ]
    others = {r["node_uuid"] for r in rows if r is not odd}
    assert not [o for o in found if o["uuid"] in others]

    few = _product()
    rows = _fleet(service, few, 5, memory_mb=131072)  # 4 peers: too few
    found = get(service, "/v1/inventory/outliers").get_json()["outliers"]
    assert not [o for o in found if o["uuid"] in {r["node_uuid"] for r in rows}]


def _cabled(service: Service, name: str, *nics: dict[str, Any]) -> str:
    node = _enrolled(service)
    record = fleet_rows.machine(product=_product(), nics=nics)
    fleet_rows.insert(
        service.rt.db, [fleet_rows.run_row(node, record, name=name, links=nics)]
    )
    return node


def test_cabling_links_and_problems(
    service: Service, conf: cfg.ConfigOpts, tmp_path: pathlib.Path
) -> None:
    tag = uuidlib.uuid4().hex[:6]
    switch = f"00:1c:73:{tag[:2]}:{tag[2:4]}:{tag[4:]}"
    a = _cabled(
        service,
        f"rack-{tag}-a",
        fleet_rows.nic(
            "52:54:00:aa:00:01",
            "eno1",
            switch_id=switch,
            switch_name="tor-1",
            port_id="Ethernet1",
            pxe=True,
        ),
    )
    b = _cabled(
        service,
        f"rack-{tag}-b",
        fleet_rows.nic(
            "52:54:00:aa:00:02",
            "eno1",
            switch_id=switch,
            switch_name="tor-1",
            port_id="Ethernet1",
            pxe=True,
        ),
        fleet_rows.nic("52:54:00:aa:00:03", "eno2", pxe=False),
    )
    c = _cabled(
        service, f"rack-{tag}-c", fleet_rows.nic("52:54:00:aa:00:04", "eno1", pxe=True)
    )
    cabling = tmp_path / "cabling.csv"
    cabling.write_text(
        "# node, nic, switch, port\n"
        f"rack-{tag}-a, eno1, tor-1, Ethernet1\n"
        f"rack-{tag}-b, 52:54:00:aa:00:02, tor-1, Ethernet2\n"
    )
    conf.set_override("expected_cabling", str(cabling), group="inventory")
    body = get(service, "/v1/inventory/cabling").get_json()
    mine = {a, b, c}
    links = [link for link in body["links"] if link["node"] in mine]
    assert sorted((link["node"], link["mac"], link["port_id"]) for link in links) == (
        sorted(
            [
                (a, "52:54:00:aa:00:01", "Ethernet1"),
                (b, "52:54:00:aa:00:02", "Ethernet1"),
            ]
        )
    )
    assert links[0]["switch_id"] == switch and links[0]["switch_name"] == "tor-1"
    problems = [p for p in body["problems"] if set(p["nodes"]) & mine]
    kinds = sorted((p["kind"], tuple(p["nodes"])) for p in problems)
    assert kinds == sorted(
        [
            ("duplicate-port", tuple(sorted([a, b]))),
            ("no-neighbour", (c,)),
            ("unexpected", (b,)),
        ]
    )
    unexpected = next(p for p in problems if p["kind"] == "unexpected")
    assert (
        "expected switch tor-1 port Ethernet2, seen switch tor-1 port Ethernet1"
        in (unexpected["detail"])
    )
    assert "line 3" in unexpected["detail"]
    lonely = next(p for p in problems if p["kind"] == "no-neighbour")
    assert lonely["detail"] == (
        f"the PXE NIC eno1 (52:54:00:aa:00:04) of node rack-{tag}-c ({c}) "
        "has no LLDP data (no switch seen)"
    )
    # the manage command's table names each node by UUID and name, and
    # its status says that there are problems
    done = run_script(
        tmp_path,
        "ironic-inspector-manage",
        database_conf(service) + f"[inventory]\nexpected_cabling = {cabling}\n",
        "inventory",
        "cabling",
    )
    assert done.returncode == 1, done.stderr
    problems_table = done.stdout.split("\n\n", 1)[1]
    for node, letter in ((a, "a"), (b, "b"), (c, "c")):
        assert f"{node} (rack-{tag}-{letter})" in problems_table


def test_malformed_expected_cabling_is_refused_naming_the_line(
    conf: cfg.ConfigOpts, tmp_path: pathlib.Path
) -> None:
    cabling = tmp_path / "cabling.csv"
    cabling.write_text("node-1, eno1, tor-1, Ethernet1\nnode-2, eno1, tor-1\n")
    conf.set_override("expected_cabling", str(cabling), group="inventory")
    with pytest.raises(exceptions.ConfigError) as caught:
        expected.configured(conf.inventory.expected_cabling)
    assert caught.value.message == (
        f"Invalid configuration: [inventory]expected_cabling: {cabling} line 2: "
        "expected 4 comma-separated fields (node, nic, switch, port), found 3"
    )


def test_fleet_page_escapes_and_links(service: Service) -> None:
    product = _product()
    rows = _fleet(service, product, 6, memory_mb=131072)
    odd = next(r for r in rows if r["memory_mb"] == 131072)
    node = _enrolled(service)
    record = fleet_rows.machine(product=product)
    when = fleet_rows.models.utcnow() + datetime.timedelta(days=3650)
    disk = {"name": "/dev/sdc", "size": 1, "model": "<b>x</b>", "serial": "S9"}
    fleet_rows.insert(
        service.rt.db,
        [
            fleet_rows.run_row(
                node,
                record,
                name="<script>alert(1)</script>",
                finished_at=when,
                changes=[fleet_rows.change("disk:S9", "added", None, None, disk)],
            )
        ],
    )
    resp = service.client.get("/fleet")
    assert resp.status_code == 200
    assert resp.headers["Content-Type"].startswith("text/html")
    html = resp.get_data(as_text=True)
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert f'href="fleet/nodes/{odd["node_uuid"]}"' not in html  # by group
    assert f'href="fleet/nodes/{node}"' in html
    assert "disk:S9" in html

    page = service.client.get(f"/fleet/nodes/{node}")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "disk:S9" in text and "<b>x</b>" not in text and "&lt;b&gt;" in text
    missing = service.client.get(f"/fleet/nodes/{uuidlib.uuid4()}")
    assert missing.status_code == 404
    assert "has no hardware record" in missing.get_data(as_text=True)


def test_manage_inventory_reads_the_database(
    service: Service, tmp_path: pathlib.Path
) -> None:
    product = _product()
    rows = _fleet(service, product, 6, memory_mb=131072)
    odd = next(r for r in rows if r["memory_mb"] == 131072)
    conf = database_conf(service)
    done = run_script(
        tmp_path,
        "ironic-inspector-manage",
        conf,
        "inventory",
        "list",
        "--filter",
        f"product={product}",
        "--fields",
        "memory_mb,name",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert [n["uuid"] for n in json.loads(done.stdout)] == [
        r["node_uuid"] for r in rows
    ]
    done = run_script(
        tmp_path,
        "ironic-inspector-manage",
        conf,
        "inventory",
        "summary",
        "--group-by",
        "memory_mb",
        "--filter",
        f"product={product}",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["value", "count"]
    assert lines[2].split() == ["262144", "5"] and lines[3].split() == ["131072", "1"]
    done = run_script(
        tmp_path, "ironic-inspector-manage", conf, "inventory", "outliers", "--json"
    )
    assert done.returncode == 1, done.stderr  # found some
    found = [o for o in json.loads(done.stdout) if o["uuid"] == odd["node_uuid"]]
    assert [(o["fact"], o["value"], o["expected"]) for o in found] == [
        ("memory_mb", 131072, 262144)
    ]
    # the table names the node by UUID and name: grep finds either
    done = run_script(
        tmp_path, "ironic-inspector-manage", conf, "inventory", "outliers"
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0].split() == [
        "node",
        "fact",
        "value",
        "expected",
        "peers",
    ]
    (line,) = [x for x in done.stdout.splitlines() if odd["node_uuid"] in x]
    assert line.split()[:4] == [
        odd["node_uuid"],
        f"({odd['node_name']})",
        "memory_mb",
        "131072",
    ]
    done = run_script(
        tmp_path,
        "ironic-inspector-manage",
        conf,
        "inventory",
        "list",
        "--filter",
        "memory_mb=lots",
    )
    assert done.returncode == 2
    assert "memory_mb: 'lots', expected an integer" in done.stderr
    done = run_script(tmp_path, "ironic-inspector-manage", conf, "inventory", "cabling")
    assert done.returncode in (0, 1), done.stderr
    assert done.stdout.splitlines()[0].split()[:3] == [
        "switch_name",
        "switch_id",
        "port_id",
    ]
