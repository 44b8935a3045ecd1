"""Options of the [ironic] group: keystoneauth plus retry settings."""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

GROUP = "ironic"

OPTS = [
    cfg.IntOpt(
        "max_retries",
        default=30,
        min=0,
        help="Retries of an Ironic request that failed with 409 (node "
        "locked), 503 or a dropped connection.",
    ),
    cfg.FloatOpt(
        "retry_interval",
        default=2.0,
        min=0,
        help="Seconds between those retries.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
    ks_loading.register_session_conf_options(conf, GROUP)
    ks_loading.register_auth_conf_options(conf, GROUP)
    ks_loading.register_adapter_conf_options(conf, GROUP, include_deprecated=True)
    conf.set_default("service_type", "baremetal", group=GROUP)
    conf.set_default("valid_interfaces", ["internal", "public"], group=GROUP)


def list_opts() -> list[cfg.Opt]:
    opts = list(OPTS)
    opts += ks_loading.get_session_conf_options()
    opts += ks_loading.get_auth_common_conf_options()
    opts += ks_loading.get_adapter_conf_options(include_deprecated=True)
    return opts
