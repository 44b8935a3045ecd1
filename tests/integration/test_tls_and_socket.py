"""The API's own server over TLS and on a Unix socket, with real clients.

The standalone ``ironic-inspector`` serves HTTPS with a certificate made
here; the stock client library (what ``openstack baremetal introspection``
runs, its keystoneauth session verifying against the CA as ``--os-cacert``
makes it) talks to it. With ``[ssl]ca_file`` only clients presenting a
certificate of that CA get through. On a Unix socket, a real front end
(Apache's mod_proxy, as Bifrost uses nginx) passes the API's requests on.
"""

import os
import pathlib
import shutil
import socket
import stat
from collections.abc import Iterator

import ironic_inspector_client
import pytest
import requests
from keystoneauth1 import session as ks_session

from inspector.api import versions
from lab.machines.ramdisk import post_continue
from lab.servers import socket_proxy
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from tests.integration.conftest import (
    Client,
    Lab,
    introspect,
    start_inspector,
    wait_until,
)
from tests.unit.net.certs import Certs, make_certs


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


def _tls_options(certs: Certs, **ssl: str) -> dict[str, dict[str, str]]:
    return {
        "DEFAULT": {"use_ssl": "True"},
        "ssl": {
            "cert_file": str(certs.server.cert),
            "key_file": str(certs.server.key),
            **ssl,
        },
    }


@pytest.fixture(scope="module")
def https_inspector(
    ironic: IronicServer, certs: Certs, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InspectorServer]:
    server = start_inspector(
        tmp_path_factory.mktemp("https"), ironic, options=_tls_options(certs)
    )
    yield server
    assert server.stop() == 0, server.log_tail()


def test_stock_client_over_https(
    https_inspector: InspectorServer, certs: Certs, lab: Lab
) -> None:
    assert https_inspector.url.startswith("https://127.0.0.1:")
    # the TLS port accepts connections from just before the line is written
    wait_until(
        lambda: (
            f"API listening on {https_inspector.url}"
            in https_inspector.log_tail(100_000)
        ),
        10,
        "the API to say where it listens",
    )
    session = ks_session.Session(verify=str(certs.ca.cert))
    client = ironic_inspector_client.ClientV1(
        inspector_url=https_inspector.url, session=session
    )
    assert client.server_api_versions() == ((1, 0), versions.MAXIMUM)

    machine, uuid = lab.machine()
    client.introspect(machine.name)
    status = client.get_status(machine.name)
    assert status["uuid"] == uuid and status["state"] in ("starting", "waiting")
    ramdisk = requests.Session()
    ramdisk.trust_env = False  # REQUESTS_CA_BUNDLE would win over verify
    ramdisk.verify = str(certs.ca.cert)
    code, body, _, _ = post_continue(
        https_inspector.url, machine.payload(), session=ramdisk
    )
    assert code == 200, body
    finished = client.wait_for_finish([machine.name], retry_interval=0.2)
    assert finished[machine.name]["state"] == "finished"
    # the links the API builds name the scheme it is reached by
    links = requests.get(f"{https_inspector.url}/", verify=str(certs.ca.cert))
    assert links.json()["versions"][0]["links"][0]["href"].startswith("https://")


def test_https_port_refuses_plain_http_and_unknown_cas(
    https_inspector: InspectorServer, certs: Certs
) -> None:
    plain = https_inspector.url.replace("https://", "http://")
    try:
        resp = requests.get(f"{plain}/v1/introspection", timeout=10)
    except requests.ConnectionError:
        pass  # the TLS layer dropped it
    else:
        assert resp.status_code == 400, resp.text
        assert "HTTPS" in resp.text and "introspection" not in resp.text
    # a client that does not trust our CA does not get in either
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(f"{https_inspector.url}/", timeout=10)


def test_mutual_tls(
    ironic: IronicServer, certs: Certs, tmp_path_factory: pytest.TempPathFactory
) -> None:
    server = start_inspector(
        tmp_path_factory.mktemp("mtls"),
        ironic,
        options=_tls_options(certs, ca_file=str(certs.ca.cert), version="TLSv1_2"),
    )
    try:
        url = f"{server.url}/v1/introspection"
        verify = str(certs.ca.cert)
        # no client certificate: the handshake fails
        with pytest.raises((requests.exceptions.SSLError, requests.ConnectionError)):
            requests.get(url, verify=verify, timeout=10)
        # one from another CA: refused as well
        stranger = (str(certs.stranger.cert), str(certs.stranger.key))
        with pytest.raises((requests.exceptions.SSLError, requests.ConnectionError)):
            requests.get(url, verify=verify, cert=stranger, timeout=10)
        # ours: in, with the stock client as an operator configures it
        mine = (str(certs.client.cert), str(certs.client.key))
        assert requests.get(url, verify=verify, cert=mine, timeout=10).ok
        session = ks_session.Session(verify=verify, cert=mine)
        client = ironic_inspector_client.ClientV1(
            inspector_url=server.url, session=session
        )
        assert client.list_statuses() == []
    finally:
        assert server.stop() == 0, server.log_tail()


