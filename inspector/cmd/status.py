"""ironic-inspector-status upgrade check: is this deployment ready to run?

Run it with the service's configuration before (re)starting the services on
new code. Exit code 0: ready; 1: warnings to read; 2: something must change
first; 255: the check itself failed.
"""

import importlib.metadata
import sys
import urllib.parse

from oslo_config import cfg
from oslo_upgradecheck import upgradecheck

from inspector.cmd import process

PROG = "ironic-inspector-status"

Code = upgradecheck.Code
Result = upgradecheck.Result


class Checks(upgradecheck.UpgradeCommands):
    """The checks; each reads only the configuration and the database."""

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
        except (exceptions.DatabaseUnavailable, migration.SchemaUnreadable) as exc:
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
            pxe_filter.check_driver(self.conf)
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

    _upgrade_checks = (
        ("Configuration", _configuration),
        ("Database schema", _schema),
        ("Split mode backends", _shape),
        ("Coordination driver", _coordination_driver),
    )


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


def main(argv: list[str] | None = None) -> int:
    process.select_threading_backend()
    conf = cfg.CONF
    checks = Checks(conf)
    upgradecheck.register_cli_options(conf, checks)
    try:
        process.parse_config(sys.argv[1:] if argv is None else argv, conf)
    except cfg.Error as exc:
        process.die(PROG, str(exc))
    upgradecheck.CONF = conf  # where the library reads --json from
    return upgradecheck.run(conf)
