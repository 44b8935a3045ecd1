"""The /fleet page in a real browser (Debian's headless Chromium), served
by the ironic-inspector process on SQLite and PostgreSQL, over
hardware_runs rows written into its database: an outlier and a node with
changes are shown and linked; with ``INSPECTOR_DOC_IMAGES=1`` the
screenshot replaces the docs' (doc/images/fleet.png; a plain test run
leaves the checkout as it found it). Then at 10,000 nodes (2 runs each,
written straight into the database in a few seconds): a product's
nodes filtered, paged and sorted, a fact filter, the search, an outlier
group and a node's page reached by following the links the browser
renders (resolved as the browser resolves them: every link is
relative). And a malformed expected-cabling file stops the
process at start, naming the line."""

import html
import os
import pathlib
import re
import shutil
import subprocess
import time
import urllib.parse
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from inspector.db import engine
from lab.machines import fleet_rows
from lab.servers import loopback
from lab.servers.inspector import InspectorServer
from lab.servers.postgres import PostgresServer

DOC_IMAGE = pathlib.Path(__file__).parents[2] / "doc" / "images" / "fleet.png"
CHROMIUM = shutil.which("chromium")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def inspector(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InspectorServer]:
    database_url = None
    if request.param == "postgresql":
        postgres: PostgresServer = request.getfixturevalue("postgres")
        postgres.recreate_database()
        database_url = postgres.url
    work = tmp_path_factory.mktemp(f"fleet-{request.param}")
    cabling = work / "cabling.csv"
    cabling.write_text("# node, nic, switch, port\nrack1-*, eno1, tor-1, Ethernet*\n")
    server = InspectorServer(
        work,
        # the page never calls Ironic: a closed port
        f"http://127.0.0.1:{loopback.free_port()}",
        database_url=database_url,
        options={"inventory": {"expected_cabling": str(cabling)}},
    )
    server.start()
    yield server
    assert server.stop() == 0, server.log_tail()


def _fleet(url: str) -> dict[str, Any]:
    """Six R650s of which one has half the memory, a node whose disk was
    swapped, and two NICs on one switch port."""
    db = engine.Database(url)
    rows = []
    uuids = sorted(str(uuidlib.uuid4()) for _ in range(7))
    for index, node in enumerate(uuids[:6]):
        eno1 = fleet_rows.nic(
            f"52:54:00:00:00:{index:02x}",
            "eno1",
            switch_id="00:1c:73:00:00:01",
            switch_name="tor-1",
            port_id=f"Ethernet{index + 1}",
            pxe=True,
        )
        record = fleet_rows.machine(memory_mb=131072 if index == 0 else 262144)
        rows.append(
            fleet_rows.run_row(node, record, name=f"rack1-{index}", links=[eno1])
        )
    swapped = uuids[6]
    eno1 = fleet_rows.nic(
        "52:54:00:00:01:00",
        "eno1",
        switch_id="00:1c:73:00:00:01",
        switch_name="tor-1",
        port_id="Ethernet1",
        pxe=True,
    )
    old = {"name": "/dev/sdb", "size": 480103981056, "model": "SSD", "serial": "S2"}
    new = {"name": "/dev/sdb", "size": 960197124096, "model": "SSD", "serial": "S7"}
    record = fleet_rows.machine(product="PowerEdge R750", disks=[new])
    rows.append(
        fleet_rows.run_row(
            swapped,
            record,
            name="db-<primary>",
            links=[eno1],
            changes=[
                fleet_rows.change("disk:S2", "removed", None, old, None),
                fleet_rows.change("disk:S7", "added", None, None, new),
            ],
        )
    )
    fleet_rows.insert(db, rows)
    db.dispose()
    return {"outlier": uuids[0], "swapped": swapped}


def _chromium(*args: str, profile: pathlib.Path) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM, "chromium is not installed (tools/ensure-packages.sh)"
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_page_in_a_browser(
    inspector: InspectorServer, tmp_path: pathlib.Path
) -> None:
    nodes = _fleet(inspector.database_url)
    page = f"{inspector.url}/fleet"
    shown = _chromium("--dump-dom", page, profile=tmp_path / "profile")
    assert shown.returncode == 0, shown.stderr[-2000:]
    dom = shown.stdout
    assert "<h1>Fleet</h1>" in dom, dom[:2000]
    # the outliers by product and fact, linked to their table
    assert "fleet/outliers?vendor=Dell+Inc.&amp;product=PowerEdge+R650" in dom
    # the changed node, its name escaped, linked (relatively)
    swapped = f'href="fleet/nodes/{nodes["swapped"]}">db-&lt;primary&gt;</a>'
    assert swapped in dom
    assert "disk:S7" in dom and "disk:S2" in dom
    # the duplicate port and the expected cabling (rack1-* only)
    assert "duplicate-port" in dom and "unexpected" not in dom

    node_page = _chromium(
        "--dump-dom",
        f"{inspector.url}/fleet/nodes/{nodes['swapped']}",
        profile=tmp_path / "profile",
    )
    assert "db-&lt;primary&gt;" in node_page.stdout
    assert "removed" in node_page.stdout and "960 GB" in node_page.stdout

    picture = tmp_path / "fleet.png"
    taken = _chromium(
        f"--screenshot={picture}",
        "--window-size=1280,860",
        "--hide-scrollbars",
        page,
        profile=tmp_path / "profile",
    )
    assert taken.returncode == 0 and picture.stat().st_size > 10_000, taken.stderr
    if "sqlite" in inspector.database_url and os.environ.get("INSPECTOR_DOC_IMAGES"):
        shutil.copyfile(picture, DOC_IMAGE)

    # the same facts through the API, for a client
    found = requests.get(f"{inspector.url}/v1/inventory/outliers", timeout=30).json()
    assert {(o["uuid"], o["fact"]) for o in found["outliers"]} == {
        (nodes["outlier"], "memory_mb")
    }


