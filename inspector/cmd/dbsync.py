"""ironic-inspector-dbsync: create and upgrade the database schema."""

import sys

from oslo_config import cfg

from inspector import bootstrap

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
    bootstrap.select_threading_backend()  # no eventlet, even for a schema upgrade
    from inspector import exceptions
    from inspector.db import engine, migration

    conf = cfg.CONF
    conf.register_cli_opt(COMMAND)
    try:
        bootstrap.parse_config(sys.argv[1:] if argv is None else argv, conf)
        db = engine.from_conf(conf)
        name = conf.command.name
        if name == "upgrade":
            migration.upgrade(db, conf.command.revision)
            print(f"Database is at revision {migration.current(db)}")
        elif name == "current":
            print(migration.current(db) or "none (empty database)")
        elif name == "revision":
            migration.revision(db, conf.command.message, conf.command.autogenerate)
    except exceptions.DatabaseRefused as exc:  # fix the configuration
        bootstrap.die(PROG, str(exc))
    except exceptions.ServiceUnavailable as exc:  # try again when it is up
        bootstrap.die(PROG, str(exc), code=1)
    except (cfg.Error, exceptions.InspectorError) as exc:
        bootstrap.die(PROG, str(exc))
    except engine.UNREACHABLE as exc:  # met inside alembic: same words
        error = engine.unreachable(exc)
        code = 2 if isinstance(error, exceptions.DatabaseRefused) else 1
        bootstrap.die(PROG, f"{error} ({db_name(conf)})", code=code)
    except Exception as exc:  # any other driver error: its first line
        bootstrap.die(PROG, f"{type(exc).__name__}: {engine.cause(exc)}", code=1)
    return 0


def db_name(conf: cfg.ConfigOpts) -> str:
    """[database]connection without its password."""
    from inspector.db import engine

    try:
        return engine.Database(conf.database.connection).describe()
    except Exception:
        return "[database]connection"
