"""GET /fleet and its pages: the fleet view as server-rendered HTML (no
JavaScript). The overview (nodes by product, outliers by product and
fact, cabling problems by kind, the newest hardware changes) links to
one page per table, each filtered, sorted and paged by its query
(``/fleet/nodes?product=R650&sort=-memory_mb&page=2``), and every node
to its own page (:mod:`inspector.api.fleet_node_page`).

Not versioned; the same authentication and policy as the API. Every value
shown is escaped (node and switch names are user data): the templates
are rendered with autoescaping on. Every link is relative. Each page is
rendered once per query while the fleet view does not change.
"""

import collections
import datetime
from collections.abc import Callable
from typing import Any

import flask

from inspector import exceptions
from inspector.api import (
    fleet_html,
    fleet_node_page,
    fleet_tables,
    fleet_text,
    fleet_view,
)
from inspector.api.fleet import cabling_rules
from inspector.db import fleet
from inspector.fleet import queries
from inspector.fleet.live import LiveFleet

blueprint = flask.Blueprint(
    "fleet", __name__, url_prefix="/fleet", template_folder="templates"
)
fleet_text.register(blueprint.app_template_filter)
blueprint.register_error_handler(exceptions.InspectorError, fleet_html.error_page)
blueprint.add_url_rule(
    "/nodes/<node_id>", view_func=fleet_node_page.get_fleet_node, methods=["GET"]
)

SHOWN = 200
"""Most rows of one table of the overview (the groups: their own pages
list every row)."""

NODE_COLUMNS = (
    "name",
    "product",
    "cpus",
    "memory_mb",
    "local_gb",
    "disks",
    "nics",
    "bios_version",
    "finished_at",
)
"""The columns of the nodes' table (sortable by any fact besides)."""
FILTER_LINKS = frozenset(
    {"product", "cpus", "memory_mb", "local_gb", "disks", "nics", "bios_version"}
)
"""Columns whose values link to the nodes that share them."""
HEADINGS = {
    "name": "Node",
    "uuid": "UUID",
    "product": "Product",
    "cpus": "CPUs",
    "memory_mb": "Memory",
    "local_gb": "Local disk",
    "disks": "Disks",
    "nics": "NICs",
    "bios_version": "BIOS",
    "finished_at": "Inspected",
    "fact": "Fact",
    "value": "Has",
    "expected": "Peers have",
    "peers": "Peers",
    "kind": "Kind",
    "detail": "Detail",
}
NODE_PARAMS = frozenset({"sort", "page", "q"})
"""Query parameters of the nodes' table that are not filters on facts."""
OUTLIER_COLUMNS = ("name", "product", "fact", "value", "expected", "peers")
OUTLIER_PARAMS = frozenset({"sort", "page", "vendor", "product", "fact"})
CABLING_COLUMNS = ("kind", "detail")
CABLING_PARAMS = frozenset({"sort", "page", "kind"})
CABLING_KINDS = ("no-neighbour", "duplicate-port", "unexpected")


def _cached_page(compute: Callable[[], str], *depends: Any) -> flask.Response:
    """``compute()``'s HTML, rendered once per path and query while the
    fleet view does not change."""
    request = flask.request
    key = ("page", request.path, request.query_string, *depends)
    held = fleet_view.of(fleet_html.rt())
    return fleet_html.html(held.cached(key, compute))


def _peer_options() -> tuple[Any, ...]:
    opts = fleet_html.rt().conf.inventory
    return tuple(opts.peer_facts), opts.min_peers, opts.peer_share


def _outliers(live: LiveFleet) -> list[dict[str, Any]]:
    """The outliers, each with its node's name, vendor and product."""
    peer_facts, min_peers, share = _peer_options()
    found = []
    for outlier in live.peer_groups(peer_facts, min_peers, share).outliers():
        held = live.get(outlier["uuid"])
        facts = held[0] if held else {}
        found.append(
            {
                **outlier,
                "name": facts.get("name"),
                "vendor": facts.get("vendor"),
                "product": facts.get("product"),
            }
        )
    return found


