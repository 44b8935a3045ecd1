"""ironic-inspector: the API and a conductor in one process."""

from typing import TYPE_CHECKING

from inspector.cmd import daemon

if TYPE_CHECKING:
    from oslo_config import cfg

PROG = "ironic-inspector"


def main(argv: list[str] | None = None) -> int:
    return daemon.run(PROG, argv, _build, standalone=True, detail=" (standalone)")


def _build(conf: "cfg.ConfigOpts") -> list[daemon.Part]:
    from inspector.net.wsgi_server import WSGIServer
    from inspector.server import wiring

    service = wiring.standalone(conf)
    # TLS and socket options are checked before the conductor starts; the
    # API listens once it runs (and stops first)
    return [service, WSGIServer.from_conf(service.app, conf)]
