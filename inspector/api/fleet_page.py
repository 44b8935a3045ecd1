"""GET /fleet: the fleet view as one server-rendered page (no JavaScript):
the summary by product, the outliers, the cabling problems and the newest
hardware changes, each linked to the node's own page, /fleet/nodes/<uuid>.

Not versioned; the same authentication and policy as the API. Every value
shown is escaped (node and switch names are user data): the templates
are rendered with autoescaping on.
"""

import json
from typing import Any

import flask

from inspector import exceptions
from inspector.api import fleet_view
from inspector.api.fleet import cabling_rules
from inspector.db import fleet
from inspector.fleet.live import LiveFleet
from inspector.runtime import Runtime

blueprint = flask.Blueprint(
    "fleet", __name__, url_prefix="/fleet", template_folder="templates"
)

SHOWN = 200
"""Most rows of one table the page shows (the API has them all)."""


@blueprint.app_template_filter("shown")
def shown(value: Any) -> str:
    """A value of a change as text (escaped by the template like the rest):
    a component's whole record as JSON, nothing for null."""
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _rt() -> Runtime:
    rt: Runtime = flask.current_app.config["RUNTIME"]
    return rt


def _page(template: str, **context: Any) -> flask.Response:
    return _html(flask.render_template(template, **context))


def _html(text: str) -> flask.Response:
    response = flask.make_response(text)
    response.headers["Content-Type"] = "text/html; charset=utf-8"
    response.headers["Cache-Control"] = "no-store"
    # nothing on the page runs or loads anything
    response.headers["Content-Security-Policy"] = (
        "default-src 'none'; style-src 'unsafe-inline'"
    )
    return response


@blueprint.get("")
@blueprint.get("/")
def get_fleet() -> flask.Response:
    rt = _rt()
    opts = rt.conf.inventory
    # the whole page is a function of the fleet view (the newest changes
    # are runs too) and of these: rendered once while they hold
    rules = cabling_rules(rt)
    depends = (
        tuple(opts.peer_facts),
        opts.min_peers,
        opts.peer_share,
        opts.page_changes,
        rules,
    )
    held = fleet_view.of(rt)
    return _html(held.cached(("page", depends), lambda: _render(rt, rules)))


def _parts(live: LiveFleet, rt: Runtime, rules: Any) -> dict[str, Any]:
    """What the page shows of the view, each kept up to date as runs
    came: the tables are bounded (:data:`SHOWN`), their names looked up
    for the rows shown only."""
    opts = rt.conf.inventory
    peers = live.peer_groups(tuple(opts.peer_facts), opts.min_peers, opts.peer_share)
    found = peers.outliers()
    ports = live.switch_ports(rules)
    problems = ports.problems()
    shown = {o["uuid"] for o in found[:SHOWN]}
    shown.update(uuid for p in problems[:SHOWN] for uuid in p["nodes"])
    names = {}
    for uuid in shown:
        held = live.get(uuid)
        names[uuid] = held[0].get("name") if held else None
    return {
        "total": len(live),
        "products": live.products(),
        "outliers": found[:SHOWN],
        "outliers_total": len(found),
        "problems": problems[:SHOWN],
        "problems_total": len(problems),
        "links_total": ports.links_count,
        "names": names,
    }


def _render(rt: Runtime, rules: Any) -> str:
    opts = rt.conf.inventory
    held = fleet_view.of(rt)
    parts = held.view(lambda live: _parts(live, rt, rules))
    changes = held.recent_changes(opts.page_changes)
    return flask.render_template(
        "fleet.html",
        changes=changes,
        peer_facts=", ".join(opts.peer_facts),
        **parts,
    )


@blueprint.get("/nodes/<node_id>")
def get_fleet_node(node_id: str) -> flask.Response:
    rt = _rt()
    found = fleet.node(rt.db, node_id.lower(), rt.conf.inventory.page_changes)
    if found is None:
        raise exceptions.NotFound(
            f"Node {node_id[:64]} has no hardware record (never introspected, or "
            "not since the history began)"
        )
    return _page("fleet_node.html", node=found["facts"], runs=found["runs"])
