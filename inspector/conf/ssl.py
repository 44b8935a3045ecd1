"""Options of the [ssl] group: the API's own TLS (``[DEFAULT]use_ssl``).

The names and meanings are those ironic-inspector took from oslo.service;
under Apache, Apache's own TLS settings apply instead.
"""

from oslo_config import cfg

GROUP = "ssl"

OPTS: list[cfg.Opt] = [
    cfg.StrOpt(
        "cert_file",
        help="PEM certificate (chain) the API presents when [DEFAULT]use_ssl is True.",
    ),
    cfg.StrOpt(
        "key_file",
        help="PEM private key of cert_file, unencrypted (the service cannot "
        "prompt for a passphrase; an encrypted key is refused at start).",
    ),
    cfg.StrOpt(
        "ca_file",
        help="PEM CA bundle: when set, every client must present a "
        "certificate signed by one of these CAs.",
    ),
    cfg.StrOpt(
        "version",
        help="Oldest TLS version accepted: TLSv1_2 or TLSv1_3 (the older "
        "names TLSv1, TLSv1_1 and SSLv23 are accepted and mean TLSv1_2, "
        "the oldest this service speaks). Unset: TLSv1_2.",
    ),
    cfg.StrOpt(
        "ciphers",
        help="OpenSSL cipher list for TLS 1.2 connections, e.g. "
        "ECDHE+AESGCM. Unset: OpenSSL's default.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
