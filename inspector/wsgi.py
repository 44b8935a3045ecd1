"""The split-mode API as a WSGI application (Apache/mod_wsgi, uWSGI, ...).

Point the WSGI server at this file or import ``inspector.wsgi:application``.
Configuration: ``/etc/ironic-inspector/inspector.conf`` when it exists, plus
the files listed (comma separated) in ``IRONIC_INSPECTOR_CONFIG``, taken from
the process environment or, under Apache, from ``SetEnv`` in the vhost.

The service is built on the first request, once per process. If that fails
(the database or the coordination backend is down), the request gets a 503
naming the cause and the next request tries again.
"""

import json
import logging
import os
import threading
from collections.abc import Callable, Iterable
from typing import Any

CONFIG_ENV = "IRONIC_INSPECTOR_CONFIG"

LOG = logging.getLogger(__name__)

_guard = threading.Lock()
_service: Any = None


def config_args(files: str | None) -> list[str]:
    """oslo.config arguments for a comma-separated list of config files."""
    args: list[str] = []
    for name in (files or "").split(","):
        if name.strip():
            args += ["--config-file", name.strip()]
    return args


def _build(environ: dict[str, Any]) -> Any:
    from inspector.cmd import process

    process.select_threading_backend()
    from oslo_config import cfg
    from oslo_log import log

    from inspector.api.service import ApiService

    files = os.environ.get(CONFIG_ENV) or environ.get(CONFIG_ENV)
    # a start that failed earlier left the global options parsed: start over
    cfg.CONF.clear()
    # mod_wsgi's sys.argv is ['mod_wsgi']: never let oslo parse it
    conf = process.parse_config(config_args(files))
    log.setup(conf, "ironic-inspector-api")
    return ApiService(conf)


def _unavailable(message: str, start_response: Callable[..., Any]) -> Iterable[bytes]:
    body = json.dumps({"error": {"message": message}}).encode()
    start_response(
        "503 Service Unavailable",
        [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(body))),
            ("Retry-After", "5"),
        ],
    )
    return [body]


def application(
    environ: dict[str, Any], start_response: Callable[..., Any]
) -> Iterable[bytes]:
    global _service
    service = _service
    if service is None:
        with _guard:
            if _service is None:
                try:
                    _service = _build(environ)
                except Exception as exc:  # answered as 503, retried next time
                    LOG.error("The inspector API cannot start: %s", exc)
                    return _unavailable(
                        f"The inspector API cannot start: {exc}", start_response
                    )
            service = _service
    result: Iterable[bytes] = service.app(environ, start_response)
    return result
