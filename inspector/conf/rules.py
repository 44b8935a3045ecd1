"""Options of the [rules] group: what introspection rules may reach."""

from oslo_config import cfg

GROUP = "rules"

OPTS = [
    cfg.ListOpt(
        "api_call_allowed_hosts",
        mutable=True,
        default=[],
        help="Hosts an introspection rule's api-call action may POST to, as "
        "host or host:port (an IP address or a name): a URL's host is allowed "
        "when written as an entry is, or when the addresses it resolves to "
        "are among an entry's (the call then goes to the address checked). "
        "Empty (the default): api-call is refused when a "
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
    cfg.StrOpt(
        "built_in_rules",
        mutable=True,
        default="",
        help="A YAML file of built-in introspection rules (the shape of "
        "Ironic's [inspection_rules]built_in_rules: a list of rules in "
        "Ironic's language or ours), loaded when a service starts and on "
        "SIGHUP. They run with the stored rules by priority, are listed "
        "read-only by the API from version 1.25 and cannot be deleted "
        "through it. An invalid file refuses the start; on SIGHUP it is "
        "logged and the rules loaded before stay. Empty: none.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
