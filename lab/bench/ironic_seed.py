"""Nodes and inspections written straight into the lab Ironic's database,
as Ironic itself writes them (``ironic.db.api``): enrolling 10,000 nodes
through Ironic's API takes over half an hour here, this a few minutes.

Runs with the Ironic virtualenv's python and imports only the standard
library and Ironic (``python -m lab.bench.ironic_seed --config-file
ironic.conf nodes|inspect FILE``). FILE holds one JSON object a line:
``uuid``, ``inventory``, ``plugin_data``, and for ``nodes`` ``name``,
``started_at`` and ``finished_at`` (ISO 8601, UTC).

- ``nodes``: each a new fake-hardware node (inspect interface ``agent``,
  ``manageable``) that Ironic inspected at those times, with its
  inventory.
- ``inspect``: each an existing node's new inspection ending now, paced
  evenly over ``--over`` seconds: its inventory stored, then its
  inspection times set (in that order, as Ironic's agent inspection
  stores the data before the node leaves ``inspect wait``). ``--result``
  gets a line per node with the finish written (``uuid``,
  ``finished_at``), flushed as it goes.
"""

import argparse
import datetime
import json
import sys
import time
from collections.abc import Iterator
from typing import Any

INTERFACES = {
    "bios_interface": "fake",
    "boot_interface": "fake",
    "console_interface": "fake",
    "deploy_interface": "fake",
    "firmware_interface": "fake",
    "inspect_interface": "agent",
    "management_interface": "fake",
    "network_interface": "noop",
    "power_interface": "fake",
    "raid_interface": "fake",
    "rescue_interface": "fake",
    "storage_interface": "noop",
    "vendor_interface": "fake",
}
"""What Ironic's API would have given a fake-hardware node in the lab's
Ironic (the first enabled interface of each kind, agent inspection)."""


def _lines(path: str) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as source:
        for line in source:
            if line.strip():
                yield json.loads(line)


def _when(text: str) -> datetime.datetime:
    """ISO 8601 as Ironic stores times: naive UTC."""
    when = datetime.datetime.fromisoformat(text)
    if when.tzinfo is not None:
        when = when.astimezone(datetime.UTC).replace(tzinfo=None)
    return when


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def create_nodes(db: Any, versions: dict[str, str], path: str) -> int:
    """Each line a node Ironic inspected once; how many were written."""
    count = 0
    for entry in _lines(path):
        node = db.create_node(
            {
                "uuid": entry["uuid"],
                "name": entry["name"],
                "version": versions["node"],
                "driver": "fake-hardware",
                "provision_state": "manageable",
                "power_state": "power off",
                "inspection_started_at": _when(entry["started_at"]),
                "inspection_finished_at": _when(entry["finished_at"]),
                **INTERFACES,
            }
        )
        _store(db, versions, node.id, entry)
        count += 1
    return count


def _store(db: Any, versions: dict[str, str], node_id: int, entry: Any) -> None:
    db.create_node_inventory(
        {
            "node_id": node_id,
            "version": versions["inventory"],
            "inventory_data": entry["inventory"],
            "plugin_data": entry["plugin_data"],
        }
    )


def inspect(
    db: Any, versions: dict[str, str], path: str, over: float, result: str
) -> int:
    """Each line a new inspection of an existing node ending now, the
    ends spread evenly over ``over`` seconds; how many were written."""
    entries = list(_lines(path))
    step = over / len(entries) if entries else 0.0
    began = time.monotonic()
    with open(result, "w", encoding="utf-8") as out:
        for index, entry in enumerate(entries):
            delay = began + index * step - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            node = db.get_node_by_uuid(entry["uuid"])
            started = _now()
            _store(db, versions, node.id, entry)
            finished = _now()
            db.update_node(
                node.id,
                {"inspection_started_at": started, "inspection_finished_at": finished},
            )
            out.write(
                json.dumps({"uuid": entry["uuid"], "finished_at": finished.isoformat()})
                + "\n"
            )
            out.flush()
    return len(entries)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.bench.ironic_seed")
    parser.add_argument("--config-file", required=True, help="the lab Ironic's")
    sub = parser.add_subparsers(dest="command", required=True)
    nodes = sub.add_parser("nodes", help="new nodes, each inspected once")
    nodes.add_argument("file")
    again = sub.add_parser("inspect", help="new inspections of existing nodes")
    again.add_argument("file")
    again.add_argument("--over", type=float, default=60.0, help="seconds")
    again.add_argument("--result", required=True)
    args = parser.parse_args(argv)

    # Ironic's modules exist in its virtualenv only
    from ironic.conf import CONF
    from ironic.db import api as db_api
    from ironic.objects import node, node_inventory

    CONF(["--config-file", args.config_file], project="ironic")
    db = db_api.get_instance()
    # the object versions Ironic's own writes set (its API refuses rows
    # without one)
    versions = {
        "node": node.Node.VERSION,
        "inventory": node_inventory.NodeInventory.VERSION,
    }
    began = time.monotonic()
    if args.command == "nodes":
        count = create_nodes(db, versions, args.file)
    else:
        count = inspect(db, versions, args.file, args.over, args.result)
    print(f"{args.command}: {count} in {time.monotonic() - began:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
