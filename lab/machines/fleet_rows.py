"""Rows of the hardware history (``hardware_runs``) in the shared design's
shape, written straight into the database: the fleet view's tests and its
benchmark use them until (and besides) the service writing its own.

Each node gets its runs and its ``introspections`` row pointing at its
latest run (``introspections.hardware_run``), as processing leaves them.
"""

import datetime
import json
import random
import uuid as uuidlib
from collections.abc import Iterable, Sequence
from typing import Any, cast

import sqlalchemy as sa

from inspector.db import models
from inspector.db.engine import Database

RUNS = cast(sa.Table, models.HardwareRun.__table__)
NODES = cast(sa.Table, models.Introspection.__table__)

BASE_TIME = datetime.datetime(2026, 1, 1)


def nic(
    mac: str,
    name: str,
    *,
    switch_id: str | None = None,
    switch_name: str | None = None,
    port_id: str | None = None,
    pxe: bool = False,
) -> dict[str, Any]:
    """One NIC: its record entry and its ``links`` entry share these."""
    return {
        "mac": mac.lower(),
        "name": name,
        "pxe": pxe,
        "switch_id": switch_id,
        "switch_name": switch_name,
        "port_id": port_id,
    }


def machine(
    *,
    vendor: str = "Dell Inc.",
    product: str = "PowerEdge R650",
    serial: str | None = None,
    bios_version: str = "1.10.2",
    cpus: int = 64,
    cpu_model: str = "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz",
    cpu_arch: str = "x86_64",
    memory_mb: int = 262144,
    disks: Sequence[dict[str, Any]] | None = None,
    nics: Sequence[dict[str, Any]] = (),
    bmc: str = "10.0.0.1",
) -> dict[str, Any]:
    """A hardware record (the shared design's JSON) of one machine."""
    if disks is None:
        disks = [
            {"name": "/dev/sda", "size": 480103981056, "model": "SSD", "serial": "S1"},
            {"name": "/dev/sdb", "size": 480103981056, "model": "SSD", "serial": "S2"},
        ]
    return {
        "system": {
            "vendor": vendor,
            "product": product,
            "serial": serial or uuidlib.uuid4().hex[:10].upper(),
            "bios_version": bios_version,
        },
        "cpu": {"model": cpu_model, "count": cpus, "architecture": cpu_arch},
        "memory": {"total_mb": memory_mb},
        "dimms": {},
        "disks": {
            d.get("serial") or d.get("wwn") or d["name"]: {
                "name": d["name"],
                "size": d["size"],
                "model": d.get("model"),
                "serial": d.get("serial"),
                "wwn": d.get("wwn"),
            }
            for d in disks
        },
        "nics": {
            n["mac"]: {
                "name": n["name"],
                "pci_address": None,
                "speed_mbps": 25000,
                "switch_chassis_id": n["switch_id"],
                "switch_system_name": n["switch_name"],
                "switch_port_id": n["port_id"],
                "vlans": [],
            }
            for n in nics
        },
        "bmc": {"ipv4": bmc, "ipv6": None},
    }


