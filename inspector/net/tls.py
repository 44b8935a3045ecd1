"""The API's own TLS: ``[DEFAULT]use_ssl`` and the ``[ssl]`` options.

:func:`server_context` turns the options into an explicit
:class:`ssl.SSLContext` (TLS 1.2 at the oldest) for the cheroot server of
``ironic-inspector`` and ``ironic-inspector-api-wsgi``. Every problem with
the options is a :class:`~inspector.exceptions.ConfigError` naming the
option, raised before the server listens: with ``use_ssl`` the API never
falls back to plain HTTP.
"""

import dataclasses
import logging
import os
import ssl
from typing import TYPE_CHECKING

from inspector import exceptions

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)

VERSIONS: dict[str, ssl.TLSVersion] = {
    "tlsv1_2": ssl.TLSVersion.TLSv1_2,
    "tlsv1_3": ssl.TLSVersion.TLSv1_3,
    # ironic-inspector's (oslo.service's) older names: this service speaks
    # nothing older than TLS 1.2, so they ask for what it has anyway
    "tlsv1": ssl.TLSVersion.TLSv1_2,
    "tlsv1_1": ssl.TLSVersion.TLSv1_2,
    "sslv23": ssl.TLSVersion.TLSv1_2,
}
"""``[ssl]version`` (any case) to the oldest TLS version accepted."""

LEGACY_VERSIONS = frozenset({"tlsv1", "tlsv1_1", "sslv23"})


def minimum_version(name: str | None) -> ssl.TLSVersion:
    """The oldest version ``[ssl]version`` accepts (TLS 1.2 when unset).

    :raises ConfigError: an unknown name, or TLS 1.3 without OpenSSL support.
    """
    if not name:
        return ssl.TLSVersion.TLSv1_2
    key = name.strip().lower()
    if key not in VERSIONS:
        raise exceptions.ConfigError(
            f"[ssl]version {name!r} is not a TLS version: use TLSv1_2 or TLSv1_3"
        )
    if key in LEGACY_VERSIONS:
        LOG.warning(
            "[ssl]version %s is older than this service speaks: TLS 1.2 is "
            "the oldest version accepted",
            name,
        )
    version = VERSIONS[key]
    if version is ssl.TLSVersion.TLSv1_3 and not ssl.HAS_TLSv1_3:
        raise exceptions.ConfigError(
            f"[ssl]version {name}: this Python's OpenSSL "
            f"({ssl.OPENSSL_VERSION}) has no TLS 1.3"
        )
    return version


def readable_file(option: str, path: str) -> None:
    """:raises ConfigError: ``path`` (the value of ``option``) is no readable file."""
    try:
        with open(path, "rb") as stream:
            stream.read(1)
    except IsADirectoryError:
        raise exceptions.ConfigError(f"{option} {path} is a directory") from None
    except OSError as exc:
        raise exceptions.ConfigError(
            f"{option} {path} cannot be read: {exc.strerror or exc}"
        ) from exc


def _reason(exc: ssl.SSLError) -> str:
    # OpenSSL's reason code (NO_CERTIFICATE_OR_CRL_FOUND, ...) when it gave one
    return str(exc.reason) if exc.reason else "not in PEM format"


def _no_password() -> bytes:
    # an encrypted key must fail at start, never prompt on a terminal
    raise exceptions.ConfigError("encrypted")


def build_context(
    cert_file: str,
    key_file: str,
    ca_file: str | None = None,
    version: str | None = None,
    ciphers: str | None = None,
    group: str = "[ssl]",
) -> ssl.SSLContext:
    """A server-side context presenting ``cert_file``, checked option by option.

    With ``ca_file`` every client must present a certificate signed by one
    of its CAs (mutual TLS).

    :raises ConfigError: naming the option at fault (of ``group``).
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = minimum_version(version)
    context.options |= ssl.OP_NO_COMPRESSION | ssl.OP_NO_RENEGOTIATION
    for option, path in (
        (f"{group}cert_file", cert_file),
        (f"{group}key_file", key_file),
    ):
        readable_file(option, path)
    # the certificate alone first, so a broken one is named as such
    probe = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        probe.load_verify_locations(cafile=cert_file)
    except ssl.SSLError as exc:
        raise exceptions.ConfigError(
            f"{group}cert_file {cert_file} holds no PEM certificate: {_reason(exc)}"
        ) from exc
    try:
        context.load_cert_chain(cert_file, key_file, password=_no_password)
    except exceptions.ConfigError:
        raise exceptions.ConfigError(
            f"{group}key_file {key_file} is encrypted: the service needs an "
            "unencrypted key (readable by its user only)"
        ) from None
    except ssl.SSLError as exc:
        if exc.reason == "KEY_VALUES_MISMATCH":
            raise exceptions.ConfigError(
                f"{group}key_file {key_file} is not the private key of "
                f"{group}cert_file {cert_file}"
            ) from exc
        raise exceptions.ConfigError(
            f"{group}key_file {key_file} holds no usable PEM private key: "
            f"{_reason(exc)}"
        ) from exc
    if ca_file:
        readable_file(f"{group}ca_file", ca_file)
        try:
            context.load_verify_locations(cafile=ca_file)
        except ssl.SSLError as exc:
            raise exceptions.ConfigError(
                f"{group}ca_file {ca_file} holds no PEM CA certificate: {_reason(exc)}"
            ) from exc
        context.verify_mode = ssl.CERT_REQUIRED
    if ciphers:
        try:
            context.set_ciphers(ciphers)
        except ssl.SSLError as exc:
            raise exceptions.ConfigError(
                f"{group}ciphers {ciphers!r} selects no cipher OpenSSL knows"
            ) from exc
    return context


@dataclasses.dataclass(frozen=True)
class ServerTLS:
    """The checked context and the files it was built from."""

    context: ssl.SSLContext
    cert_file: str
    key_file: str


def server_tls(conf: "cfg.ConfigOpts") -> ServerTLS | None:
    """The API's TLS from ``conf``; None when ``use_ssl`` is False.

    :raises ConfigError: ``use_ssl`` without a usable certificate and key,
        or a bad ``[ssl]`` option; each names the option.
    """
    if not conf.use_ssl:
        return None
    for name in ("cert_file", "key_file"):
        if not conf.ssl[name]:
            raise exceptions.ConfigError(
                f"[DEFAULT]use_ssl is True but [ssl]{name} is not set"
            )
    cert_file = os.path.expanduser(conf.ssl.cert_file)
    key_file = os.path.expanduser(conf.ssl.key_file)
    context = build_context(
        cert_file,
        key_file,
        ca_file=os.path.expanduser(conf.ssl.ca_file) if conf.ssl.ca_file else None,
        version=conf.ssl.version,
        ciphers=conf.ssl.ciphers,
    )
    LOG.info(
        "API TLS: certificate %s, TLS %s or newer%s",
        conf.ssl.cert_file,
        "1.3" if context.minimum_version is ssl.TLSVersion.TLSv1_3 else "1.2",
        f", client certificates signed by {conf.ssl.ca_file} required"
        if conf.ssl.ca_file
        else "",
    )
    return ServerTLS(context, cert_file, key_file)
