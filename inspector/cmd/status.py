"""ironic-inspector-status upgrade check: is this deployment ready to run?

Run it with the service's configuration before (re)starting the services on
new code. Exit code 0: ready; 1: warnings to read; 2: something must change
first; 255: the check itself failed.
"""

import importlib.metadata
import os
import sys
import urllib.parse

from oslo_config import cfg
from oslo_upgradecheck import upgradecheck

from inspector import bootstrap

PROG = "ironic-inspector-status"

Code = upgradecheck.Code
Result = upgradecheck.Result


class Checks(upgradecheck.UpgradeCommands):
    """The checks: the configuration, and whether each backend this shape
    uses answers (the database and its schema; in split mode the
    coordination backend and the message broker), each within seconds."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf

    def _schema(self) -> Result:
        from inspector import exceptions
        from inspector.db import engine, migration

        try:
            db = engine.from_conf(self.conf)
        except exceptions.ConfigError as exc:
            return Result(Code.FAILURE, str(exc))
        where = db.describe()
        try:
            have = migration.current(db)
        except exceptions.DatabaseUnavailable as exc:  # unreachable or refused
            return Result(Code.FAILURE, f"{where}: {exc.message}")
        except migration.SchemaUnreadable as exc:
            reason = exc.kwargs["reason"]
            return Result(Code.FAILURE, f"Cannot read the schema of {where}: {reason}")
        finally:
            db.dispose()
        want = migration.head()
        if have == want:
            return Result(Code.SUCCESS, f"{where} is at revision {have}")
        if db.is_sqlite:
            return Result(
                Code.SUCCESS,
                f"{where} is at revision {have or 'none'}; ironic-inspector "
                f"upgrades its SQLite database to {want} when it starts",
            )
        if have is not None and have not in migration.known():
            return Result(
                Code.FAILURE,
                f"{where} is at revision {have}, which this release does not "
                "know: it was upgraded by a newer release",
            )
        return Result(
            Code.FAILURE,
            f"{where} is at revision {have or 'none'}, this release needs "
            f"{want}: run ironic-inspector-dbsync upgrade",
        )

    def _configuration(self) -> Result:
        from inspector import exceptions
        from inspector.conf import opts, pxe_filter

        try:
            warnings = opts.judge(self.conf)
            pxe_filter.check_driver(self.conf, split=not self.conf.standalone)
        except exceptions.ConfigError as exc:
            return Result(Code.FAILURE, str(exc))
        if warnings:
            return Result(Code.WARNING, "\n".join(warnings))
        return Result(
            Code.SUCCESS, "every option set is valid and honoured (doc/upgrade.md)"
        )

    def _shape(self) -> Result:
        from inspector import exceptions
        from inspector.conf import shape

        if self.conf.standalone:
            return Result(Code.SUCCESS, "standalone: one process, nothing shared")
        try:
            warnings = shape.check_split(self.conf)
        except exceptions.ConfigError as exc:
            return Result(Code.FAILURE, str(exc))
        if warnings:
            return Result(Code.WARNING, "; ".join(warnings))
        return Result(
            Code.SUCCESS,
            "split mode: database, broker and coordination backend can be shared",
        )

    def _coordination_driver(self) -> Result:
        if self.conf.standalone:
            return Result(Code.SUCCESS, "standalone: no coordination backend")
        url = self.conf.coordination.backend_url or ""
        scheme = urllib.parse.urlsplit(url).scheme
        return driver_library(scheme)

    def _broker(self) -> Result:
        """Connects to the message broker (split mode), one host at a time."""
        if self.conf.standalone:
            return Result(Code.SUCCESS, "standalone: in-process transport, no broker")
        if self.conf.rpc_transport == "json-rpc":
            return Result(
                Code.SUCCESS, "rpc_transport = json-rpc: no message broker is used"
            )
        return broker_answers(self.conf)

    def _endpoints(self) -> Result:
        """Pings each conductor's JSON-RPC endpoint (json-rpc only)."""
        if self.conf.standalone:
            return Result(Code.SUCCESS, "standalone: the conductor is in-process")
        if self.conf.rpc_transport != "json-rpc":
            return Result(
                Code.SUCCESS,
                "rpc_transport = oslo: conductors take casts from the broker",
            )
        return endpoints_answer(self.conf)

    def _coordination_backend(self) -> Result:
        """Reads the conductor group (split mode): the backend answers."""
        if self.conf.standalone:
            return Result(Code.SUCCESS, "standalone: no coordination backend")
        from inspector import exceptions
        from inspector.coordination import backend

        url = backend.describe(self.conf.coordination.backend_url or "")
        try:
            coordinator = backend.start_coordinator(
                self.conf, f"ironic-inspector-status-{os.getpid()}"
            )
            try:
                with backend.translated("list the conductor group"):
                    try:
                        members = coordinator.get_members(backend.GROUP_ID).get()
                    except Exception as exc:
                        if type(exc).__name__ != "GroupNotCreated":
                            raise
                        members = set()
            finally:
                coordinator.stop()
        except exceptions.ServiceUnavailable as exc:
            return Result(Code.FAILURE, f"{url} does not answer: {exc.message}")
        except Exception as exc:  # e.g. its driver's library is missing
            first = exceptions.first_line(exc, "")
            return Result(
                Code.FAILURE, f"{url} cannot be used: {type(exc).__name__}: {first}"
            )
        return Result(
            Code.SUCCESS, f"{url} answers; {len(members)} conductor(s) in the group"
        )

    _upgrade_checks = (
        ("Configuration", _configuration),
        ("Database schema", _schema),
        ("Split mode backends", _shape),
        ("Coordination driver", _coordination_driver),
        ("Coordination backend", _coordination_backend),
        ("Message broker", _broker),
        ("Conductor endpoints", _endpoints),
    )