def run_row(
    node_uuid: str,
    record: dict[str, Any],
    *,
    name: str | None = None,
    links: Sequence[dict[str, Any]] = (),
    finished_at: datetime.datetime | None = None,
    changes: Sequence[dict[str, Any]] = (),
    run: str | None = None,
) -> dict[str, Any]:
    """One ``hardware_runs`` row of a finished run with ``record``."""
    finished_at = finished_at or models.utcnow()
    run = run or str(uuidlib.uuid4())
    local_gb = 0
    if record["disks"]:
        # Ironic's local_gb: the root disk's size in GiB, less one
        biggest = max(d["size"] for d in record["disks"].values())
        local_gb = max(biggest // 2**30 - 1, 0)
    return {
        "run": run,
        "node_uuid": node_uuid,
        "node_name": name,
        "started_at": finished_at - datetime.timedelta(minutes=5),
        "finished_at": finished_at,
        "state": "finished",
        "error": None,
        "record": json.dumps(record, sort_keys=True),
        "changes": json.dumps(
            [{"run": run, "finished_at": finished_at.isoformat(), **c} for c in changes]
        ),
        "change_count": len(changes),
        "links": json.dumps(list(links)),
        "cpus": record["cpu"]["count"],
        "cpu_model": record["cpu"]["model"],
        "cpu_arch": record["cpu"]["architecture"],
        "memory_mb": record["memory"]["total_mb"],
        "local_gb": local_gb,
        "disks": len(record["disks"]),
        "nics": len(record["nics"]),
        "vendor": record["system"]["vendor"],
        "product": record["system"]["product"],
        "serial": record["system"]["serial"],
        "bios_version": record["system"]["bios_version"],
    }


def change(
    component: str, kind: str, field: str | None, before: Any, after: Any
) -> dict[str, Any]:
    """A change (without its run and time: :func:`run_row` adds them)."""
    return {
        "component": component,
        "kind": kind,
        "field": field,
        "before": before,
        "after": after,
    }


def insert(db: Database, rows: Iterable[dict[str, Any]]) -> None:
    """Write ``rows`` and point each node's ``introspections`` row (made
    when missing, as a finished introspection) at its newest run."""
    rows = list(rows)
    latest: dict[str, dict[str, Any]] = {}
    for row in rows:
        found = latest.get(row["node_uuid"])
        if found is None or row["finished_at"] >= found["finished_at"]:
            latest[row["node_uuid"]] = row
    with db.begin() as conn:
        for start in range(0, len(rows), 2000):
            conn.execute(sa.insert(RUNS), rows[start : start + 2000])
        known = {
            r.uuid
            for r in conn.execute(
                sa.select(NODES.c.uuid).where(NODES.c.uuid.in_(list(latest)))
            )
        }
        new = [
            {
                "uuid": node,
                "state": "finished",
                "version": 1,
                "started_at": row["started_at"],
                "finished_at": row["finished_at"],
                "manage_boot": True,
                "hardware_run": row["run"],
            }
            for node, row in latest.items()
            if node not in known
        ]
        for start in range(0, len(new), 2000):
            conn.execute(sa.insert(NODES), new[start : start + 2000])
        point = (
            sa.update(NODES)
            .where(NODES.c.uuid == sa.bindparam("node"))
            .values(hardware_run=sa.bindparam("latest"))
        )
        owned = [
            {"node": node, "latest": row["run"]}
            for node, row in latest.items()
            if node in known
        ]
        if owned:
            conn.execute(point, owned)


def generate(
    db: Database, nodes: int, runs: int, *, seed: int = 32, products: int = 8
) -> list[str]:
    """A fleet of ``nodes`` machines with ``runs`` runs each, written in
    the order the service would write them (every node's first run, then
    every node's second...); about one run in ten changes something, a few
    nodes are outliers and a few ports are cabled twice. Returns the node
    UUIDs."""
    rng = random.Random(seed)
    uuids = [
        str(uuidlib.UUID(int=rng.getrandbits(128), version=4)) for _ in range(nodes)
    ]
    machines = [generated(index, products) for index in range(nodes)]
    latest: dict[str, dict[str, Any]] = {}
    for number in range(runs):
        batch = []
        for index, node in enumerate(uuids):
            name, record, nics = machines[index]
            finished = BASE_TIME + datetime.timedelta(hours=number * 24, seconds=index)
            changed = []
            if number and rng.random() < 0.1:
                before = f"1.{number - 1}"
                changed = [change("system", "changed", "bios_version", before, "x")]
            row = run_row(
                node,
                record,
                name=name,
                links=nics,
                finished_at=finished,
                changes=changed,
            )
            batch.append(row)
            latest[node] = row
        with db.begin() as conn:
            for start in range(0, len(batch), 5000):
                conn.execute(sa.insert(RUNS), batch[start : start + 5000])
    with db.begin() as conn:
        rows = [
            {
                "uuid": node,
                "state": "finished",
                "version": 1,
                "started_at": row["started_at"],
                "finished_at": row["finished_at"],
                "manage_boot": True,
                "hardware_run": row["run"],
            }
            for node, row in latest.items()
        ]
        for start in range(0, len(rows), 5000):
            conn.execute(sa.insert(NODES), rows[start : start + 5000])
    return uuids


def generated(
    index: int,
    products: int = 8,
    *,
    memory_mb: int | None = None,
    port: str | None = None,
    product: int | None = None,
    bios_version: str = "1.10.2",
) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    """Node ``index`` of a generated fleet (of ``products`` models): its
    name, record and NICs."""
    if product is None:
        product = index % products
    memory = 131072 * (1 + product % 3)
    if index % 997 == 0:
        memory //= 2  # an outlier of its product
    memory = memory_mb or memory
    switch = f"00:1c:73:00:{index // 48 // 256:02x}:{index // 48 % 256:02x}"
    if port is None:
        port = f"Ethernet{index % 48 + 1}"
        if index % 1999 == 1:
            port = "Ethernet1"  # cabled onto a taken port
    mac = f"52:54:{index >> 16 & 255:02x}:{index >> 8 & 255:02x}:{index & 255:02x}:00"
    nics = [
        nic(
            mac,
            "eno1",
            switch_id=switch,
            switch_name=f"tor-{index // 48}",
            port_id=port,
            pxe=True,
        ),
        nic(mac[:-2] + "01", "eno2"),
    ]
    record = machine(
        product=f"Model {product}",
        serial=f"SN{index:08d}",
        memory_mb=memory,
        bios_version=bios_version,
        cpus=32 * (1 + product % 2),
        nics=nics,
        bmc=f"10.{index >> 16 & 255}.{index >> 8 & 255}.{index & 255}",
    )
    return f"node-{index:05d}", record, nics
