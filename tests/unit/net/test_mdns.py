"""What the service publishes by mDNS, built from the options; what a
publication that cannot happen does (logged, the service unharmed); the
registration retries; zeroconf stays unloaded until a publisher starts.

Nothing here sends multicast: the real publication is
tests/integration/test_mdns.py, in a private network namespace.
"""

import logging
import subprocess
import sys
from typing import Any

import pytest
import zeroconf
from oslo_config import cfg

from inspector.conf import opts
from inspector.net import mdns

LOCAL = {"192.0.2.10": "eth0", "198.51.100.7": "eth1", "2001:db8::5": "eth0"}


def _conf(**values: Any) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([], default_config_files=[])
    for name, value in values.items():
        group, _, option = name.rpartition("__")
        conf.set_override(option, value, group=group or None)
    return conf


def test_specific_address_and_own_port_are_published_with_the_protocol() -> None:
    found = mdns.endpoint(_conf(listen_address="192.0.2.10", listen_port=5050))
    assert found.scheme == "http" and found.port == 5050
    assert found.addresses == ("192.0.2.10",)
    assert found.server is None  # the agent then uses the address
    assert found.properties == {"protocol": "http"}  # else it assumes https
    assert found.urls == ["http://192.0.2.10:5050"]
    assert found.full_name == "baremetal-introspection._openstack._tcp.local."


def test_https_on_443_needs_no_protocol_and_params_are_kept() -> None:
    conf = _conf(
        listen_address="2001:db8::5",
        listen_port=443,
        use_ssl=True,
        mdns__params={"ipa_ntp_server": "192.0.2.1", "foo": "a,b"},
    )
    found = mdns.endpoint(conf)
    assert found.properties == {"ipa_ntp_server": "192.0.2.1", "foo": "a,b"}
    assert found.urls == ["https://[2001:db8::5]:443"]


def test_the_service_protocol_wins_over_params() -> None:
    conf = _conf(
        listen_address="192.0.2.10",
        listen_port=5050,
        use_ssl=True,
        mdns__params={"protocol": "http", "path": "/x"},
    )
    # path as given, as upstream; protocol is the listener's
    assert mdns.endpoint(conf).properties == {"protocol": "https", "path": "/x"}


def test_wildcard_publishes_the_interfaces_option() -> None:
    conf = _conf(listen_address="0.0.0.0", mdns__interfaces=["198.51.100.7"])
    found = mdns.endpoint(conf, LOCAL)
    assert found.addresses == ("198.51.100.7",)
    assert found.urls == ["http://198.51.100.7:5050"]


def test_wildcard_without_interfaces_publishes_every_address() -> None:
    # :: listens on both families (Linux's default), 0.0.0.0 on IPv4 only
    assert mdns.endpoint(_conf(), LOCAL).addresses == tuple(LOCAL)
    ipv4 = mdns.endpoint(_conf(listen_address="0.0.0.0"), LOCAL)
    assert ipv4.addresses == ("192.0.2.10", "198.51.100.7")


def test_host_name_is_the_srv_target() -> None:
    found = mdns.endpoint(_conf(listen_address="localhost", listen_port=5050))
    assert found.server == "localhost."
    assert "127.0.0.1" in found.addresses
    assert found.urls == ["http://localhost:5050"]


def test_unix_socket_or_nothing_to_publish_is_refused() -> None:
    with pytest.raises(mdns.PublishError, match="Unix socket /run/i.sock"):
        mdns.endpoint(_conf(listen_unix_socket="/run/i.sock"))
    with pytest.raises(mdns.PublishError, match="no address to publish"):
        mdns.endpoint(_conf(), {})


def test_host_addresses_skip_loopback_and_link_local() -> None:
    for address in mdns.host_addresses():
        assert not address.startswith(("127.", "::1", "fe80:")), address


def test_interface_not_on_the_host_is_logged_and_nothing_starts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    conf = _conf(mdns__interfaces=["203.0.113.99", "eth0"])
    publisher = mdns.Publisher(conf)
    with caplog.at_level(logging.ERROR, logger="inspector.net.mdns"):
        publisher.start()
        assert publisher.wait(10) is False
    publisher.stop()
    messages = [r.getMessage() for r in caplog.records]
    assert any("203.0.113.99 is on no interface of this host" in m for m in messages)
    assert any("'eth0' is not an IP address" in m for m in messages)
    assert messages[-1].startswith("mDNS: not publishing baremetal-introspection")
    assert publisher._zc is None  # noqa: SLF001  no socket was opened


