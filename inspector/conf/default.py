"""Options of the [DEFAULT] group."""

import socket

from oslo_config import cfg, types

DEFAULT_IPMI_ADDRESS_FIELDS = [
    "redfish_address",
    "ilo_address",
    "drac_host",
    "drac_address",
    "ibmc_address",
]


class _OctalMode(types.Integer):
    """A file mode written in octal, as chmod takes it: 0660 or 660."""

    def __init__(self) -> None:
        super().__init__(min=0, max=0o7777, type_name="octal file mode")

    def __call__(self, value: object) -> int:
        if isinstance(value, str):
            try:
                value = int(value.strip(), 8)
            except ValueError:
                raise ValueError(
                    f"{value!r} is not an octal file mode such as 0660"
                ) from None
        mode = super().__call__(value)
        assert isinstance(mode, int)  # Integer yields int or raises
        return mode


CAST_THREADS = 8
"""Default of oslo.messaging's executor_thread_pool_size in a conductor: the
threads taking casts off the message broker. A cast is only claimed and
queued there (one database write); its work runs in the work queue's
threads, up to max_concurrency. oslo.messaging's pool starts a thread for
every cast until it is full: sized max_concurrency, a burst of casts left
hundreds of threads behind, each waking every second."""

OPTS = [
    cfg.BoolOpt(
        "standalone",
        default=True,
        help="Run the API and the conductor in one process (ironic-inspector). "
        "With False, ironic-inspector-api-wsgi and ironic-inspector-conductor "
        "run as separate services coordinated through [coordination].",
    ),
    cfg.StrOpt(
        "rpc_transport",
        default="oslo",
        choices=[
            (
                "oslo",
                "oslo.messaging over the message broker of transport_url (RabbitMQ)",
            ),
            (
                "json-rpc",
                "JSON-RPC over HTTP(S): each conductor serves it ([json_rpc]) "
                "and publishes its address in the conductor group; no broker",
            ),
        ],
        help="How the API hands work to the conductors in split mode. "
        "json-rpc needs only etcd and the database; no process then opens "
        "transport_url. The standalone process ignores it (in-process "
        "transport).",
    ),
    cfg.StrOpt(
        "host",
        default=socket.gethostname(),
        sample_default="<the machine's host name>",
        help="Name of this service host; must be unique among conductors. "
        "Defaults to the machine's host name (as the hostname command "
        "prints it, not the FQDN).",
    ),
    cfg.HostAddressOpt(
        "listen_address",
        default="::",
        help="IP address the API listens on.",
    ),
    cfg.PortOpt("listen_port", default=5050, help="Port the API listens on."),
    cfg.StrOpt(
        "listen_unix_socket",
        help="Path of a Unix socket the standalone API (or "
        "ironic-inspector-api-wsgi's own server) listens on instead of "
        "listen_address and listen_port, for a front end such as nginx on "
        "the same host. A stale socket file is replaced at start; a socket "
        "another process listens on, or any other file at the path, stops "
        "the start. The file is removed at a clean stop.",
    ),
    cfg.Opt(
        "listen_unix_socket_mode",
        type=_OctalMode(),
        help="File mode of listen_unix_socket, in octal (e.g. 0660). "
        "Unset: the process umask decides. Ignored without "
        "listen_unix_socket.",
    ),
    cfg.BoolOpt(
        "use_ssl",
        default=False,
        help="Serve the API over HTTPS with [ssl]cert_file and key_file "
        "(the standalone process and ironic-inspector-api-wsgi's own "
        "server; under Apache, configure TLS in Apache).",
    ),
    cfg.BoolOpt(
        "enable_mdns",
        default=False,
        help="Publish the API's URL by multicast DNS ([mdns]) as "
        "baremetal-introspection (service type _openstack._tcp.local.), "
        "for ramdisks booted with ipa-inspection-callback-url=mdns. The "
        "URL is made of use_ssl, listen_address (or the addresses of "
        "[mdns]interfaces when it is a wildcard) and listen_port. Only the "
        "standalone process publishes, on a TCP listener: a conductor of "
        "the split shape, or a process with listen_unix_socket, refuses to "
        "start with it.",
    ),
    cfg.IntOpt(
        "api_threads",
        default=16,
        min=1,
        max=512,
        help="Threads of the API's WSGI server in the standalone process. "
        "Requests are short; more threads help only with many slow clients.",
    ),
    cfg.StrOpt(
        "auth_strategy",
        default="keystone",
        choices=[
            (
                "noauth",
                "no authentication: everyone is an admin; only for "
                "trusted networks and labs",
            ),
            (
                "http_basic",
                "HTTP basic authentication against the bcrypt "
                "htpasswd file http_basic_auth_user_file; every user is an admin",
            ),
            (
                "keystone",
                "Keystone tokens (keystonemiddleware, "
                "[keystone_authtoken]); roles decide through the policy",
            ),
        ],
        help="Authentication of API requests. /, /v1, /v1/continue, "
        "/healthcheck and /metrics stay public; everything else answers 401 "
        "without valid credentials. The default is ironic-inspector's: "
        "a configuration that does not name a strategy gets Keystone.",
    ),
    cfg.StrOpt(
        "http_basic_auth_user_file",
        default="/etc/ironic-inspector/htpasswd",
        help="htpasswd file of auth_strategy = http_basic: user:bcrypt-hash "
        "lines (htpasswd -B). Re-read when it changes.",
    ),
    cfg.IntOpt(
        "max_request_body_size",
        default=16 * 1024 * 1024,
        min=1024,
        help="Largest request body in bytes; larger ones answer 413. A full "
        "ramdisk inventory is well under 1 MiB.",
    ),
    cfg.IntOpt(
        "timeout",
        mutable=True,
        default=3600,
        min=0,
        help="Seconds after which an unfinished introspection ends in error "
        "with 'Introspection timeout'. 0 disables the timeout.",
    ),
    cfg.IntOpt(
        "clean_up_period",
        mutable=True,
        default=60,
        min=0,
        help="Seconds between runs of the periodic clean-up (timeouts). 0 disables it.",
    ),
    cfg.FloatOpt(
        "introspection_delay",
        mutable=True,
        default=5.0,
        min=0,
        help="Seconds between two power-on windows, counted over every "
        "process of the deployment (they share the database), to avoid a "
        "power surge when many nodes start at once. Each window lets "
        "introspection_delay_burst power-ons through.",
    ),
    cfg.IntOpt(
        "introspection_delay_burst",
        mutable=True,
        default=1,
        min=1,
        help="Power-ons let through together in each introspection_delay "
        "window (ours; upstream has 1). A fleet of N machines is powered on "
        "in about N / burst * introspection_delay seconds: 10,000 machines "
        "take 13.9 hours with the defaults and 1.4 hours with a burst of 10.",
    ),
    cfg.IntOpt(
        "api_max_limit",
        mutable=True,
        default=1000,
        min=1,
        help="Largest page a list request may ask for; limit=0 means this.",
    ),
    cfg.BoolOpt(
        "can_manage_boot",
        mutable=True,
        default=True,
        help="Whether this service may set the boot device and power nodes "
        "on and off. With False every introspection needs manage_boot=false.",
    ),
    cfg.StrOpt(
        "introspection_mode",
        mutable=True,
        default="in-band",
        choices=[
            ("in-band", "boot the inspection ramdisk (as ironic-inspector)"),
            ("out-of-band", "ask the node's Redfish BMC only; never boot it"),
            ("auto", "ask the BMC first, boot the ramdisk for what it lacks"),
        ],
        help="How an introspection learns the hardware when the start "
        "names no mode (API 1.26's mode parameter). See doc/redfish.md.",
    ),
    cfg.ListOpt(
        "ipmi_address_fields",
        mutable=True,
        default=DEFAULT_IPMI_ADDRESS_FIELDS,
        help="driver_info fields holding a node's BMC address, used to look "
        "the node up when the ramdisk posts its data. ipmi_address is always "
        "checked.",
    ),
    cfg.IntOpt(
        "max_concurrency",
        default=1000,
        min=1,
        max=1000,
        help="Most introspection steps (power-on, processing) a conductor "
        "runs at once, as in ironic-inspector. Threads start only when work "
        "is waiting, so an idle conductor holds few. Casts are taken off the "
        f"message broker by at most {CAST_THREADS} more "
        "(executor_thread_pool_size).",
    ),
    cfg.IntOpt(
        "graceful_shutdown_timeout",
        mutable=True,
        default=60,
        min=0,
        help="Seconds a stopping conductor (SIGTERM, SIGINT) gives the steps "
        "it owns to finish, taking no new work and staying in the conductor "
        "group meanwhile; the steps still unfinished then are left to the "
        "leader, which resumes them once the conductor has left. 0 waits "
        "until the last step ends. oslo.service's option of the same name.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS)


def list_opts() -> list[cfg.Opt]:
    return OPTS
