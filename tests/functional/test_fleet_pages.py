"""The /fleet pages (issue 50): the overview's groups and counts linking
to their tables, the nodes' table filtered, searched, sorted and paged by
its query, the outliers and cabling tables, the changes a page at a
time, a node's page by name or UUID (its runs with their source and what
changed, its NICs and disks), values in an operator's units, every link
relative, and a client's mistake as a 4xx page that says it.

The session's database is shared: each test makes its own product and
names its nodes.
"""

import datetime
import re
import uuid as uuidlib
from typing import Any

import pytest
import sqlalchemy as sa
from oslo_config import cfg

from inspector.api import fleet_tables, fleet_text
from lab.machines import fleet_rows
from tests.functional.conftest import Service


def _product() -> str:
    return f"Model {uuidlib.uuid4().hex[:8]}"


def _fleet(
    service: Service, product: str, count: int, **odd: Any
) -> list[dict[str, Any]]:
    """``count`` nodes of ``product`` (known to the fake Ironic), the
    first with ``odd`` facts, named ``<product>-<index>``; their rows by
    UUID."""
    rows = []
    for index in range(count):
        record = fleet_rows.machine(product=product, **(odd if index == 0 else {}))
        node = str(service.ironic.add_node()["uuid"])
        name = f"{product}-{index:03d}".replace(" ", "-")
        rows.append(fleet_rows.run_row(node, record, name=name))
    fleet_rows.insert(service.rt.db, rows)
    return sorted(rows, key=lambda r: r["node_uuid"])


def _html(service: Service, path: str, status: int = 200) -> str:
    resp = service.client.get(path)
    assert resp.status_code == status, resp.get_data(as_text=True)[:2000]
    assert resp.headers["Content-Type"].startswith("text/html")
    assert "script-src" not in resp.headers["Content-Security-Policy"]
    assert resp.headers["Content-Security-Policy"].startswith("default-src 'none'")
    text = resp.get_data(as_text=True)
    # relative links only: the page works behind a path prefix
    absolute = re.findall(r'(?:href|action)="(/[^"]*|https?:[^"]*)"', text)
    assert not absolute, absolute
    return text


def _found(pattern: str, text: str) -> str:
    match = re.search(pattern, text)
    assert match, (pattern, text)
    return match[1]


def _rows(text: str, kind: str) -> list[str]:
    return re.findall(rf'<tr class="{kind}">(.*?)</tr>', text, re.S)


def test_the_overview_groups_and_links_to_the_tables(service: Service) -> None:
    product = _product()
    rows = _fleet(service, product, 6, memory_mb=131072)
    text = _html(service, "/fleet")
    query = fleet_tables.link({}, vendor="Dell Inc.", product=product)
    assert f'href="fleet/nodes{query.replace("&", "&amp;")}">6</a>' in text
    outliers = fleet_tables.link(
        {}, vendor="Dell Inc.", product=product, fact="memory_mb"
    ).replace("&", "&amp;")
    assert f'href="fleet/outliers{outliers}">1</a>' in text
    assert 'href="fleet/changes"' in text and 'action="fleet/nodes"' in text
    # from a trailing slash, one level deeper: the links still resolve
    assert 'href="../fleet/nodes"' in _html(service, "/fleet/")

    listed = _html(service, f"/fleet/outliers{outliers.replace('&amp;', '&')}")
    (row,) = _rows(listed, "outlier")
    odd = next(r for r in rows if r["memory_mb"] == 131072)
    assert f'href="../fleet/nodes/{odd["node_uuid"]}">{odd["node_name"]}</a>' in row
    assert "128 GiB" in row and "256 GiB" in row and "131072" not in row


