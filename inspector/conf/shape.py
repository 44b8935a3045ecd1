"""Start-up checks of the options that decide the process shape."""

import logging
import urllib.parse

from oslo_config import cfg

from inspector import exceptions

LOG = logging.getLogger(__name__)


def transport_url(conf: cfg.ConfigOpts) -> str:
    """[DEFAULT]transport_url, registering oslo.messaging's options if needed."""
    from oslo_messaging import opts as messaging_opts

    for group, options in messaging_opts.list_opts():
        if group in (None, "DEFAULT"):
            conf.register_opts(options)
    return str(conf.transport_url or "")


def check_split(conf: cfg.ConfigOpts) -> list[str]:
    """Refuse split-mode settings that cannot work; return loud warnings.

    :raises ConfigError: naming the option to change.
    """
    warnings = []
    connection = conf.database.connection or ""
    if connection.startswith("sqlite"):
        raise exceptions.ConfigError(
            "Invalid configuration: [database]connection is SQLite, which the "
            "API and the conductors cannot share; set it to a PostgreSQL or "
            "MariaDB URL, or use standalone = True"
        )
    bus_url = transport_url(conf) if conf.rpc_transport == "oslo" else None
    if bus_url is None:
        pass  # json-rpc: transport_url is never opened
    elif bus_url.startswith("fake:"):
        raise exceptions.ConfigError(
            "Invalid configuration: [DEFAULT]transport_url is fake://, which "
            "only works inside one process; set a rabbit:// URL, or use "
            "standalone = True"
        )
    elif not bus_url:
        warnings.append(
            "[DEFAULT]transport_url is not set: using oslo.messaging's default "
            "(RabbitMQ as guest on localhost:5672); set it explicitly"
        )
    backend_url = conf.coordination.backend_url or ""
    scheme = urllib.parse.urlsplit(backend_url).scheme
    if not backend_url or not scheme:
        raise exceptions.ConfigError(
            "Invalid configuration: [coordination]backend_url is not a tooz "
            "URL; split mode needs one, e.g. etcd3+http://127.0.0.1:2379"
        )
    if scheme == "file":
        warnings.append(
            "[coordination]backend_url is file://: locks and membership only "
            "work between processes on this one host; use etcd "
            "(etcd3+http://) for conductors on several hosts"
        )
    for warning in warnings:
        LOG.warning("Split mode: %s", warning)
    return warnings