class _FakeZeroconf:
    """Stands in for zeroconf.Zeroconf: records calls, sends nothing."""

    conflicts = 0
    made: list["_FakeZeroconf"] = []

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.registered: list[Any] = []
        self.attempts = 0
        self.closed = False
        self.made.append(self)

    def register_service(self, info: Any) -> None:
        self.attempts += 1
        if self.attempts <= self.conflicts:
            raise zeroconf.NonUniqueNameException
        self.registered.append(info)

    def unregister_service(self, info: Any) -> None:
        self.registered.remove(info)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake_zeroconf(monkeypatch: pytest.MonkeyPatch) -> type[_FakeZeroconf]:
    monkeypatch.setattr(zeroconf, "Zeroconf", _FakeZeroconf)
    monkeypatch.setattr(mdns, "FIRST_RETRY_DELAY", 0.01)
    monkeypatch.setattr(mdns, "host_addresses", lambda: dict(LOCAL))
    _FakeZeroconf.made = []
    return _FakeZeroconf


def test_conflicts_are_retried_then_published_and_withdrawn(
    fake_zeroconf: type[_FakeZeroconf], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fake_zeroconf, "conflicts", 2)
    conf = _conf(
        listen_address="0.0.0.0",
        mdns__interfaces=["198.51.100.7"],
        mdns__params={"ipa_debug": "1"},
    )
    publisher = mdns.Publisher(conf)
    publisher.start()
    assert publisher.wait(10)
    (zc,) = fake_zeroconf.made
    assert zc.kwargs == {"interfaces": ["198.51.100.7"], "ip_version": None}
    assert zc.attempts == 3
    (info,) = zc.registered
    assert info.name == "baremetal-introspection._openstack._tcp.local."
    assert info.type == "_openstack._tcp.local."
    assert info.port == 5050
    assert info.parsed_addresses() == ["198.51.100.7"]
    assert info.properties == {b"ipa_debug": b"1", b"protocol": b"http"}
    publisher.stop()
    assert zc.registered == [] and zc.closed


def test_all_interfaces_when_unset(fake_zeroconf: type[_FakeZeroconf]) -> None:
    publisher = mdns.Publisher(_conf(listen_address="192.0.2.10"))
    publisher.start()
    assert publisher.wait(10)
    publisher.stop()
    (zc,) = fake_zeroconf.made
    assert zc.kwargs == {
        "interfaces": zeroconf.InterfaceChoice.All,
        "ip_version": zeroconf.IPVersion.All,
    }


def test_conflict_after_the_last_attempt_is_logged_not_raised(
    fake_zeroconf: type[_FakeZeroconf],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(fake_zeroconf, "conflicts", 10)
    conf = _conf(
        listen_address="0.0.0.0",
        mdns__interfaces=["192.0.2.10"],
        mdns__registration_attempts=3,
    )
    publisher = mdns.Publisher(conf)
    with caplog.at_level(logging.WARNING, logger="inspector.net.mdns"):
        publisher.start()
        assert publisher.wait(10) is False
    (zc,) = fake_zeroconf.made
    assert zc.attempts == 3 and zc.closed
    error = caplog.records[-1]
    assert error.levelno == logging.ERROR
    message = error.getMessage()
    assert "http://192.0.2.10:5050 on 192.0.2.10 (eth0) failed" in message
    assert "another responder on the network answers" in message
    assert "after 3 attempts" in message
    publisher.stop()


def test_zeroconf_fails_to_start_is_logged(
    fake_zeroconf: type[_FakeZeroconf],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def refuse(**_kwargs: Any) -> None:
        raise OSError(99, "Cannot assign requested address")

    monkeypatch.setattr(zeroconf, "Zeroconf", refuse)
    publisher = mdns.Publisher(_conf(mdns__interfaces=["198.51.100.7"]))
    with caplog.at_level(logging.ERROR, logger="inspector.net.mdns"):
        publisher.start()
        assert publisher.wait(10) is False
    publisher.stop()
    (message,) = [r.getMessage() for r in caplog.records]
    assert "on 198.51.100.7 (eth1) failed: OSError" in message
    assert "Cannot assign requested address" in message


def test_zeroconf_is_loaded_only_when_a_publisher_starts() -> None:
    script = (
        "import sys\n"
        "import inspector.net.mdns, inspector.server.wiring\n"
        "print('zeroconf' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
