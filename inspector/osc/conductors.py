"""``openstack baremetal introspection conductor list|show``: the
conductors of API 1.19 (``GET /v1/conductors[/<host>]``), their liveness,
whether they take work, and the introspections each owns. Loaded only by
OpenStackClient."""

from typing import Any

from cliff import lister, show

from inspector.osc import session

VERSION = "1.19"
"""The ``conductors`` resource."""

FIELDS = (
    ("Hostname", "hostname"),
    ("Alive", "alive"),
    ("Enabled", "enabled"),
    ("Disabled reason", "disabled_reason"),
    ("Introspections", "introspections"),
    ("Started at", "started_at"),
    ("Last heartbeat", "last_heartbeat"),
    ("RPC version", "rpc_version"),
    ("Version", "version"),
)
"""Every field of a conductor (its links left out), as columns."""
SHORT = 5
"""The columns ``list`` shows without ``--long``."""


def _get(command: Any, path: str) -> Any:
    # OpenStackClient's app has a client manager; cliff's base App has not
    manager = getattr(command.app, "client_manager")  # noqa: B009
    return session.call(manager, "GET", path, VERSION)


class ConductorList(lister.Lister):
    """List the conductors: alive, enabled, their work (API 1.19)."""

    def get_parser(self, prog_name: str) -> Any:
        parser = super().get_parser(prog_name)
        parser.add_argument(
            "--long",
            action="store_true",
            help="also their start, last heartbeat and versions",
        )
        return parser

    def take_action(self, parsed_args: Any) -> tuple[tuple[str, ...], list[Any]]:
        fields = FIELDS if parsed_args.long else FIELDS[:SHORT]
        conductors = _get(self, "/v1/conductors")["conductors"]
        return (
            tuple(title for title, _key in fields),
            [tuple(c.get(key) for _title, key in fields) for c in conductors],
        )


class ConductorShow(show.ShowOne):
    """Show one conductor (API 1.19)."""

    def get_parser(self, prog_name: str) -> Any:
        parser = super().get_parser(prog_name)
        parser.add_argument("hostname", help="the conductor's host name")
        return parser

    def take_action(self, parsed_args: Any) -> tuple[tuple[str, ...], tuple[Any, ...]]:
        found = _get(self, f"/v1/conductors/{parsed_args.hostname}")
        return (
            tuple(title for title, _key in FIELDS),
            tuple(found.get(key) for _title, key in FIELDS),
        )
