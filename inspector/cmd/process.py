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


def die(prog: str, message: str, code: int = 2) -> NoReturn:
    print(f"{prog}: {message}", file=sys.stderr)
    raise SystemExit(code)