def _names(live: LiveFleet, uuids: set[str]) -> dict[str, str | None]:
    names = {}
    for uuid in uuids:
        held = live.get(uuid)
        names[uuid] = held[0].get("name") if held else None
    return names


def _overview(live: LiveFleet, rules: Any) -> dict[str, Any]:
    """What the overview shows of the view, each kept up to date as runs
    came: counts and groups, bounded (:data:`SHOWN`)."""
    found = _outliers(live)
    groups = collections.Counter((o["vendor"], o["product"], o["fact"]) for o in found)
    ports = live.switch_ports(rules)
    problems = ports.problems()
    kinds = collections.Counter(p["kind"] for p in problems)
    return {
        "total": len(live),
        "products": live.products()[:SHOWN],
        "products_total": len(live.products()),
        "outlier_groups": sorted(
            groups.items(), key=lambda g: (-g[1], [str(v) for v in g[0]])
        )[:SHOWN],
        "outliers_total": len(found),
        "problem_kinds": sorted(kinds.items(), key=lambda k: (-k[1], k[0])),
        "problems_total": len(problems),
        "links_total": ports.links_count,
    }


@blueprint.get("")
@blueprint.get("/")
def get_fleet() -> flask.Response:
    rt = fleet_html.rt()
    opts = rt.conf.inventory
    # the page is a function of the fleet view (the newest changes are
    # runs too) and of these
    rules = cabling_rules(rt)
    held = fleet_view.of(rt)

    def compute() -> str:
        parts = held.view(lambda live: _overview(live, rules))
        changes = held.recent_changes(opts.page_changes)
        return fleet_html.render(
            "fleet.html",
            changes=changes,
            peer_facts=", ".join(opts.peer_facts),
            link=_filter_link,
            **parts,
        )

    return _cached_page(compute, _peer_options(), opts.page_changes, rules)


def _filter_link(**filters: Any) -> str:
    """The query of the nodes' page for these filters (a None value: no
    filter on that fact, it cannot be written as one)."""
    return fleet_tables.link({}, **{k: v for k, v in filters.items() if v is not None})


def _node_value(node: dict[str, Any], column: str) -> Any:
    return node.get(column)


