"""Options of the [pci_devices] group."""

from oslo_config import cfg

GROUP = "pci_devices"

OPTS: list[cfg.Opt] = [
    cfg.MultiStrOpt(
        "alias",
        default=[],
        help='A PCI device to count, as JSON: {"vendor_id": "10de", '
        '"product_id": "20b0", "name": "a100"}. The pci_devices hook sets the '
        "capability <name>:<count> on nodes that have such devices. Repeat "
        "the option for several aliases.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
