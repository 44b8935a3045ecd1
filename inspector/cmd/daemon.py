"""The one start-up path of the long-running console scripts.

Each daemon's ``main`` names itself and what it builds; :func:`run` does
the rest: OS threads, the options, logging, the shape check, building and
starting the parts in order, waiting for a stop signal (SIGHUP reloads),
stopping the parts in reverse and ending the process without the steps a
graceful stop cut short. A bad option exits with 2, an unreachable backend
with 1 (a restart may help), each in one line on stderr and in the log.
"""

import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from inspector import bootstrap

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)

WRONG_SHAPE = {
    True: "[DEFAULT]standalone is False: run ironic-inspector-api-wsgi and "
    "ironic-inspector-conductor instead (split mode), or set standalone = True",
    False: "[DEFAULT]standalone is True: run ironic-inspector (API and "
    "conductor in one process) instead, or set standalone = False",
}
"""Why a daemon of one shape refuses the other's configuration, by the
``[DEFAULT]standalone`` it needs."""


class Part(Protocol):
    """What a daemon runs: started in order, stopped in reverse."""

    def start(self) -> None: ...

    def stop(self) -> Mapping[str, str] | None:
        """Stop; the steps cut short (uuid -> step), if it runs any."""


Build = Callable[["cfg.ConfigOpts"], Sequence[Part]]


def run(
    prog: str,
    argv: list[str] | None,
    build: Build,
    *,
    standalone: bool | None = None,
    product: str = "ironic-inspector",
    detail: str = "",
) -> int:
    """Run the daemon ``prog`` until SIGTERM or SIGINT.

    :param argv: the service's arguments (``sys.argv[1:]`` when None).
    :param build: the parts of the daemon from the parsed options (not
        started); the options are checked here.
    :param standalone: the ``[DEFAULT]standalone`` the daemon needs, if one.
    :param product: oslo.log's product name.
    :param detail: said after "started" in the log.
    """
    bootstrap.select_threading_backend()
    from oslo_config import cfg

    from inspector import exceptions

    args = sys.argv[1:] if argv is None else argv
    try:
        conf = bootstrap.parse_config(args)
    except cfg.Error as exc:
        bootstrap.die(prog, str(exc))
    bootstrap.setup_logging(conf, product)
    if standalone is not None and bool(conf.standalone) != standalone:
        bootstrap.die(prog, WRONG_SHAPE[standalone])
    try:
        parts = start_all(build(conf))
    except exceptions.ConfigError as exc:
        bootstrap.die(prog, str(exc))
    except exceptions.ServiceUnavailable as exc:  # a backend: a restart may help
        bootstrap.die(prog, str(exc), code=1)
    LOG.info("%s %s started%s", prog, conf.host, detail)
    from inspector.rules import builtin

    # [rules]built_in_rules again: kept as they were when the file is invalid
    bootstrap.wait_for_stop(conf, args, on_reload=lambda: builtin.reload(conf))
    unfinished = stop_all(parts)
    LOG.info("%s stopped", prog)
    bootstrap.exit_without(unfinished)
    return 0


def start_all(parts: Sequence[Part]) -> Sequence[Part]:
    """Start ``parts`` in order; if one fails, stop those started, in
    reverse, and raise what it raised."""
    for index, part in enumerate(parts):
        try:
            part.start()
        except BaseException:
            stop_all(parts[:index])
            raise
    return parts


def stop_all(parts: Sequence[Part]) -> dict[str, str]:
    """Stop ``parts`` in reverse order; the steps they cut short."""
    unfinished: dict[str, str] = {}
    for part in reversed(parts):
        unfinished.update(part.stop() or {})
    return unfinished
