"""GET /fleet/nodes/<name-or-uuid>: one node of the fleet view as a page:
its latest hardware record (facts, NICs with their switch and port,
disks), its runs newest first (failed ones too, each with who made it
and what it changed) a page at a time, and links to its introspection
status and, when the service knows Ironic's endpoint, to the node in
Ironic. A name is looked up in the fleet view this process holds (its
index of names, kept up to date node by node)."""

import uuid as uuidlib
from typing import Any

import flask

from inspector import exceptions
from inspector.api import fleet_html, fleet_tables, fleet_view
from inspector.db import fleet

RUNS_SHOWN = 20
"""Runs per page of a node's page."""


def _is_uuid(text: str) -> bool:
    try:
        return str(uuidlib.UUID(text)) == text.lower()
    except ValueError:
        return False


def find(held: fleet_view.HeldFleet, text: str) -> str | None:
    """The node whose UUID or name is ``text`` exactly, if one only."""
    if _is_uuid(text):
        uuid = text.lower()
        return uuid if held.view(lambda live: uuid in live) else None
    found = held.named(text)
    return found[0] if len(found) == 1 else None


def _resolve(held: fleet_view.HeldFleet, node_id: str) -> str:
    """The UUID of the node ``node_id`` names (its UUID or its name).

    :raises NotFound: no node of the fleet view has that name.
    :raises InvalidInput: several have.
    """
    if _is_uuid(node_id):
        return node_id.lower()
    found = held.named(node_id)
    if not found:
        raise exceptions.NotFound(
            f"No node named {node_id[:64]!r} has a hardware record (never "
            "introspected, or not since the history began); search by part of "
            "its name or UUID on the nodes' page"
        )
    if len(found) > 1:
        raise exceptions.InvalidInput(
            f"{len(found)} nodes were last seen named {node_id[:64]!r} "
            f"({', '.join(sorted(found))}): open one by its UUID"
        )
    return found[0]


def _nics(record: dict[str, Any], links: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The record's NICs by name, each with whether the node booted from
    it (its link's ``pxe``)."""
    booted = {link.get("mac") for link in links if link.get("pxe")}
    nics = [
        {"mac": mac, "pxe": mac in booted, **nic}
        for mac, nic in (record.get("nics") or {}).items()
    ]
    return sorted(nics, key=lambda n: (n.get("name") or "", n["mac"]))


def _disks(record: dict[str, Any]) -> list[dict[str, Any]]:
    disks = list((record.get("disks") or {}).values())
    return sorted(disks, key=lambda d: d.get("name") or "")


def _ironic_link(uuid: str) -> str | None:
    """The node in Ironic's API when the service is told Ironic's
    endpoint (``[ironic]endpoint_override``); None otherwise (the
    catalog's is not looked up for a page)."""
    endpoint = fleet_html.rt().conf.ironic.endpoint_override
    if not endpoint:
        return None
    base = str(endpoint).rstrip("/")
    base = base[: -len("/v1")] if base.endswith("/v1") else base
    return f"{base}/v1/nodes/{uuid}"


def get_fleet_node(node_id: str) -> flask.Response:
    args = flask.request.args
    for key in args:
        if key != "page":
            raise exceptions.InvalidInput(
                f"Unknown parameter {key[:64]!r}; a node's page takes page"
            )
    number = fleet_tables.page_number(args)
    rt = fleet_html.rt()
    uuid = _resolve(fleet_view.of(rt), node_id)
    found = fleet.node(rt.db, uuid, (number - 1) * RUNS_SHOWN, RUNS_SHOWN)
    if found is None:
        raise exceptions.NotFound(
            f"Node {node_id[:64]} has no hardware record (never introspected, or "
            "not since the history began)"
        )
    count, runs = found["runs_total"], found["runs"]
    pages = max((count + RUNS_SHOWN - 1) // RUNS_SHOWN, 1)
    if number > pages:
        raise exceptions.InvalidInput(
            f"Invalid page {number}: this node's {count} runs fill {pages} "
            f"page{'' if pages == 1 else 's'}"
        )
    record = found["record"]
    return fleet_html.page(
        "fleet_node.html",
        node=found["facts"],
        latest=found["run"],
        status=found["status"],
        error=found["error"],
        nics=_nics(record, found["links"]),
        disks=_disks(record),
        bmc=record.get("bmc") or {},
        runs=runs,
        runs_total=count,
        number=number,
        pages=pages,
        ironic=_ironic_link(uuid),
        link=fleet_tables.link,
        args=args,
    )