BROKER_TIMEOUT = 3.0
"""Seconds the broker check waits for each host."""


def broker_answers(conf: cfg.ConfigOpts) -> Result:
    """Whether one host of [DEFAULT]transport_url accepts a connection."""
    import oslo_messaging as messaging

    from inspector.conductor.rpcapi import broker_of, broker_reachable
    from inspector.conf import shape

    url = shape.transport_url(conf)
    if not url:
        return Result(Code.FAILURE, "[DEFAULT]transport_url is not set")
    try:
        parsed = messaging.TransportURL.parse(conf, url)
    except messaging.InvalidTransportURL as exc:
        return Result(Code.FAILURE, f"[DEFAULT]transport_url: {exc}")
    if parsed.transport not in ("rabbit", "amqp"):
        return Result(Code.WARNING, f"{broker_of(url)}: not checked (only RabbitMQ is)")
    reachable, details = broker_reachable(parsed, BROKER_TIMEOUT)
    if reachable:
        return Result(Code.SUCCESS, f"{broker_of(url)} answers ({details})")
    return Result(Code.FAILURE, f"{broker_of(url)} does not answer: {details}")


def endpoints_answer(conf: cfg.ConfigOpts) -> Result:
    """Whether every conductor in the group answers on the JSON-RPC
    endpoint it published, with the API's credentials."""
    from inspector import exceptions
    from inspector.coordination import backend
    from inspector.coordination.members import GroupMembers
    from inspector.jsonrpc import probe
    from inspector.jsonrpc.client import JsonRpcSender

    try:
        coordinator = backend.start_coordinator(
            conf, f"ironic-inspector-status-{os.getpid()}"
        )
    except exceptions.ServiceUnavailable as exc:
        return Result(Code.FAILURE, f"cannot read the conductor group: {exc.message}")
    try:
        members = GroupMembers(coordinator, 0, endpoints=True)
        sender = JsonRpcSender(conf, members.endpoint)
        hosts = members.hosts()
        answers = probe.ping_all(sender, hosts, members.endpoint)
    except exceptions.InspectorError as exc:
        return Result(Code.FAILURE, str(exc))
    finally:
        coordinator.stop()
    if not answers:
        return Result(Code.WARNING, "no conductor is in the group yet: nothing to call")
    lines = "; ".join(a.line() for a in answers)
    if all(a.ok for a in answers):
        return Result(Code.SUCCESS, lines)
    return Result(Code.FAILURE, lines)


def driver_library(scheme: str) -> Result:
    """Whether tooz's driver for ``scheme`` and its library can be loaded."""
    found = importlib.metadata.entry_points(group="tooz.backends", name=scheme)
    if not found:
        return Result(
            Code.FAILURE,
            f"[coordination]backend_url: tooz has no driver for {scheme!r}://",
        )
    (entry_point,) = tuple(found)[:1]
    try:
        entry_point.load()
    except ImportError as exc:
        missing = exc.name or str(exc)
        return Result(
            Code.FAILURE,
            f"The tooz driver for {scheme}:// needs the Python library "
            f"{missing!r}, which is not installed: pip install {missing}",
        )
    return Result(Code.SUCCESS, f"tooz driver for {scheme}:// loads")


@bootstrap.quiet_when_reader_leaves
def main(argv: list[str] | None = None) -> int:
    bootstrap.select_threading_backend()
    conf = cfg.CONF
    checks = Checks(conf)
    upgradecheck.register_cli_options(conf, checks)
    try:
        bootstrap.parse_config(sys.argv[1:] if argv is None else argv, conf)
    except cfg.Error as exc:
        bootstrap.die(PROG, str(exc))
    upgradecheck.CONF = conf  # where the library reads --json from
    return upgradecheck.run(conf)
