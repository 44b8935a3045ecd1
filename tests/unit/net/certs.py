"""Certificates for TLS tests, made on the spot with ``cryptography``.

A private CA signs a server certificate (for ``localhost`` and 127.0.0.1)
and a client certificate; everything is written as PEM files. Shared by the
unit tests of :mod:`inspector.server` and the TLS integration tests.
"""

import dataclasses
import datetime
import ipaddress
import pathlib

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclasses.dataclass(frozen=True)
class Pair:
    cert: pathlib.Path
    key: pathlib.Path


@dataclasses.dataclass(frozen=True)
class Certs:
    ca: Pair
    server: Pair
    client: Pair
    stranger: Pair
    """A client certificate signed by another CA."""


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _write(
    directory: pathlib.Path,
    stem: str,
    cert: x509.Certificate,
    key: ec.EllipticCurvePrivateKey,
) -> Pair:
    pair = Pair(directory / f"{stem}.crt", directory / f"{stem}.key")
    pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pair.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    pair.key.chmod(0o600)
    return pair


def _ca(common: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _key()
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common))
        .issuer_name(_name(common))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
        )
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _leaf(
    common: str,
    ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey],
    server: bool,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    ca_cert, ca_key = ca
    key = _key()
    now = datetime.datetime.now(datetime.UTC)
    usage = (
        ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    )
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                ]
            ),
            critical=False,
        )
    return builder.sign(ca_key, hashes.SHA256()), key


def make_certs(directory: pathlib.Path) -> Certs:
    """A CA, a server and a client certificate it signed, and a stranger's."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = _ca("inspector test CA")
    other_ca = _ca("another CA")
    return Certs(
        ca=_write(directory, "ca", *ca),
        server=_write(directory, "server", *_leaf("localhost", ca, server=True)),
        client=_write(directory, "client", *_leaf("operator", ca, server=False)),
        stranger=_write(
            directory, "stranger", *_leaf("stranger", other_ca, server=False)
        ),
    )
