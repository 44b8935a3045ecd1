"""ironic-inspector-api-wsgi: the split-mode API on a local threaded server.

Production deployments serve ``inspector.wsgi:application`` from Apache
(mod_wsgi) or another WSGI server; this command is for local runs and tests:

    ironic-inspector-api-wsgi --host 127.0.0.1 --port 5050 -- --config-file F

Its server honours ``use_ssl`` and ``[ssl]`` and ``listen_unix_socket`` as
the standalone process does; ``--host``/``--port`` cannot be combined with a
Unix socket.
"""

import argparse
import sys
from typing import TYPE_CHECKING

from inspector.cmd import daemon

if TYPE_CHECKING:
    from oslo_config import cfg

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

    def build(conf: "cfg.ConfigOpts") -> list[daemon.Part]:
        from inspector.net.wsgi_server import WSGIServer
        from inspector.server import wiring

        service = wiring.api(conf)
        server = WSGIServer.from_conf(
            service.app, conf, options.host, options.port, options.threads
        )
        return [service, server]

    return daemon.run(
        PROG,
        unknown + service_args,
        build,
        standalone=False,
        product="ironic-inspector-api",
    )