def _search(nodes: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """The nodes whose name or UUID holds ``text`` (any case)."""
    text = text.strip().lower()
    return [
        n
        for n in nodes
        if text in n["uuid"] or (n.get("name") and text in n["name"].lower())
    ]


@blueprint.get("/nodes")
def list_fleet_nodes() -> flask.Response:
    args = flask.request.args
    if args.get("fact"):  # the form's "fact = value": as the API writes it
        fact, value = args["fact"], args.get("value", "")
        queries.check([fact], "the filters")
        rest = {k: v for k, v in args.items() if k not in ("fact", "value")}
        return fleet_html.redirect(fleet_tables.link(rest, **{fact: value}))
    filters = {k: v for k, v in args.items() if k not in NODE_PARAMS}
    how = fleet_tables.order(args, ("uuid", *queries.FACTS), fleet_tables.Order("name"))
    number = fleet_tables.page_number(args)
    text = args.get("q", "").strip()
    rt = fleet_html.rt()
    held = fleet_view.of(rt)
    if text:
        exact = fleet_node_page.find(held, text)
        if exact is not None:
            return fleet_html.redirect(f"{fleet_html.up()}fleet/nodes/{exact}")

    def compute() -> str:
        nodes = held.view(lambda live: live.facts())
        found = list(queries.matching(nodes, filters))
        if text:
            found = _search(found, text)
        rows = fleet_tables.sort(found, how, _node_value)
        shown = fleet_tables.page(rows, number)
        products = held.view(lambda live: live.products())
        return fleet_html.render(
            "fleet_nodes.html",
            nodes=shown,
            order=how,
            args=args,
            filters=filters,
            search=text,
            columns=NODE_COLUMNS,
            filter_links=FILTER_LINKS,
            headings=HEADINGS,
            facts=queries.FACTS,
            products=sorted({p for (_v, p), _c in products if p is not None}),
            link=fleet_tables.link,
            header=fleet_tables.header,
        )

    return _cached_page(compute)


def _unknown(args: Any, known: frozenset[str]) -> None:
    for key in args:
        if key not in known:
            raise exceptions.InvalidInput(
                f"Unknown parameter {key[:64]!r}; this page takes "
                f"{', '.join(sorted(known))}"
            )


@blueprint.get("/outliers")
def list_fleet_outliers() -> flask.Response:
    args = flask.request.args
    _unknown(args, OUTLIER_PARAMS)
    fact = args.get("fact")
    if fact is not None:
        queries.check([fact], "fact")
    how = fleet_tables.order(args, OUTLIER_COLUMNS, fleet_tables.Order("name"))
    number = fleet_tables.page_number(args)
    wanted = {k: args[k] for k in ("vendor", "product", "fact") if k in args}
    held = fleet_view.of(fleet_html.rt())

    def compute() -> str:
        found = held.view(_outliers)
        rows = [o for o in found if all(str(o[k]) == v for k, v in wanted.items())]
        shown = fleet_tables.page(fleet_tables.sort(rows, how, _node_value), number)
        return fleet_html.render(
            "fleet_outliers.html",
            outliers=shown,
            order=how,
            args=args,
            wanted=wanted,
            columns=OUTLIER_COLUMNS,
            headings=HEADINGS,
            peer_facts=", ".join(_peer_options()[0]),
            link=fleet_tables.link,
            header=fleet_tables.header,
        )

    return _cached_page(compute, _peer_options())


@blueprint.get("/cabling")
def list_fleet_cabling() -> flask.Response:
    args = flask.request.args
    _unknown(args, CABLING_PARAMS)
    kind = args.get("kind")
    if kind is not None and kind not in CABLING_KINDS:
        raise exceptions.InvalidInput(
            f"Unknown kind of cabling problem {kind[:64]!r}; the kinds are "
            f"{', '.join(CABLING_KINDS)}"
        )
    how = fleet_tables.order(args, CABLING_COLUMNS, fleet_tables.Order("kind"))
    number = fleet_tables.page_number(args)
    rt = fleet_html.rt()
    rules = cabling_rules(rt)
    held = fleet_view.of(rt)

    def compute() -> str:
        def read(live: LiveFleet) -> tuple[Any, dict[str, str | None]]:
            found = live.switch_ports(rules).problems()
            rows = [p for p in found if kind is None or p["kind"] == kind]
            rows = fleet_tables.sort(rows, how, _node_value)
            shown = fleet_tables.page(rows, number)
            uuids = {u for p in shown.rows for u in p["nodes"]}
            return shown, _names(live, uuids)

        shown, names = held.view(read)
        return fleet_html.render(
            "fleet_cabling.html",
            problems=shown,
            names=names,
            order=how,
            args=args,
            kind=kind,
            kinds=CABLING_KINDS,
            columns=CABLING_COLUMNS,
            headings=HEADINGS,
            link=fleet_tables.link,
            header=fleet_tables.header,
        )

    return _cached_page(compute, rules)


@blueprint.get("/changes")
def list_fleet_changes() -> flask.Response:
    """The fleet's runs that changed something, newest first, a page at a
    time from the run ``after`` (the last of the page before): the
    runs' time index is read from there, at any depth."""
    args = flask.request.args
    _unknown(args, frozenset({"after"}))
    after = args.get("after")
    if after is not None:
        after = after.strip().lower()
    rt = fleet_html.rt()
    held = fleet_view.of(rt)

    def compute() -> str:
        if after is None:
            runs = held.recent_changes(fleet_tables.ROWS + 1)
        else:
            mark = fleet.run_end(rt.db, after)
            if mark is None:
                raise exceptions.InvalidInput(
                    f"Run {after[:64]!r} is no run of the history (pruned since, "
                    "or mistyped): start again from the newest changes"
                )
            at = datetime.datetime.fromisoformat(mark)
            runs = fleet.changes_before(rt.db, at, after, fleet_tables.ROWS + 1)
        more = len(runs) > fleet_tables.ROWS
        return fleet_html.render(
            "fleet_changes.html",
            changes=runs[: fleet_tables.ROWS],
            after=runs[fleet_tables.ROWS - 1]["run"] if more else None,
            first=after is None,
        )

    return _cached_page(compute)