def _dom(page: str, profile: pathlib.Path) -> str:
    shown = _chromium("--dump-dom", page, profile=profile)
    assert shown.returncode == 0, shown.stderr[-2000:]
    return shown.stdout


def _follow(page: str, dom: str, pattern: str) -> str:
    """The URL of the first link of ``dom`` whose href matches
    ``pattern``, resolved against ``page`` as the browser does."""
    found = re.search(rf'href="({pattern})"', dom)
    assert found, (pattern, dom[-3000:])
    return urllib.parse.urljoin(page, html.unescape(found[1]))


def _rows(dom: str, kind: str) -> list[str]:
    return re.findall(rf'<tr class="{kind}">(.*?)</tr>', dom, re.S)


FLEET = 10_000


def test_filters_paging_and_a_node_at_10000_nodes(
    inspector: InspectorServer, tmp_path: pathlib.Path
) -> None:
    db = engine.Database(inspector.database_url)
    started = time.monotonic()
    fleet_rows.generate(db, FLEET, 2)
    db.dispose()
    seeded = time.monotonic() - started
    assert seeded < 120, seeded
    profile = tmp_path / "profile"
    base = f"{inspector.url}/fleet"

    overview = _dom(base, profile)
    # 8 models of 1,250 nodes each (and the 7 nodes of the test before)
    assert re.search(r'id="nodes-total">100\d\d<', overview), overview[:3000]
    products = _follow(
        base, overview, r"fleet/nodes\?vendor=Dell\+Inc\.&amp;product=Model\+3"
    )
    first = _dom(products, profile)
    assert "1–50 of 1250" in first and "page 1 of 25" in first
    assert len(_rows(first, "node-row")) == 50
    # paging: the next page, then the last
    second_url = _follow(products, first, r'\?[^"]*page=2')
    second = _dom(second_url, profile)
    assert "51–100 of 1250" in second
    last = _dom(_follow(second_url, second, r'\?[^"]*page=25'), profile)
    assert "1201–1250 of 1250" in last and 'rel="next"' not in last
    # sorting: memory ascending puts the model's outlier (half the memory) first
    by_memory = _dom(_follow(products, first, r'\?[^"]*sort=memory_mb'), profile)
    assert "node-06979" in _rows(by_memory, "node-row")[0]
    assert "64 GiB" in _rows(by_memory, "node-row")[0]
    # a fact filter, as the API takes it
    only = _dom(f"{products}&memory_mb=65536", profile)
    (row,) = _rows(only, "node-row")
    assert "node-06979" in row and "1–1 of 1" in only
    # the search: an exact name opens the node's page
    found = _dom(f"{base}/nodes?q=node-06979", profile)
    assert "<h1>node-06979</h1>" in found
    # the outliers by product and fact, then the node clicked through
    group = _follow(
        base,
        overview,
        r"fleet/outliers\?vendor=Dell\+Inc\.&amp;product=Model\+3&amp;fact=memory_mb",
    )
    outliers = _dom(group, profile)
    (outlier,) = _rows(outliers, "outlier")
    assert "node-06979" in outlier and "64 GiB" in outlier and "128 GiB" in outlier
    node_url = _follow(group, outliers, r"\.\./fleet/nodes/[0-9a-f-]{36}")
    node = _dom(node_url, profile)
    assert "<h1>node-06979</h1>" in node
    assert len(_rows(node, "run")) == 2 and "ours" in _rows(node, "run")[0]
    (nic, _other) = _rows(node, "nic")
    assert "tor-145" in nic and "Ethernet20" in nic and "25 Gb/s" in nic
    status = _follow(node_url, node, r"\.\./\.\./v1/introspection/[0-9a-f-]{36}")
    assert status == f"{inspector.url}/v1/introspection/{node_url.rsplit('/', 1)[1]}"
    # a mistake is a page that says it
    bad = _dom(f"{products}&page=26", profile)
    assert "Invalid page 26: there are 25 pages of 1250 rows" in bad


def test_a_malformed_expected_cabling_stops_the_start(tmp_path: pathlib.Path) -> None:
    cabling = tmp_path / "cabling.csv"
    cabling.write_text("rack1-*, eno1, tor-1, Ethernet1\nrack2-*, eno1\n")
    server = InspectorServer(
        tmp_path / "work",
        f"http://127.0.0.1:{loopback.free_port()}",
        options={"inventory": {"expected_cabling": str(cabling)}},
    )
    with pytest.raises(RuntimeError, match="did not start") as refused:
        server.start(timeout=30)
    assert f"{cabling} line 2: expected 4 comma-separated fields" in str(refused.value)
