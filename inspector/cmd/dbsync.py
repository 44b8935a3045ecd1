"""ironic-inspector-dbsync: create and upgrade the database schema."""

import sys

from oslo_config import cfg

from inspector.cmd import process

PROG = "ironic-inspector-dbsync"


def _add_commands(subparsers: object) -> None:
    upgrade = subparsers.add_parser("upgrade", help="upgrade the schema")  # type: ignore[attr-defined]
    upgrade.add_argument("--revision", default="head")
    subparsers.add_parser("current", help="print the current revision")  # type: ignore[attr-defined]
    revision = subparsers.add_parser(  # type: ignore[attr-defined]
        "revision", help="write a new migration (developers)"
    )
    revision.add_argument("-m", "--message", required=True)
    revision.add_argument("--autogenerate", action="store_true")


COMMAND = cfg.SubCommandOpt("command", title="Commands", handler=_add_commands)


def main(argv: list[str] | None = None) -> int:
    process.select_threading_backend()  # no eventlet, even for a schema upgrade
    from inspector import exceptions
    from inspector.db import engine, migration

    conf = cfg.CONF
    conf.register_cli_opt(COMMAND)
    try:
        process.parse_config(sys.argv[1:] if argv is None else argv, conf)
        db = engine.from_conf(conf)
        name = conf.command.name
        if name == "upgrade":
            migration.upgrade(db, conf.command.revision)
            print(f"Database is at revision {migration.current(db)}")
        elif name == "current":
            print(migration.current(db) or "none (empty database)")
        elif name == "revision":
            migration.revision(db, conf.command.message, conf.command.autogenerate)
    except (cfg.Error, exceptions.InspectorError) as exc:
        process.die(PROG, str(exc))
    except Exception as exc:  # a database driver error, translated here
        process.die(PROG, f"{type(exc).__name__}: {exc}", code=1)
    return 0
