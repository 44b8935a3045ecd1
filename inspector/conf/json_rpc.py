"""Options of the [json_rpc] group: the brokerless transport between the
API and the conductors (``[DEFAULT]rpc_transport = json-rpc``).

The names are Ironic's, so one set of habits serves both services. The
server options apply to each conductor; the client options to the API
processes (and to ``ironic-inspector-status``).
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

GROUP = "json_rpc"

OPTS = [
    cfg.StrOpt(
        "auth_strategy",
        default="keystone",
        choices=[
            ("noauth", "no authentication: only on a trusted, private network"),
            (
                "http_basic",
                "HTTP basic authentication: the conductor checks the bcrypt "
                "htpasswd file http_basic_auth_user_file, the API sends "
                "http_basic_username and http_basic_password",
            ),
            (
                "keystone",
                "Keystone tokens: the conductor validates them "
                "([keystone_authtoken]) and requires one of allowed_roles; the "
                "API gets its token with this group's keystoneauth options",
            ),
        ],
        help="Authentication of the conductors' JSON-RPC endpoints. Unset "
        "in a file, it follows [DEFAULT]auth_strategy (as in Ironic).",
    ),
    cfg.StrOpt(
        "http_basic_auth_user_file",
        default="/etc/ironic-inspector/htpasswd-json-rpc",
        help="Conductor side of auth_strategy = http_basic: htpasswd file "
        "(user:bcrypt-hash lines, htpasswd -B), re-read when it changes.",
    ),
    cfg.StrOpt(
        "http_basic_username",
        help="API side of auth_strategy = http_basic: the user name sent to "
        "the conductors.",
    ),
    cfg.StrOpt(
        "http_basic_password",
        secret=True,
        help="API side of auth_strategy = http_basic: the password sent to "
        "the conductors.",
    ),
    cfg.ListOpt(
        "allowed_roles",
        default=["admin"],
        help="auth_strategy = keystone: a token needs one of these roles to "
        "call a conductor.",
    ),
    cfg.HostAddressOpt(
        "host_ip",
        default="::",
        help="Address each conductor's JSON-RPC server listens on. The "
        "default, ::, is every IPv4 and IPv6 address of the host; with "
        "noauth or without TLS prefer an address of a private network.",
    ),
    cfg.PortOpt(
        "port",
        default=8089,
        help="TCP port of each conductor's JSON-RPC server. Conductors that "
        "share a host need a port each.",
    ),
    cfg.HostAddressOpt(
        "advertise_host",
        help="Address (or name) the API uses to reach this conductor, "
        "published in the conductor group. Unset: host_ip when it is a "
        "specific address, else [DEFAULT]host.",
    ),
    cfg.BoolOpt(
        "use_ssl",
        default=False,
        help="Serve JSON-RPC over HTTPS (cert_file and key_file) and make "
        "the API call the conductors over HTTPS.",
    ),
    cfg.StrOpt(
        "cert_file",
        help="Conductor side of use_ssl: the PEM certificate (chain).",
    ),
    cfg.StrOpt(
        "key_file",
        help="Conductor side of use_ssl: its unencrypted PEM private key.",
    ),
    cfg.IntOpt(
        "threads",
        default=16,
        min=1,
        max=512,
        help="Threads of each conductor's JSON-RPC server. A call returns as "
        "soon as the step is claimed, in a few milliseconds.",
    ),
    cfg.IntOpt(
        "max_request_body_size",
        default=64 * 1024,
        min=1024,
        help="Largest JSON-RPC request body in bytes; larger ones are "
        "refused with 413 before they are read. A call is about 200 bytes.",
    ),
]

DEFAULT_TIMEOUT = 3.0
"""A call only claims a step (a few milliseconds): a conductor that takes
longer is stuck or dying, and three tries stay within 10 s."""

CLIENT_OPTS = [
    cfg.FloatOpt(
        "timeout",
        default=DEFAULT_TIMEOUT,
        min=0.1,
        help="Seconds the API waits for one conductor to take one call "
        "(connecting included, at most 2 s of it) before it tries another "
        "conductor. A call only claims a step.",
    ),
    cfg.StrOpt(
        "cafile",
        help="API side of use_ssl: PEM file of the CAs that signed the "
        "conductors' certificates (unset: the system's CAs).",
    ),
    cfg.BoolOpt(
        "insecure",
        default=False,
        help="API side of use_ssl: do not verify the conductors' "
        "certificates (a warning at start; prefer cafile).",
    ),
    cfg.StrOpt(
        "certfile",
        help="API side: a PEM client certificate to present to the "
        "conductors (for a TLS proxy in front of them that asks for one).",
    ),
    cfg.StrOpt(
        "keyfile",
        help="API side: the unencrypted PEM key of certfile.",
    ),
    cfg.IntOpt(
        "connect_retries",
        default=0,
        min=0,
        help="Extra tries of a connection to the same conductor before the "
        "API tries another one (each failed cast already moves on to "
        "another live conductor, 3 in all).",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS + CLIENT_OPTS, group=GROUP)
    # auth_type and auth_section; the chosen plugin's options (auth_url,
    # username, ...) are registered when it is loaded
    ks_loading.register_auth_conf_options(conf, GROUP)


def list_opts() -> list[cfg.Opt]:
    opts = OPTS + CLIENT_OPTS
    opts += ks_loading.get_auth_common_conf_options()
    return opts
