"""``openstack baremetal introspection start [--mode MODE] NODE...``: the
stock client's ``start`` with the mode of API 1.26 (in-band, out-of-band
or auto: doc/redfish.md).

This command replaces the stock ``start`` under the same name: it is
registered in the ``openstack.extension`` entry point group, which
OpenStackClient loads after every plugin's group, so it wins whatever the
order of the installed packages (doc/deploy.md, "Talking to it"). It does
what the stock one does (the same arguments, output and ``--wait``) and,
without ``--mode``, sends the same request at 1.0; with ``--mode`` it asks
for 1.26. It imports nothing of the stock client: OpenStackClient loads
this group for every command, and a failed import would be printed each
time. Loaded only by OpenStackClient.
"""

import time
from typing import Any

from cliff import lister

from inspector import states
from inspector.osc import session

VERSION = "1.26"
"""``mode`` of ``POST /v1/introspection/<node>`` (introspection-mode)."""
STOCK_VERSION = "1.0"
"""What the stock client sends unless told otherwise: a start without a
mode is the same request."""
WAIT_TIMEOUT = 3600.0
"""Seconds ``--wait`` waits, as the stock client's (360 tries 10 s apart)."""


class StartCommand(lister.Lister):
    """Start the introspection (--mode: API 1.26)."""

    COLUMNS = ("UUID", "Error")

    def get_parser(self, prog_name: str) -> Any:
        parser = super().get_parser(prog_name)
        parser.add_argument("node", nargs="+", help="baremetal node UUID(s) or name(s)")
        parser.add_argument(
            "--mode",
            choices=states.MODES,
            default=None,
            help="how to learn the hardware: in-band (the ramdisk), "
            "out-of-band (the node's Redfish BMC, no boot) or auto (the BMC "
            "first, the ramdisk for what it lacks); default: the service's "
            "[DEFAULT]introspection_mode (API 1.26)",
        )
        parser.add_argument(
            "--wait",
            action="store_true",
            help="wait for introspection to finish; the result will be "
            "displayed in the end",
        )
        parser.add_argument(
            "--check-errors",
            action="store_true",
            help="check if errors occurred during the introspection; if any "
            "error occurs only the errors are displayed; can only be used "
            "with --wait",
        )
        parser.add_argument(
            "--wait-interval",
            type=float,
            default=10.0,
            metavar="SECONDS",
            help="with --wait, seconds between two status requests per node "
            "(default 10, as the stock client)",
        )
        return parser

    def take_action(self, parsed_args: Any) -> tuple[tuple[str, ...], list[Any]]:
        if parsed_args.check_errors and not parsed_args.wait:
            raise RuntimeError("--check-errors can only be used with --wait")
        if parsed_args.wait_interval <= 0:
            raise RuntimeError("--wait-interval must be more than 0")
        # OpenStackClient's app has a client manager; cliff's base App has not
        manager = getattr(self.app, "client_manager")  # noqa: B009
        version = STOCK_VERSION
        params = {}
        if parsed_args.mode is not None:
            version, params = VERSION, {"mode": parsed_args.mode}
        for node in parsed_args.node:
            session.call(manager, "POST", f"/v1/introspection/{node}", version, params)
        if not parsed_args.wait:
            return self.COLUMNS, []
        self.app.stderr.write("Waiting for introspection to finish...\n")
        finished = wait(manager, parsed_args.node, version, parsed_args.wait_interval)
        rows = [(node, finished[node].get("error")) for node in parsed_args.node]
        if parsed_args.check_errors:
            failed = "\n".join(f"{node} ({error})" for node, error in rows if error)
            if failed:
                raise RuntimeError(f"Introspection failed for some nodes: {failed}")
        return self.COLUMNS, rows


def wait(
    manager: Any,
    nodes: list[str],
    version: str,
    interval: float,
    timeout: float = WAIT_TIMEOUT,
) -> dict[str, Any]:
    """Each node's introspection status once it is finished.

    :raises RuntimeError: not all finished within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    finished: dict[str, Any] = {}
    while True:
        for node in [n for n in nodes if n not in finished]:
            status = session.call(manager, "GET", f"/v1/introspection/{node}", version)
            if status.get("finished"):
                finished[node] = status
        left = [n for n in nodes if n not in finished]
        if not left:
            return finished
        if time.monotonic() + interval > deadline:
            raise RuntimeError(
                f"Timeout while waiting for introspection of nodes {left}"
            )
        time.sleep(interval)