def test_the_nodes_table_filters_sorts_and_pages(service: Service) -> None:
    product = _product()
    rows = _fleet(service, product, 55, memory_mb=131072, bios_version="0.9")
    odd = next(r for r in rows if r["memory_mb"] == 131072)
    base = f"/fleet/nodes?product={product.replace(' ', '+')}"
    first = _html(service, base)
    rows_shown = _rows(first, "node-row")
    names = [_found(r'class="node"[^>]*>([^<]*)<', r) for r in rows_shown]
    by_name = sorted(r["node_name"] for r in rows)
    assert names == by_name[:50]
    assert "1–50 of 55" in first and "page 1 of 2" in first
    assert 'rel="next" href="?product=' in first and "page=2" in first
    second = _html(service, base + "&page=2")
    assert len(_rows(second, "node-row")) == 5 and "51–55 of 55" in second

    # sorted by memory, descending: the odd node last; ascending: first
    down = _html(service, base + "&sort=-memory_mb&page=2")
    assert odd["node_name"] in _rows(down, "node-row")[-1]
    up = _html(service, base + "&sort=memory_mb")
    assert odd["node_name"] in _rows(up, "node-row")[0]
    assert "Memory</a> ▲" in up
    # any fact, as the API takes it; units an operator reads
    only = _html(service, base + "&memory_mb=131072")
    (row,) = _rows(only, "node-row")
    assert odd["node_name"] in row and "128 GiB" in row and "446 GiB" in row
    assert "memory_mb = 131072" in only
    # the form's "fact = value" becomes the API's fact=value
    resp = service.client.get(base + "&fact=bios_version&value=0.9")
    assert resp.status_code == 303
    location = resp.headers["Location"]
    assert location.startswith("?") and "bios_version=0.9" in location
    assert "fact=" not in location
    assert len(_rows(_html(service, "/fleet/nodes" + location), "node-row")) == 1


def test_searching_by_name_or_uuid(service: Service) -> None:
    product = _product()
    rows = _fleet(service, product, 3)
    node = rows[1]
    for text in (node["node_name"], node["node_uuid"], node["node_uuid"].upper()):
        resp = service.client.get(f"/fleet/nodes?q={text}")
        assert resp.status_code == 303, text
        assert resp.headers["Location"] == f"../fleet/nodes/{node['node_uuid']}"
    # part of names: the table of those nodes
    found = _html(service, f"/fleet/nodes?q={product.split()[1]}")
    assert len(_rows(found, "node-row")) == 3
    assert "name or UUID holds" in found
    # a node's page by name, as by UUID
    by_name = _html(service, f"/fleet/nodes/{node['node_name']}")
    assert node["node_uuid"] in by_name


def test_a_page_by_name_follows_new_nodes_runs_and_renames(service: Service) -> None:
    product = _product()
    rows = _fleet(service, product, 2)
    node, other = rows
    old = node["node_name"]
    assert node["node_uuid"] in _html(service, f"/fleet/nodes/{old}")
    # a new node: its page by name at the next request
    (added,) = _fleet(service, _product(), 1)
    by_name = _html(service, f"/fleet/nodes/{added['node_name']}")
    assert added["node_uuid"] in by_name
    # a run recorded under a new name: the new name finds the node, the
    # old one no longer does (nor does the search send to it)
    new = f"renamed-{uuidlib.uuid4().hex[:6]}"
    record = fleet_rows.machine(product=product)
    fleet_rows.insert(
        service.rt.db, [fleet_rows.run_row(node["node_uuid"], record, name=new)]
    )
    assert node["node_uuid"] in _html(service, f"/fleet/nodes/{new}")
    resp = service.client.get(f"/fleet/nodes?q={new}")
    assert resp.headers["Location"] == f"../fleet/nodes/{node['node_uuid']}"
    text = _html(service, f"/fleet/nodes/{old}", 404)
    assert f"No node named &#39;{old}&#39;" in text
    assert service.client.get(f"/fleet/nodes?q={old}").status_code == 200
    # another node takes the old name: found again, that node
    fleet_rows.insert(
        service.rt.db, [fleet_rows.run_row(other["node_uuid"], record, name=old)]
    )
    assert other["node_uuid"] in _html(service, f"/fleet/nodes/{old}")


def _run(node: str, when: datetime.datetime, **values: Any) -> dict[str, Any]:
    """A run row of ``node`` that ended at ``when`` with no record."""
    run = str(uuidlib.uuid4())
    return {
        **{c.name: None for c in fleet_rows.RUNS.columns},
        "run": run,
        "node_uuid": node,
        "started_at": when - datetime.timedelta(minutes=5),
        "finished_at": when,
        "change_count": 0,
        "changes": "[]",
        **values,
    }


