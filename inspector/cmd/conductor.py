"""ironic-inspector-conductor: one conductor of the split shape."""

from typing import TYPE_CHECKING

from inspector.cmd import daemon

if TYPE_CHECKING:
    from oslo_config import cfg

PROG = "ironic-inspector-conductor"


def main(argv: list[str] | None = None) -> int:
    return daemon.run(PROG, argv, _build, standalone=False)


def _build(conf: "cfg.ConfigOpts") -> list[daemon.Part]:
    from inspector.server import wiring

    return list(wiring.conductor_parts(conf))
