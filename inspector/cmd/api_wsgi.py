"""ironic-inspector-api-wsgi: the split-mode API on a local threaded server.

Production deployments serve ``inspector.wsgi:application`` from Apache
(mod_wsgi) or another WSGI server; this command is for local runs and tests:

    ironic-inspector-api-wsgi --host 127.0.0.1 --port 5050 -- --config-file F

Its server honours ``use_ssl`` and ``[ssl]`` and ``listen_unix_socket`` as
the standalone process does; ``--host``/``--port`` cannot be combined with a
Unix socket.
"""

import argparse
import logging
import sys

from inspector import bootstrap

LOG = logging.getLogger(__name__)
PROG = "ironic-inspector-api-wsgi"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Serve the split-mode inspector API. Options after -- "
        "go to the service (--config-file, --config-dir).",
    )
    parser.add_argument("--host", default=None, help="default: [DEFAULT]listen_address")
    parser.add_argument(
        "--port", type=int, default=None, help="default: [DEFAULT]listen_port"
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="default: [DEFAULT]api_threads"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    ours, service_args = args, []
    if "--" in args:
        split = args.index("--")
        ours, service_args = args[:split], args[split + 1 :]
    # service options may also come before "--" (--config-file F)
    options, unknown = _parser().parse_known_args(ours)
    service_args = unknown + service_args

    bootstrap.select_threading_backend()
    from oslo_config import cfg

    from inspector import exceptions
    from inspector.net.wsgi_server import WSGIServer
    from inspector.server import wiring

    try:
        conf = bootstrap.parse_config(service_args)
    except cfg.Error as exc:
        bootstrap.die(PROG, str(exc))
    bootstrap.setup_logging(conf, "ironic-inspector-api")
    try:
        service = wiring.api(conf)
        server = WSGIServer.from_conf(
            service.app, conf, options.host, options.port, options.threads
        )
        server.start()
    except exceptions.ConfigError as exc:
        bootstrap.die(PROG, str(exc))
    except exceptions.ServiceUnavailable as exc:  # a backend: a restart may help
        bootstrap.die(PROG, str(exc), code=1)
    LOG.info("%s started", PROG)
    bootstrap.wait_for_stop(conf, service_args)
    server.stop()
    service.stop()
    LOG.info("%s stopped", PROG)
    return 0