def test_a_nodes_page(service: Service, conf: cfg.ConfigOpts) -> None:
    node = str(service.ironic.add_node()["uuid"])
    name = f"db-{uuidlib.uuid4().hex[:6]}"
    now = fleet_rows.models.utcnow().replace(microsecond=123456)
    eno1 = fleet_rows.nic(
        "52:54:00:bb:00:01",
        "eno1",
        switch_id="00:1c:73:00:00:09",
        switch_name="tor-9",
        port_id="Ethernet9",
        pxe=True,
    )
    old = {"name": "/dev/sdb", "size": 480103981056, "model": "SSD", "serial": "S2"}
    new = {"name": "/dev/sdb", "size": 1920383410176, "model": "SSD", "serial": "S7"}
    first = fleet_rows.machine(product=_product(), nics=[eno1])
    second = fleet_rows.machine(
        product=first["system"]["product"], nics=[eno1], disks=[new]
    )
    with service.rt.db.begin() as conn:
        conn.execute(
            sa.insert(fleet_rows.RUNS),
            [
                _run(
                    node,
                    now - datetime.timedelta(days=3),
                    state="finished",
                    source="upstream",
                    node_name=name,
                ),
                _run(
                    node,
                    now - datetime.timedelta(days=2),
                    state="error",
                    error="Timeout waiting for the ramdisk",
                    source="inspector",
                    node_name=name,
                ),
            ],
        )
    older = fleet_rows.run_row(
        node, first, name=name, links=[eno1], finished_at=now - datetime.timedelta(1)
    )
    latest = fleet_rows.run_row(
        node,
        second,
        name=name,
        links=[eno1],
        finished_at=now,
        changes=[
            fleet_rows.change("disk:S2", "removed", None, old, None),
            fleet_rows.change("disk:S7", "added", None, None, new),
            fleet_rows.change("memory", "changed", "total_mb", 131072, 262144),
        ],
    )
    # one statement writes both: each row names the same columns
    older.update(source="inspector", interface=None)
    latest.update(source="ironic", interface="agent")
    fleet_rows.insert(service.rt.db, [older, latest])

    text = _html(service, f"/fleet/nodes/{name}")
    assert text == _html(service, f"/fleet/nodes/{node}")
    assert f'href="../../v1/introspection/{node}"' in text
    assert "ironic-link" not in text  # no endpoint known: no link
    runs = _rows(text, "run")
    assert len(runs) == 4
    assert [_found(r'class="source">([^<]*)<', r) for r in runs] == [
        "Ironic&#39;s (agent)",
        "ours",
        "ours",
        "imported",
    ]
    assert "failed" in runs[2] and "Timeout waiting for the ramdisk" in runs[2]
    # the change as the fields that changed, in units, not JSON
    assert "name /dev/sdb, size 480 GB, model SSD, serial S2" in runs[0]
    assert "name /dev/sdb, size 1.92 TB, model SSD, serial S7" in runs[0]
    assert "total_mb: 128 GiB → 256 GiB" in runs[0]
    assert "{&#34;" not in text and '{"' not in text
    # times in UTC to the second
    assert now.strftime("%Y-%m-%d %H:%M:%S UTC") in runs[0]
    assert ".123456" not in text
    (nic,) = _rows(text, "nic")
    assert "tor-9" in nic and "Ethernet9" in nic and "25 Gb/s" in nic and "PXE" in nic
    (disk,) = _rows(text, "disk")
    assert "1.92 TB" in disk and "S7" in disk

    conf.set_override("endpoint_override", "http://ironic.example:6385/v1/", "ironic")
    linked = service.client.get(f"/fleet/nodes/{node}").get_data(as_text=True)
    # the one absolute link: Ironic's own endpoint
    assert re.findall(r'href="(http[^"]*)"', linked) == [
        f"http://ironic.example:6385/v1/nodes/{node}"
    ]