def test_use_ssl_without_a_key_refuses_to_start(
    ironic: IronicServer, certs: Certs, tmp_path: pathlib.Path
) -> None:
    options = _tls_options(certs)
    del options["ssl"]["key_file"]
    server = InspectorServer(tmp_path, ironic.url, options=options)
    with pytest.raises(RuntimeError) as caught:
        server.start(timeout=30)
    assert "[DEFAULT]use_ssl is True but [ssl]key_file is not set" in str(caught.value)
    assert server.stop() is None


@pytest.fixture
def socket_dir() -> Iterator[pathlib.Path]:
    path = socket_proxy.socket_directory()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_unix_socket_behind_a_front_end(
    ironic: IronicServer,
    lab: Lab,
    socket_dir: pathlib.Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    missing = socket_proxy.installed()
    if missing:
        pytest.skip(missing)
    sock = socket_dir / "api.sock"
    # a stale socket, as a crashed inspector leaves it: replaced at start
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(sock))
    stale.close()
    server = start_inspector(
        tmp_path_factory.mktemp("unix"),
        ironic,
        options={
            "DEFAULT": {
                "listen_unix_socket": str(sock),
                "listen_unix_socket_mode": "0660",
            }
        },
    )
    try:
        # the socket accepts connections from before its mode is set and
        # the line written
        log = wait_until(
            lambda: server.log_tail(100_000),
            10,
            "the API to say where it listens",
            until=lambda log: (
                f"API listening on http on Unix socket {sock} (mode 0660)" in log
            ),
        )
        info = os.stat(sock)
        assert stat.S_ISSOCK(info.st_mode)
        assert stat.S_IMODE(info.st_mode) == 0o660
        assert f"Replacing the stale socket {sock}" in log
        # nothing listens on the TCP port any more
        with pytest.raises(requests.ConnectionError):
            requests.get(server.url + "/", timeout=5)
        with socket_proxy.SocketProxy(sock) as proxy:
            client = Client(proxy.url)
            assert client.get("/").status_code == 200, proxy.log_tail()
            node = lab.machine()
            (status,) = introspect(client, node)
            assert status["state"] == "finished", status
            assert client.get(f"/v1/introspection/{node[1]}").json()["finished"]
    finally:
        assert server.stop() == 0, server.log_tail()
    assert not os.path.lexists(sock), "the socket outlived a clean stop"


def test_regular_file_at_the_socket_path_is_refused(
    ironic: IronicServer, socket_dir: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    path = socket_dir / "api.sock"
    path.write_text("someone's file")
    server = InspectorServer(
        tmp_path,
        ironic.url,
        options={"DEFAULT": {"listen_unix_socket": str(path)}},
    )
    with pytest.raises(RuntimeError) as caught:
        server.start(timeout=30)
    assert f"[DEFAULT]listen_unix_socket {path} exists and is not a socket" in str(
        caught.value
    )
    assert path.read_text() == "someone's file"


def test_apache_warns_once_about_own_server_options(tmp_path: pathlib.Path) -> None:
    from lab.servers import apache

    missing = apache.installed()
    if missing:
        pytest.skip(missing)
    server = apache.ApacheApiServer(
        tmp_path,
        "http://127.0.0.1:1",
        processes=2,
        threads=2,
        options={
            "DEFAULT": {
                "use_ssl": "True",
                "listen_unix_socket": "/run/ironic-inspector/api.sock",
            }
        },
    )
    server.start(timeout=60, dbsync=False)
    try:
        for _ in range(4):  # the service may not build here: each retries
            requests.get(server.url + "/v1", timeout=10)
        log = server.log_file.read_text()
    finally:
        server.stop()
    lines = [x for x in log.splitlines() if "ignored under a WSGI server" in x]
    # one per daemon process, however often it tried to build the service
    assert 1 <= len(lines) <= 2, log
    assert all(
        "[DEFAULT]use_ssl, [DEFAULT]listen_unix_socket: ignored" in line
        for line in lines
    )
