"""Options of the [rules] group: what introspection rules may reach."""

from oslo_config import cfg

GROUP = "rules"

OPTS = [
    cfg.ListOpt(
        "api_call_allowed_hosts",
        mutable=True,
        default=[],
        help="Hosts an introspection rule's api-call action may POST to, as "
        "host or host:port (an IP address or a name, compared as written in "
        "the rule's URL). Empty (the default): api-call is refused when a "
        "rule is created, and fails on the node if a stored rule has one. A "
        "rule runs inside the provisioning network's trust: list only the "
        "services meant to hear from it, never a whole network.",
    ),
    cfg.FloatOpt(
        "api_call_max_timeout",
        mutable=True,
        default=30.0,
        min=0.1,
        help="The longest timeout (seconds) an api-call may ask for; the "
        "call counts against the node's processing time and holds its lock.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
