"""ironic-inspector-manage: operator commands that need no API.

``conductor list | show HOST | disable HOST [--reason TEXT] | enable HOST |
forget HOST``
read and change the same service-group view the API serves and routes by
(the coordination backend in split mode, the database in standalone mode);
``conductor lost-steps [--json]`` lists the steps a dead conductor left
that wait for the leader's takeover.
``pxe-filter list [--json] | sync [HOST] | forget HOST`` shows the PXE
filters' reports and asks them for a repair sync;
``sync [--dry-run] [--apply] [--rebuild] [--json]`` reconciles with Ironic
(:mod:`inspector.conductor.reconcile`); ``rules export | import FILE`` saves and
restores introspection rules as JSON, or with ``--format ironic`` in
Ironic's language (a sensitive rule's values masked in both unless ``export
--with-secrets``: :mod:`inspector.rules.exchange`); ``rules test`` tries
the rules on a node's stored data or a data file, writing nothing
(:mod:`inspector.rules.trial`).
``history NODE [--limit N] [--json]`` and ``changes NODE [--limit N]
[--json]`` show a node's hardware history and changes, newest first (NODE:
a UUID, or the node's name as its last run recorded it).
``inventory list [--fields F,..] [--filter FACT=VALUE].. [--limit N]
[--marker UUID] | summary [--group-by FACT] [--filter ..] | outliers |
cabling`` (each ``[--json]``) read the fleet view from the database, as
``GET /v1/inventory`` and its siblings answer; outliers and cabling exit
with status 1 when they find any.
``import upstream --connection URL | --url URL [--dry-run] [--json]``
imports a running ironic-inspector 12.x deployment
(:mod:`inspector.cmd.manage_import`); status 1 when a node it is working
on stops it.
"""

import json
import sys
from typing import Any

from oslo_config import cfg

from inspector import bootstrap
from inspector.cmd import manage_fleet, manage_import, manage_rules
from inspector.cmd.tables import table

PROG = "ironic-inspector-manage"
COLUMNS = (
    "hostname",
    "alive",
    "enabled",
    "disabled_reason",
    "introspections",
    "last_heartbeat",
    "version",
)


def _add_commands(subparsers: Any) -> None:
    conductor = subparsers.add_parser("conductor", help="the conductors")
    actions = conductor.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="every conductor")
    listing.add_argument("--json", action="store_true")
    show = actions.add_parser("show", help="one conductor")
    show.add_argument("conductor", metavar="HOST")
    show.add_argument("--json", action="store_true")
    disable = actions.add_parser("disable", help="no new work for HOST")
    disable.add_argument("conductor", metavar="HOST")
    disable.add_argument("--reason", default=None)
    enable = actions.add_parser("enable", help="new work for HOST again")
    enable.add_argument("conductor", metavar="HOST")
    lost = actions.add_parser(
        "lost-steps",
        help="steps owned by (or cast to) a conductor that is not alive, or "
        "unclaimed past their deadline: waiting for the leader's takeover",
    )
    lost.add_argument("--json", action="store_true")
    forget = actions.add_parser(
        "forget", help="remove a stopped conductor (gone for good) from the list"
    )
    forget.add_argument("conductor", metavar="HOST")
    pxe = subparsers.add_parser("pxe-filter", help="the PXE filters")
    pxe_actions = pxe.add_subparsers(dest="action", required=True)
    pxe_list = pxe_actions.add_parser("list", help="every filter's last report")
    pxe_list.add_argument("--json", action="store_true")
    pxe_sync = pxe_actions.add_parser(
        "sync", help="ask one filter (or all) for a repair sync now"
    )
    pxe_sync.add_argument("filter", metavar="HOST", nargs="?")
    pxe_forget = pxe_actions.add_parser(
        "forget", help="remove a retired filter from the list"
    )
    pxe_forget.add_argument("filter", metavar="HOST")
    manage_rules.add_parser(subparsers)
    sync = subparsers.add_parser(
        "sync",
        help="make owed Ironic writes, drop introspections of deleted "
        "nodes, report (and with --apply repair) drift",
    )
    sync.add_argument(
        "--dry-run",
        action="store_true",
        help="report what would be done, write nothing",
    )
    sync.add_argument(
        "--apply",
        action="store_true",
        help="also re-apply drifted properties and missing ports",
    )
    sync.add_argument(
        "--rebuild",
        action="store_true",
        help="first recreate finished introspections the database "
        "lost, from a directory data store",
    )
    sync.add_argument("--json", action="store_true")
    manage_fleet.add_parser(subparsers)
    manage_import.add_parser(subparsers)


COMMAND = cfg.SubCommandOpt("command", title="Commands", handler=_add_commands)


PXE_COLUMNS = (
    "host",
    "driver",
    "healthy",
    "allowed",
    "denied",
    "unknown_allowed",
    "report_lag",
    "last_sync",
    "problems",
)


def _service_group(conf: cfg.ConfigOpts) -> Any:
    from inspector.coordination import service_group
    from inspector.coordination.backend import start_coordinator
    from inspector.db import engine, migration

    db = engine.from_conf(conf)
    migration.ensure_schema(db)
    if conf.standalone:
        return service_group.for_standalone(db, conf)
    coordinator = start_coordinator(conf, f"{conf.host}.manage")
    return service_group.for_split(coordinator, db)


