"""Options of the [accelerators] group (accelerators hook)."""

from oslo_config import cfg

GROUP = "accelerators"

OPTS: list[cfg.Opt] = [
    cfg.StrOpt(
        "known_devices",
        default=None,
        help="YAML (or JSON) file of the accelerators to recognise, as in "
        'ironic-inspector: {"pci_devices": '
        '[{"vendor_id": "10de", "device_id": "20b0", "type": "GPU", '
        '"device_info": "NVIDIA A100"}, ...]}. Unset: a built-in list of '
        "common NVIDIA, AMD and Intel GPUs and FPGAs.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
