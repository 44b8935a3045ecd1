"""Options of the [mdns] group: publishing the API by multicast DNS.

ironic-inspector's names and defaults. The service reads them only when
``[DEFAULT]enable_mdns`` is True (:mod:`inspector.net.mdns`);
``lookup_attempts`` belongs to the agent's mDNS client and is registered so
that a configuration shared with it still loads.
"""

from oslo_config import cfg, types

GROUP = "mdns"

OPTS: list[cfg.Opt] = [
    cfg.IntOpt(
        "registration_attempts",
        min=1,
        default=5,
        help="Attempts to publish the service when another responder claims "
        "the same name (zeroconf's NonUniqueNameException): between "
        "attempts the learned records are dropped and the wait doubles "
        "from 0.1 s. After the last one the failure is logged and the "
        "service runs unpublished.",
    ),
    cfg.IntOpt(
        "lookup_attempts",
        min=1,
        default=3,
        help="Attempts of an mDNS client to find a service. Read by "
        "ironic-python-agent's client, not by this service; accepted so "
        "that a shared configuration loads.",
    ),
    cfg.Opt(
        "params",
        # String(quotes=True): a quoted value may hold commas, as upstream
        type=types.Dict(types.String(quotes=True)),
        default={},
        help="Extra properties published in the service's TXT record, e.g. "
        "ipa_ntp_server:10.0.0.1 (the agent applies the ipa_ ones it allows "
        "in its [mdns]allowed_overrides). The service sets protocol when "
        "listen_port is not the scheme's own (80, 443), over a protocol "
        "given here.",
    ),
    cfg.ListOpt(
        "interfaces",
        help="IP addresses of the local interfaces to publish on: the "
        "service answers queries and announces itself only there, and "
        "publishes these addresses when listen_address is a wildcard. "
        "Unset: every interface of the host.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
