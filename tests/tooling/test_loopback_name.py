"""lab/servers/loopback.py: the host name Ironic takes as a callback address
while it resolves to loopback (issue 48)."""

import pathlib
import socket
from typing import Any

import pytest

from lab.servers import loopback

HOSTS = """\
127.0.0.1   localhost localhost.localdomain localhost4  # Fedora
127.0.1.1   debian-box
::1         localhost ip6-localhost
"""


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Names -> addresses in place of the machine's resolver."""
    known: dict[str, str] = {}

    def getaddrinfo(name: str, *_args: Any) -> list[Any]:
        if name not in known:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (known[name], 0))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket, "gethostname", lambda: "box")
    return known


def test_the_machines_name_first(
    tmp_path: pathlib.Path, resolver: dict[str, str]
) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text(HOSTS)
    resolver.update({"box": "127.0.1.1", "localhost4": "127.0.0.1"})
    assert loopback.named_loopback(hosts) == ("box", "127.0.1.1")


def test_another_name_of_etc_hosts(
    tmp_path: pathlib.Path, resolver: dict[str, str]
) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text(HOSTS)
    # the machine's name is its network address; localhost is Ironic's
    # loopback; localhost4 is not
    resolver.update(
        {"box": "192.0.2.7", "localhost": "127.0.0.1", "localhost4": "127.0.0.1"}
    )
    assert loopback.named_loopback(hosts) == ("localhost4", "127.0.0.1")


def test_none_but_localhost(tmp_path: pathlib.Path, resolver: dict[str, str]) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n::1 localhost ip6-localhost\n")
    resolver.update({"box": "192.0.2.7", "localhost": "127.0.0.1"})
    assert loopback.named_loopback(hosts) is None
    assert loopback.named_loopback(tmp_path / "missing") is None
