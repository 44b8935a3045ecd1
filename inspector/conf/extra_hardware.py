"""Options of the [extra_hardware] group: the extra_hardware hook."""

from oslo_config import cfg

GROUP = "extra_hardware"

OPTS: list[cfg.Opt] = [
    cfg.BoolOpt(
        "strict",
        mutable=True,
        default=False,
        help="Refuse the extra hardware data when one entry is not a "
        "[category, item, key, value] list, and remove data that could not "
        "be converted (kept otherwise), as in ironic-inspector.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
