"""Process set-up shared by the entry points: threads, config, logging."""

import os
import sys
from typing import NoReturn

from oslo_config import cfg

DEFAULT_CONFIG_FILE = "/etc/ironic-inspector/inspector.conf"


def select_threading_backend() -> None:
    """Make oslo.service use OS threads; must run before it is imported.

    eventlet is installed as a dependency of oslo.service, and futurist
    imports it whenever it can; marking it absent keeps it out of the
    process entirely, so nothing can monkey-patch or rely on it.
    """
    sys.modules.setdefault("eventlet", None)  # type: ignore[arg-type]
    from oslo_service import backend

    try:
        backend.init_backend(backend.BackendType.THREADING)
    except backend.exceptions.BackendAlreadySelected:
        pass


def parse_config(argv: list[str], conf: cfg.ConfigOpts | None = None) -> cfg.ConfigOpts:
    """Register every option on ``conf`` (the global CONF by default) and parse.

    oslo.messaging registers some of its options on the global object only,
    so the service passes ``cfg.CONF`` down rather than a private ConfigOpts.
    """
    import oslo_messaging as messaging
    from oslo_log import log

    from inspector.conf import opts

    conf = cfg.CONF if conf is None else conf
    opts.register_all(conf)
    log.register_options(conf)
    messaging.set_transport_defaults("ironic_inspector")
    defaults = [DEFAULT_CONFIG_FILE] if os.path.exists(DEFAULT_CONFIG_FILE) else []
    conf(argv, project="ironic-inspector", default_config_files=defaults)
    return conf


def reload_config(conf: cfg.ConfigOpts, argv: list[str]) -> bool:
    """Apply changed mutable options from the config files (SIGHUP).

    The files are parsed and validated on a scratch ConfigOpts first: oslo
    would otherwise accept an invalid value (a typo in a choice) and every
    later read of that option would fail mid-request. A rejected reload
    keeps the running values and logs what was wrong.
    """
    import logging

    from inspector import exceptions
    from inspector.conf import opts

    log = logging.getLogger(__name__)
    candidate = cfg.ConfigOpts()
    try:
        parse_config(argv, candidate)
        opts.validate(candidate)
    except (cfg.Error, exceptions.ConfigError) as exc:
        log.error("Configuration reload rejected, running values kept: %s", exc)
        return False
    conf.mutate_config_files()
    log.info("Configuration reloaded; immutable options need a restart")
    return True


def wait_for_stop(conf: cfg.ConfigOpts, argv: list[str]) -> str:
    """Block until SIGTERM or SIGINT; SIGHUP reloads mutable options meanwhile.

    Returns the name of the signal that asked the process to stop.
    """
    import logging
    import signal
    import threading
    from types import FrameType

    log = logging.getLogger(__name__)
    stopping = threading.Event()
    received: list[str] = []

    def _on_stop(signo: int, _frame: FrameType | None) -> None:
        received.append(signal.Signals(signo).name)
        log.info("Received %s, stopping", received[-1])
        stopping.set()

    def _on_reload(_signo: int, _frame: FrameType | None) -> None:
        log.info("Received SIGHUP, reloading mutable options")
        reload_config(conf, argv)

    signal.signal(signal.SIGTERM, _on_stop)
    signal.signal(signal.SIGINT, _on_stop)
    signal.signal(signal.SIGHUP, _on_reload)
    while not stopping.wait(3600):
        pass
    return received[0] if received else "SIGTERM"


def die(prog: str, message: str, code: int = 2) -> NoReturn:
    print(f"{prog}: {message}", file=sys.stderr)
    raise SystemExit(code)
