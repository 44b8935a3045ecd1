"""The API's TLS context: each bad option refused by name, and what the
context accepts in a real handshake (over a socket pair, no server)."""

import os
import pathlib
import socket
import ssl
import threading

import pytest
from oslo_config import cfg

from inspector import exceptions
from inspector.conf import default
from inspector.conf import ssl as ssl_opts
from inspector.net import tls
from tests.unit.net.certs import Certs, Pair, make_certs


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


def _conf(**ssl_values: str) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    default.register_opts(conf)
    ssl_opts.register_opts(conf)
    conf([])
    conf.set_override("use_ssl", True)
    for name, value in ssl_values.items():
        conf.set_override(name, value, group="ssl")
    return conf


def _handshake(
    server: ssl.SSLContext,
    ca: pathlib.Path,
    client_cert: Pair | None = None,
    maximum: ssl.TLSVersion | None = None,
) -> str:
    """The TLS version a client (trusting ``ca``) agrees on with ``server``.

    :raises ssl.SSLError: the handshake failed on the client's side.
    """
    client = ssl.create_default_context(cafile=str(ca))
    if client_cert is not None:
        client.load_cert_chain(str(client_cert.cert), str(client_cert.key))
    if maximum is not None:
        client.maximum_version = maximum
    ours, theirs = socket.socketpair()
    failures: list[Exception] = []

    def serve() -> None:
        try:
            with server.wrap_socket(theirs, server_side=True) as tls_sock:
                tls_sock.sendall(b"ok")
        except (ssl.SSLError, OSError) as exc:
            failures.append(exc)
            theirs.close()

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        with client.wrap_socket(ours, server_hostname="localhost") as tls_sock:
            # TLS 1.3 reports a refused client certificate after the handshake
            if tls_sock.recv(2) != b"ok":
                raise ssl.SSLError("the server closed the connection")
            return str(tls_sock.version())
    finally:
        thread.join(10)


def test_context_serves_tls_1_2_and_newer(certs: Certs) -> None:
    context = tls.build_context(str(certs.server.cert), str(certs.server.key))
    assert context.minimum_version is ssl.TLSVersion.TLSv1_2
    assert context.verify_mode is ssl.CERT_NONE
    assert _handshake(context, certs.ca.cert) == "TLSv1.3"
    assert (
        _handshake(context, certs.ca.cert, maximum=ssl.TLSVersion.TLSv1_2) == "TLSv1.2"
    )
    # a client that stops at TLS 1.1 is refused
    with pytest.raises(ssl.SSLError):
        _handshake(context, certs.ca.cert, maximum=ssl.TLSVersion.TLSv1_1)


def test_ca_file_requires_a_client_certificate_it_signed(certs: Certs) -> None:
    context = tls.build_context(
        str(certs.server.cert), str(certs.server.key), ca_file=str(certs.ca.cert)
    )
    assert context.verify_mode is ssl.CERT_REQUIRED
    assert _handshake(context, certs.ca.cert, client_cert=certs.client)
    with pytest.raises((ssl.SSLError, OSError)):
        _handshake(context, certs.ca.cert)
    with pytest.raises((ssl.SSLError, OSError)):
        _handshake(context, certs.ca.cert, client_cert=certs.stranger)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (None, ssl.TLSVersion.TLSv1_2),
        ("TLSv1_2", ssl.TLSVersion.TLSv1_2),
        ("tlsv1_2", ssl.TLSVersion.TLSv1_2),
        ("TLSv1_3", ssl.TLSVersion.TLSv1_3),
        ("TLSv1", ssl.TLSVersion.TLSv1_2),
        ("TLSv1_1", ssl.TLSVersion.TLSv1_2),
        ("SSLv23", ssl.TLSVersion.TLSv1_2),
    ],
)
def test_version_names(name: str | None, expected: ssl.TLSVersion) -> None:
    assert tls.minimum_version(name) is expected


@pytest.mark.parametrize("name", ["SSLv3", "TLSv1_4", "tls1.2"])
def test_unknown_version_is_refused(name: str) -> None:
    with pytest.raises(exceptions.ConfigError, match=r"^\[ssl\]version"):
        tls.minimum_version(name)


def test_tls_1_3_minimum_refuses_a_tls_1_2_client(certs: Certs) -> None:
    context = tls.build_context(
        str(certs.server.cert), str(certs.server.key), version="TLSv1_3"
    )
    with pytest.raises(ssl.SSLError):
        _handshake(context, certs.ca.cert, maximum=ssl.TLSVersion.TLSv1_2)


