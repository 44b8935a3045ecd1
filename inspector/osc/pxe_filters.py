"""``openstack baremetal introspection pxe-filter list``: every PXE filter's
last report and health, API 1.21 (``GET /v1/pxe-filters``, doc/pxe-filter.md).
Loaded only by OpenStackClient."""

from typing import Any

from cliff import lister

from inspector.osc import columns, session

VERSION = "1.21"
"""The ``pxe-filters`` resource."""

FIELDS = (
    ("Host", "host"),
    ("Driver", "driver"),
    ("Healthy", "healthy"),
    ("Problems", "problems"),
    ("Last report", "last_report"),
    ("Allowed", "allowed"),
    ("Denied", "denied"),
    ("Report lag", "report_lag"),
    ("Last sync", "last_sync"),
    ("Generation", "generation"),
    ("Unknown allowed", "unknown_allowed"),
    ("Failing closed", "failing_closed"),
    ("Sync requested", "sync_requested"),
)
"""Every field of a filter's report, as columns."""
SHORT = 7
"""The columns shown without ``--long``."""


class PxeFilterList(lister.Lister):
    """List the PXE filters: healthy or what is wrong (API 1.21)."""

    def get_parser(self, prog_name: str) -> Any:
        parser = super().get_parser(prog_name)
        parser.add_argument(
            "--long",
            action="store_true",
            help="also the report's lag, the last sync and its counts",
        )
        return parser

    def take_action(self, parsed_args: Any) -> tuple[tuple[str, ...], list[Any]]:
        # OpenStackClient's app has a client manager; cliff's base App has not
        manager = getattr(self.app, "client_manager")  # noqa: B009
        found = session.call(manager, "GET", "/v1/pxe-filters", VERSION)
        fields = FIELDS if parsed_args.long else FIELDS[:SHORT]
        return (
            tuple(title for title, _key in fields),
            [
                tuple(columns.value(f.get(key)) for _title, key in fields)
                for f in found["pxe_filters"]
            ],
        )