def _sync(conf: cfg.ConfigOpts) -> int:
    from inspector.baremetal.client import BaremetalClient
    from inspector.conductor import reconcile
    from inspector.db import data_store, engine, migration
    from inspector.locking.semaphore import SemaphoreLockProvider
    from inspector.runtime import Runtime

    # one try per call: an Ironic that does not answer fails the command fast
    conf.set_override("max_retries", 0, group="ironic")
    db = engine.from_conf(conf)
    migration.ensure_schema(db)
    rt = Runtime(
        conf=conf,
        db=db,
        baremetal=BaremetalClient(conf),
        locks=SemaphoreLockProvider(),
        stores=data_store.DataStores(conf, db),
    )
    report = reconcile.sync(
        rt,
        dry_run=conf.command.dry_run,
        apply=conf.command.apply,
        rebuild=conf.command.rebuild,
    )
    print(report.as_json() if conf.command.json else report.as_table())
    failed = [f for f in report.findings if f.action.startswith("failed")]
    return 1 if failed else 0


def _pxe_filters(conf: cfg.ConfigOpts) -> int:
    from inspector import exceptions
    from inspector.db import engine, migration, pxe
    from inspector.pxe_filter.report import view

    db = engine.from_conf(conf)
    migration.ensure_schema(db)
    action = conf.command.action
    if action == "list":
        rows = [view(r) for r in pxe.filters(db)]
        print(
            json.dumps(rows, indent=2)
            if conf.command.json
            else table(rows, PXE_COLUMNS)
        )
        return 0 if all(r["healthy"] for r in rows) else 1
    host = conf.command.filter
    if action == "forget":
        if not pxe.forget(db, host):
            raise exceptions.NotFound(f"PXE filter {host} was not found")
        print(f"PXE filter {host} forgotten")
        return 0
    asked = pxe.request_sync(db, host)
    if not asked:
        raise exceptions.NotFound(
            f"PXE filter {host} was not found" if host else "No PXE filter reported yet"
        )
    print(f"Repair sync requested of {', '.join(asked)} (within seconds)")
    return 0


LOST_COLUMNS = ("node", "step", "owner", "owner_since", "handed_to", "reason")


def _lost_steps(conf: cfg.ConfigOpts, group: Any) -> int:
    """The steps the leader's next sweep takes over, as the leader judges
    them (:func:`inspector.conductor.takeover.orphans`); exit status 1 when
    there is any."""
    from inspector.conductor import takeover
    from inspector.db import engine, introspections, sweeps

    alive = [c["hostname"] for c in group.conductors(with_work=False) if c["alive"]]
    db = engine.from_conf(conf)
    now = introspections.utcnow()
    # judged as a leader would, by none of the conductors: an earlier run of
    # a live conductor is not seen here (that conductor resumes it at start)
    found = takeover.orphans(sweeps.working(db), alive, "", "", now, True)
    rows = [
        {
            "node": o.record.uuid,
            "step": o.record.state,
            "owner": o.record.owner,
            "owner_since": o.record.claimed_at and o.record.claimed_at.isoformat(),
            "handed_to": o.record.handed_to,
            "reason": o.reason,
        }
        for o in found
    ]
    print(
        json.dumps(rows, indent=2) if conf.command.json else table(rows, LOST_COLUMNS)
    )
    return 1 if rows else 0


def run(conf: cfg.ConfigOpts) -> int:
    if conf.command.name in manage_fleet.COMMANDS:
        return manage_fleet.run(conf)
    if conf.command.name == "sync":
        return _sync(conf)
    if conf.command.name == "pxe-filter":
        return _pxe_filters(conf)
    if conf.command.name == "rules":
        return manage_rules.run(conf)
    if conf.command.name == "import":
        return manage_import.run(conf)
    group = _service_group(conf)
    action = conf.command.action
    if action == "list":
        rows = group.conductors()
        print(json.dumps(rows, indent=2) if conf.command.json else table(rows, COLUMNS))
    elif action == "show":
        view = group.get(conf.command.conductor)
        if conf.command.json:
            print(json.dumps(view, indent=2))
        else:
            for key, value in view.items():
                print(f"{key:16} {'' if value is None else value}")
    elif action == "lost-steps":
        return _lost_steps(conf, group)
    elif action == "forget":
        group.forget(conf.command.conductor)
        print(f"Conductor {conf.command.conductor} forgotten")
    else:
        enabled = action == "enable"
        reason = None if enabled else conf.command.reason
        view, warning = group.set_enabled(conf.command.conductor, enabled, reason)
        reason_text = view["disabled_reason"]
        state = "enabled" if view["enabled"] else f"disabled ({reason_text})"
        print(f"Conductor {view['hostname']} is {state}")
        if warning:
            print(f"Warning: {warning}", file=sys.stderr)
    return 0


@bootstrap.quiet_when_reader_leaves
def main(argv: list[str] | None = None) -> int:
    bootstrap.select_threading_backend()
    import logging

    from inspector import exceptions

    logging.getLogger("inspector").setLevel(logging.ERROR)  # the output says it
    conf = cfg.CONF
    conf.register_cli_opt(COMMAND)
    try:
        bootstrap.parse_config(sys.argv[1:] if argv is None else argv, conf)
        return run(conf)
    except (cfg.Error, exceptions.InspectorError) as exc:
        message = str(exc)
        refused = (exceptions.NotFound, exceptions.Conflict)
        code = 1 if isinstance(exc, refused + (exceptions.ServiceUnavailable,)) else 2
        bootstrap.die(PROG, message, code=code)
