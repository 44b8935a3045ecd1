"""Options of the [capabilities] group: what the capabilities hook writes."""

from oslo_config import cfg

GROUP = "capabilities"

DEFAULT_CPU_FLAGS = {
    "vmx": "cpu_vt",
    "svm": "cpu_vt",
    "aes": "cpu_aes",
    "pse": "cpu_hugepages",
    "pdpe1gb": "cpu_hugepages_1g",
    "smx": "cpu_txt",
}

OPTS = [
    cfg.BoolOpt(
        "boot_mode",
        mutable=True,
        default=False,
        help="Write the boot mode the ramdisk ran in (boot_mode:uefi or "
        "boot_mode:bios) into the node's capabilities. Ironic then deploys "
        "in that mode, so it is off by default, as in ironic-inspector.",
    ),
    cfg.DictOpt(
        "cpu_flags",
        mutable=True,
        default=DEFAULT_CPU_FLAGS,
        help="CPU flag -> capability set to 'true' when the ramdisk reports "
        "the flag, as flag:capability pairs.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
