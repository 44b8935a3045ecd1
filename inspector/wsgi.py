"""The split-mode API as a WSGI application (Apache/mod_wsgi, uWSGI, ...).

Point the WSGI server at this file or import ``inspector.wsgi:application``.
Configuration: ``/etc/ironic-inspector/inspector.conf`` when it exists, plus
the files listed (comma separated) in ``IRONIC_INSPECTOR_CONFIG``, taken from
the process environment (for Apache: ``/etc/apache2/envvars`` or the unit's
``Environment=``) or else from the request's WSGI environment.

The shipped WSGI script calls :func:`preload` when mod_wsgi starts a daemon
process, so a missing config file or a bad option is logged at start, in one
line naming it. Otherwise the service is built on the first request. If that
fails (the database or the coordination backend is down), the request gets a
503 naming the cause and the next request tries again; each distinct cause is
logged once. The API's own-server options (``use_ssl``, ``[ssl]``,
``listen_unix_socket``) do not apply here: one warning names those set.

Under mod_wsgi the daemon processes share their Prometheus values through a
directory of their Apache parent (``PROMETHEUS_MULTIPROC_DIR``, unless set).
"""

import json
import logging
import os
import pathlib
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable
from typing import Any

CONFIG_ENV = "IRONIC_INSPECTOR_CONFIG"

LOG = logging.getLogger(__name__)

_guard = threading.Lock()
_service: Any = None
_last_error: str | None = None

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
"""prometheus_client's multi-process directory (see inspector.metrics)."""
METRICS_DIR_PREFIX = "ironic-inspector-metrics."


def _under_mod_wsgi() -> bool:
    try:
        import mod_wsgi  # noqa: F401
    except ImportError:
        return False
    return True


def share_metrics(parent: int, base: pathlib.Path) -> pathlib.Path:
    """Point prometheus_client at a directory shared by ``parent``'s children.

    Must run before ``prometheus_client`` is imported. Directories left by
    Apache parents that no longer run are removed.
    """
    for old in base.glob(METRICS_DIR_PREFIX + "*"):
        pid = old.name.removeprefix(METRICS_DIR_PREFIX)
        dead = not pathlib.Path(f"/proc/{pid}").exists()
        if pid.isdigit() and int(pid) != parent and dead:
            shutil.rmtree(old, ignore_errors=True)
    shared = base / f"{METRICS_DIR_PREFIX}{parent}"
    shared.mkdir(mode=0o700, exist_ok=True)
    os.environ[MULTIPROC_ENV] = str(shared)
    return shared


if MULTIPROC_ENV not in os.environ and _under_mod_wsgi():
    share_metrics(os.getppid(), pathlib.Path(tempfile.gettempdir()))


def config_args(files: str | None) -> list[str]:
    """oslo.config arguments for a comma-separated list of config files."""
    args: list[str] = []
    for name in (files or "").split(","):
        if name.strip():
            args += ["--config-file", name.strip()]
    return args


def _build(environ: dict[str, Any]) -> Any:
    from inspector import bootstrap

    bootstrap.select_threading_backend()
    from oslo_config import cfg

    from inspector.server import wiring

    files = os.environ.get(CONFIG_ENV) or environ.get(CONFIG_ENV)
    # a start that failed earlier left the global options parsed: start over
    cfg.CONF.clear()
    # mod_wsgi's sys.argv is ['mod_wsgi']: never let oslo parse it
    conf = bootstrap.parse_config(config_args(files))
    bootstrap.setup_logging(conf, "ironic-inspector-api")
    _warn_own_server_options(conf)
    return wiring.api(conf)


_warned_own_server = False


def _warn_own_server_options(conf: Any) -> None:
    """Warn once per process about options only the API's own server reads.

    Here the WSGI server (Apache, ...) owns TLS and the listening socket.
    """
    global _warned_own_server
    from inspector.net import listen

    found = listen.own_server_options_set(conf)
    if found and not _warned_own_server:
        LOG.warning(
            "%s: ignored under a WSGI server such as Apache, which does TLS "
            "and listens itself; configure those there",
            ", ".join(found),
        )
    _warned_own_server = True


CANNOT_START = (
    "The inspector API cannot start; the cause is in the service's log "
    "(Apache's error log or [DEFAULT]log_file)"
)
"""What clients get while the service cannot be built."""


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


def _get_service(environ: dict[str, Any]) -> Any:
    """The built service, building it now if needed.

    :raises Exception: whatever stopped the build; logged once per cause.
    """
    global _service, _last_error
    with _guard:
        if _service is None:
            try:
                _service = _build(environ)
            except Exception as exc:
                message = f"The inspector API cannot start: {exc}"
                if message != _last_error:
                    LOG.error("%s", message)
                    _last_error = message
                raise
            _last_error = None
        return _service


def preload() -> bool:
    """Build the service now (at process start) from the process environment.

    A failure is logged and not raised: requests answer 503 with the cause
    and try again. Returns whether the service is ready.
    """
    try:
        _get_service({})
    except Exception:  # logged by _get_service (stderr before oslo.log is set up)
        return False
    return True


def application(
    environ: dict[str, Any], start_response: Callable[..., Any]
) -> Iterable[bytes]:
    service = _service
    if service is None:
        try:
            service = _get_service(environ)
        except Exception:  # answered as 503, retried next time
            # the cause (hosts, users, paths) is for the log, not for clients
            return _unavailable(CANNOT_START, start_response)
    result: Iterable[bytes] = service.app(environ, start_response)
    return result
