"""Host addresses as listeners take them and URLs spell them."""

import pytest

from inspector.net import address


@pytest.mark.parametrize(
    ("host", "url_host"),
    [
        ("10.0.0.1", "10.0.0.1"),
        ("conductor-1", "conductor-1"),
        ("::1", "[::1]"),
        ("[::1]", "[::1]"),
        ("fd00::5", "[fd00::5]"),
    ],
)
def test_url_host_brackets_ipv6_only(host: str, url_host: str) -> None:
    assert address.url_host(host) == url_host


@pytest.mark.parametrize("host", ["", "0.0.0.0", "::", "[::]"])
def test_wildcards(host: str) -> None:
    assert address.is_wildcard(host)


@pytest.mark.parametrize("host", ["10.0.0.1", "::1", "localhost", "conductor-1"])
def test_not_wildcards(host: str) -> None:
    assert not address.is_wildcard(host)


def test_loopback_and_names() -> None:
    assert address.is_loopback("127.0.0.1")
    assert address.is_loopback("[::1]")
    assert not address.is_loopback("10.0.0.1")
    assert not address.is_loopback("localhost")  # a name may reach other hosts
    assert address.is_ip("[fd00::5]")
    assert not address.is_ip("conductor-1")
