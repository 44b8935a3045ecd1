"""``openstack baremetal introspection history|changes``: the stock
client's command group (``openstack.baremetal_introspection.v1`` entry
points) extended with a node's hardware history (API 1.23).

The stock client pins the API version of its requests to the one it
negotiated, so these commands call the API through the client's own
keystone session with the 1.23 header, at the endpoint the client plugin
uses (``--inspector-url``, else the catalog's ``baremetal-introspection``):
:mod:`inspector.osc.session`.
Loaded only by OpenStackClient: the service never imports this package.
"""

import json
from typing import Any

from cliff import lister

from inspector.osc import session

VERSION = "1.23"


def get(manager: Any, path: str, params: Any = None) -> Any:
    """``GET <path>`` of the inspector's API at 1.23; the JSON body.

    :raises RuntimeError: the API answered an error (its message).
    """
    return session.call(manager, "GET", path, VERSION, params)


def fetch(manager: Any, node: str, what: str, limit: int | None) -> Any:
    """``GET /v1/introspection/<node>/<what>`` at 1.23; the JSON body."""
    params = {} if limit is None else {"limit": limit}
    return get(manager, f"/v1/introspection/{node}/{what}", params)


def cell(value: Any) -> Any:
    """A value as a table shows it: lists and objects as JSON."""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return value


class _NodeLister(lister.Lister):
    WHAT = ""
    COLUMNS: tuple[str, ...] = ()
    FIELDS: tuple[str, ...] = ()

    def get_parser(self, prog_name: str) -> Any:
        parser = super().get_parser(prog_name)
        parser.add_argument("node", help="baremetal node UUID or name")
        parser.add_argument(
            "--limit", type=int, default=None, help="at most this many rows"
        )
        return parser

    def take_action(self, parsed_args: Any) -> tuple[tuple[str, ...], list[Any]]:
        # OpenStackClient's app has a client manager; cliff's base App has not
        manager = getattr(self.app, "client_manager")  # noqa: B009
        body = fetch(manager, parsed_args.node, self.WHAT, parsed_args.limit)
        rows = [
            tuple(cell(item.get(f)) for f in self.FIELDS) for item in body[self.WHAT]
        ]
        return self.COLUMNS, rows


class HistoryCommand(_NodeLister):
    """List a node's introspection runs, newest first (API 1.23)."""

    WHAT = "history"
    COLUMNS = (
        "UUID",
        "Started at",
        "Finished at",
        "State",
        "Changes",
        "Source",
        "Interface",
        "Error",
    )
    FIELDS = (
        "uuid",
        "started_at",
        "finished_at",
        "state",
        "changes",
        "source",
        "interface",
        "error",
    )


class ChangesCommand(_NodeLister):
    """List a node's hardware changes, newest run first (API 1.23)."""

    WHAT = "changes"
    COLUMNS = ("Run", "Finished at", "Component", "Kind", "Field", "Before", "After")
    FIELDS = ("run", "finished_at", "component", "kind", "field", "before", "after")
