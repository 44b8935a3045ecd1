"""``openstack baremetal introspection inventory list|summary|outliers|
cabling``: the fleet view (API 1.23) in the stock client's command group,
through the client's keystone session as :mod:`inspector.osc.history`
does. Loaded only by OpenStackClient."""

from typing import Any

from cliff import lister

from inspector import arguments
from inspector.osc.history import cell, get


def _add_filter(parser: Any) -> None:
    parser.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="FACT=VALUE",
        help="only nodes with this value of a fact (repeatable)",
    )


class _FleetLister(lister.Lister):
    def _get(self, path: str, params: dict[str, Any]) -> Any:
        # OpenStackClient's app has a client manager; cliff's base App has not
        manager = getattr(self.app, "client_manager")  # noqa: B009
        return get(manager, path, params)


class InventoryList(_FleetLister):
    """List every node's latest hardware facts (API 1.23)."""

    def get_parser(self, prog_name: str) -> Any:
        parser = super().get_parser(prog_name)
        parser.add_argument("--fields", help="comma-separated facts (default: all)")
        parser.add_argument("--limit", type=int, default=None)
        parser.add_argument("--marker", help="the UUID of the last node seen")
        _add_filter(parser)
        return parser

    def take_action(self, parsed_args: Any) -> tuple[tuple[str, ...], list[Any]]:
        params: dict[str, Any] = arguments.fact_filters(parsed_args.filter)
        for name in ("fields", "limit", "marker"):
            if getattr(parsed_args, name) is not None:
                params[name] = getattr(parsed_args, name)
        nodes = self._get("/v1/inventory", params)["nodes"]
        columns: tuple[str, ...] = tuple(nodes[0]) if nodes else ("uuid",)
        return columns, [tuple(cell(n.get(c)) for c in columns) for n in nodes]


class InventorySummary(_FleetLister):
    """Count the nodes per value of a fact (API 1.23)."""

    def get_parser(self, prog_name: str) -> Any:
        parser = super().get_parser(prog_name)
        parser.add_argument("--group-by", dest="group_by", default="product")
        _add_filter(parser)
        return parser

    def take_action(self, parsed_args: Any) -> tuple[tuple[str, ...], list[Any]]:
        params = {
            "group_by": parsed_args.group_by,
            **arguments.fact_filters(parsed_args.filter),
        }
        groups = self._get("/v1/inventory/summary", params)["groups"]
        return ("Value", "Count"), [(g["value"], g["count"]) for g in groups]


class InventoryOutliers(_FleetLister):
    """List the nodes unlike most of their peers (API 1.23)."""

    def take_action(self, parsed_args: Any) -> tuple[tuple[str, ...], list[Any]]:
        found = self._get("/v1/inventory/outliers", {})["outliers"]
        fields = ("uuid", "fact", "value", "expected", "peers")
        return (
            ("Node", "Fact", "Value", "Expected", "Peers"),
            [tuple(cell(o.get(f)) for f in fields) for o in found],
        )


class InventoryCabling(_FleetLister):
    """List the cabling problems, or with --links every switch link
    (API 1.23)."""

    def get_parser(self, prog_name: str) -> Any:
        parser = super().get_parser(prog_name)
        parser.add_argument(
            "--links", action="store_true", help="every link instead of the problems"
        )
        return parser

    def take_action(self, parsed_args: Any) -> tuple[tuple[str, ...], list[Any]]:
        body = self._get("/v1/inventory/cabling", {})
        if parsed_args.links:
            fields = ("switch_id", "switch_name", "port_id", "node", "mac")
            return (
                ("Switch", "Switch name", "Port", "Node", "MAC"),
                [tuple(link.get(f) for f in fields) for link in body["links"]],
            )
        return (
            ("Kind", "Detail", "Nodes"),
            [(p["kind"], p["detail"], cell(p["nodes"])) for p in body["problems"]],
        )