@pytest.mark.parametrize(
    ("path", "status", "said"),
    [
        ("/fleet/nodes?colour=red", 400, "Unknown fact &#39;colour&#39;"),
        ("/fleet/nodes?memory_mb=lots", 400, "expected an integer"),
        ("/fleet/nodes?fact=colour&value=red", 400, "Unknown fact"),
        ("/fleet/nodes?page=0", 400, "Invalid page &#39;0&#39;"),
        ("/fleet/nodes?page=two", 400, "Invalid page &#39;two&#39;"),
        ("/fleet/nodes?page=99999", 400, "Invalid page 99999: there"),
        ("/fleet/nodes?sort=colour", 400, "Cannot sort by &#39;colour&#39;"),
        ("/fleet/nodes/no-such-node", 404, "No node named &#39;no-such-node&#39;"),
        # fixed UUIDs: pytest-xdist collects the same ids in every worker
        (
            "/fleet/nodes/0e0e0e0e-5a5a-4b4b-8c8c-0d0d0d0d0d0d",
            404,
            "has no hardware record",
        ),
        ("/fleet/outliers?fact=colour", 400, "Unknown fact"),
        ("/fleet/outliers?colour=red", 400, "Unknown parameter"),
        ("/fleet/outliers?page=-1", 400, "Invalid page"),
        ("/fleet/cabling?kind=loose", 400, "Unknown kind of cabling problem"),
        ("/fleet/cabling?sort=nodes", 400, "Cannot sort by"),
        (
            "/fleet/changes?after=0f0f0f0f-5a5a-4b4b-8c8c-0d0d0d0d0d0d",
            400,
            "is no run of the history",
        ),
    ],
)
def test_a_mistake_is_a_page_that_says_it(
    service: Service, path: str, status: int, said: str
) -> None:
    _fleet(service, _product(), 1)
    text = _html(service, path, status)
    assert said in text, text[-1500:]
    assert 'id="message"' in text


def test_a_nodes_runs_page_past_the_last(service: Service) -> None:
    (row,) = _fleet(service, _product(), 1)
    text = _html(service, f"/fleet/nodes/{row['node_uuid']}?page=2", 400)
    assert "this node&#39;s 1 runs fill 1 page" in text


def test_changes_and_cabling_pages(service: Service) -> None:
    node = str(service.ironic.add_node()["uuid"])
    record = fleet_rows.machine(product=_product())
    when = fleet_rows.models.utcnow() + datetime.timedelta(days=3650)
    row = fleet_rows.run_row(
        node,
        record,
        name="changed-node",
        finished_at=when,
        changes=[fleet_rows.change("system", "changed", "bios_version", "1", "2")],
    )
    fleet_rows.insert(service.rt.db, [row])
    text = _html(service, "/fleet/changes")
    first = _rows(text, "changed")[0]
    assert "changed-node" in first and "bios_version: 1 → 2" in first
    older = re.search(r'rel="next" href="\?after=([^"]+)"', text)
    if older:  # the session's other tests made more than a page
        assert _html(service, f"/fleet/changes?after={older[1]}")
    assert _html(service, f"/fleet/changes?after={row['run']}")

    lonely = fleet_rows.nic("52:54:00:cc:00:01", "eno1", pxe=True)
    node = str(service.ironic.add_node()["uuid"])
    record = fleet_rows.machine(product=_product(), nics=[lonely])
    fleet_rows.insert(
        service.rt.db,
        [fleet_rows.run_row(node, record, name="lonely-node", links=[lonely])],
    )
    text = _html(service, "/fleet/cabling?kind=no-neighbour&sort=-detail")
    kinds = re.findall(r'<span class="kind">([^<]*)</span>', text)
    assert kinds and set(kinds) == {"no-neighbour"}
    assert "lonely-node" in text


def test_units_and_times() -> None:
    assert fleet_text.size(262144, "mib") == "256 GiB"
    assert fleet_text.size(98304, "mib") == "96 GiB"
    assert fleet_text.size(1536, "mib") == "1.5 GiB"
    assert fleet_text.size(960197124096, "bytes") == "960 GB"
    assert fleet_text.size(3840755982336, "bytes") == "3.84 TB"
    assert fleet_text.size(25000, "mbps") == "25 Gb/s"
    assert fleet_text.size(100, "mbps") == "100 Mb/s"
    assert fleet_text.when("2026-01-01T12:34:56.789012") == "2026-01-01 12:34:56 UTC"
    assert fleet_text.when("2026-01-01T14:34:56+02:00") == "2026-01-01 12:34:56 UTC"
    assert fleet_text.source({"source": "ironic", "interface": "redfish"}) == (
        "Ironic's (redfish)"
    )
    assert fleet_text.source({"source": "upstream"}) == "imported"