def test_key_of_another_certificate_is_refused(certs: Certs) -> None:
    with pytest.raises(exceptions.ConfigError) as caught:
        tls.build_context(str(certs.server.cert), str(certs.client.key))
    assert "[ssl]key_file" in str(caught.value)
    assert "is not the private key of [ssl]cert_file" in str(caught.value)


def test_missing_files_are_named(certs: Certs, tmp_path: pathlib.Path) -> None:
    missing = str(tmp_path / "nope.pem")
    with pytest.raises(exceptions.ConfigError, match=r"^\[ssl\]cert_file .*nope"):
        tls.build_context(missing, str(certs.server.key))
    with pytest.raises(exceptions.ConfigError, match=r"^\[ssl\]key_file .*nope"):
        tls.build_context(str(certs.server.cert), missing)
    with pytest.raises(exceptions.ConfigError, match=r"^\[ssl\]ca_file .*nope"):
        tls.build_context(str(certs.server.cert), str(certs.server.key), missing)
    with pytest.raises(exceptions.ConfigError, match="is a directory"):
        tls.build_context(str(certs.server.cert), str(tmp_path))


def test_unreadable_key_is_named(
    certs: Certs, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = tmp_path / "server.key"
    key.write_bytes(certs.server.key.read_bytes())
    key.chmod(0)
    if os.geteuid() == 0:  # root reads any file: the kernel's answer for others
        denied = PermissionError(13, "Permission denied")

        def refuse(path: str, mode: str = "r") -> object:
            if path == str(key):
                raise denied
            return open(path, mode)  # noqa: SIM115

        monkeypatch.setattr(tls, "open", refuse, raising=False)
    with pytest.raises(exceptions.ConfigError, match="Permission denied"):
        tls.build_context(str(certs.server.cert), str(key))


def test_files_of_the_wrong_kind_are_named(certs: Certs) -> None:
    with pytest.raises(exceptions.ConfigError, match="holds no PEM certificate"):
        tls.build_context(str(certs.server.key), str(certs.server.key))
    with pytest.raises(exceptions.ConfigError, match="holds no usable PEM private"):
        tls.build_context(str(certs.server.cert), str(certs.server.cert))
    with pytest.raises(exceptions.ConfigError, match=r"^\[ssl\]ca_file"):
        tls.build_context(
            str(certs.server.cert), str(certs.server.key), str(certs.server.key)
        )


def test_encrypted_key_is_refused_without_prompting(
    certs: Certs, tmp_path: pathlib.Path
) -> None:
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(certs.server.key.read_bytes(), None)
    encrypted = tmp_path / "encrypted.key"
    encrypted.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        )
    )
    with pytest.raises(exceptions.ConfigError, match=r"^\[ssl\]key_file .*encrypted"):
        tls.build_context(str(certs.server.cert), str(encrypted))


def test_ciphers(certs: Certs) -> None:
    context = tls.build_context(
        str(certs.server.cert), str(certs.server.key), ciphers="ECDHE+AESGCM"
    )
    names = {c["name"] for c in context.get_ciphers() if c["protocol"] == "TLSv1.2"}
    assert names and all("GCM" in name for name in names)
    with pytest.raises(exceptions.ConfigError, match=r"^\[ssl\]ciphers 'bogus'"):
        tls.build_context(
            str(certs.server.cert), str(certs.server.key), ciphers="bogus"
        )


def test_server_tls_off_without_use_ssl(certs: Certs) -> None:
    conf = _conf(cert_file=str(certs.server.cert), key_file=str(certs.server.key))
    conf.set_override("use_ssl", False)
    assert tls.server_tls(conf) is None


@pytest.mark.parametrize("missing", ["cert_file", "key_file"])
def test_use_ssl_needs_cert_and_key(certs: Certs, missing: str) -> None:
    values = {"cert_file": str(certs.server.cert), "key_file": str(certs.server.key)}
    del values[missing]
    with pytest.raises(exceptions.ConfigError) as caught:
        tls.server_tls(_conf(**values))
    assert str(caught.value) == (
        f"[DEFAULT]use_ssl is True but [ssl]{missing} is not set"
    )


def test_server_tls_from_conf(certs: Certs) -> None:
    settings = tls.server_tls(
        _conf(
            cert_file=str(certs.server.cert),
            key_file=str(certs.server.key),
            ca_file=str(certs.ca.cert),
            version="TLSv1_3",
        )
    )
    assert settings is not None
    assert settings.cert_file == str(certs.server.cert)
    assert settings.context.verify_mode is ssl.CERT_REQUIRED
    assert settings.context.minimum_version is ssl.TLSVersion.TLSv1_3
