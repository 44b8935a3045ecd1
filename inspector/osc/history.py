"""``openstack baremetal introspection history|changes``: the stock
client's command group (``openstack.baremetal_introspection.v1`` entry
points) extended with a node's hardware history (API 1.23).

The stock client pins the API version of its requests to the one it
negotiated, so these commands call the API through the client's own
keystone session with the 1.23 header, at the endpoint the client plugin
uses (``--inspector-url``, else the catalog's ``baremetal-introspection``).
Loaded only by OpenStackClient: the service never imports this package.
"""

import json
from typing import Any

from cliff import lister

VERSION = "1.23"
HEADER = "X-OpenStack-Ironic-Inspector-API-Version"
SERVICE_TYPE = "baremetal-introspection"


def _endpoint(manager: Any) -> str:
    """The inspector's URL as the stock client plugin finds it."""
    url = manager.get_configuration().get("inspector_url")
    if not url:
        url = manager.get_endpoint_for_service_type(
            SERVICE_TYPE,
            interface=getattr(manager, "interface", None),
            region_name=getattr(manager, "region_name", None),
        )
    return str(url).rstrip("/")


def get(manager: Any, path: str, params: Any = None) -> Any:
    """``GET <path>`` of the inspector's API at 1.23; the JSON body.

    :raises RuntimeError: the API answered an error (its message).
    """
    response = manager.session.get(
        f"{_endpoint(manager)}{path}",
        headers={HEADER: VERSION},
        params=params or {},
        raise_exc=False,
    )
    if response.status_code >= 400:
        try:
            message = response.json()["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = response.text[:200]
        raise RuntimeError(f"{response.status_code}: {message}")
    return response.json()


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
    COLUMNS = ("UUID", "Started at", "Finished at", "State", "Changes", "Error")
    FIELDS = ("uuid", "started_at", "finished_at", "state", "changes", "error")


class ChangesCommand(_NodeLister):
    """List a node's hardware changes, newest run first (API 1.23)."""

    WHAT = "changes"
    COLUMNS = ("Run", "Finished at", "Component", "Kind", "Field", "Before", "After")
    FIELDS = ("run", "finished_at", "component", "kind", "field", "before", "after")
