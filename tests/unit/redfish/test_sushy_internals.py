"""The private field of sushy that inspector.redfish.connector reads is
there in the installed sushy, within the range setup.cfg allows, and the
connector made from it reads the environment once and still honours it."""

import importlib.metadata

import pytest
import requests
from sushy import connector as sushy_connector
from sushy import exceptions as sushy_exceptions

from inspector.redfish import connector
from tests.unit import pinned

BMC = "http://192.0.2.10"


def test_the_installed_sushy_is_in_the_range_setup_cfg_pins() -> None:
    required = pinned.required("sushy")
    assert not required.specifier.contains("999"), (
        f"setup.cfg must bound sushy from above: {required}"
    )
    installed = importlib.metadata.version("sushy")
    assert required.specifier.contains(installed, prereleases=True), (
        f"sushy {installed} is outside {required}: check the fields "
        f"inspector/redfish/connector.py reads ({connector.SUSHY_FIELDS}) "
        "and widen the range"
    )


def test_every_field_read_is_there() -> None:
    made = sushy_connector.Connector(BMC)
    version = importlib.metadata.version("sushy")
    for field in connector.SUSHY_FIELDS:
        assert hasattr(made, field), (
            f"sushy {version}'s Connector has no {field!r} any more: "
            "inspector/redfish/connector.py reads it"
        )
    assert isinstance(made._session, requests.Session), (
        f"sushy {version}'s Connector._session is no requests.Session"
    )


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_the_session_stops_reading_the_environment(
    clean_env: pytest.MonkeyPatch,
) -> None:
    made = connector.make(BMC, True, retries=1, retry_delay=0, timeout=5)
    assert made._session.trust_env is False
    assert made._session.proxies == {}
    assert made._session.headers["Connection"] == "close"  # sushy's own


def test_proxies_are_read_once_and_kept(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("HTTP_PROXY", "http://proxy.example:3128")
    made = connector.make(BMC, True, retries=1, retry_delay=0, timeout=5)
    assert made._session.proxies["http"] == "http://proxy.example:3128"
    # a later change reaches the next connector, not this one
    clean_env.delenv("HTTP_PROXY")
    assert made._session.proxies["http"] == "http://proxy.example:3128"
    assert connector.make(BMC, True, 1, 0, 5)._session.proxies == {}


def test_no_proxy_still_bypasses(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("HTTP_PROXY", "http://proxy.example:3128")
    clean_env.setenv("NO_PROXY", "192.0.2.10")
    assert connector.environment(BMC, True) == ({}, True)
    proxies, _ = connector.environment("http://192.0.2.11", True)
    assert proxies["http"] == "http://proxy.example:3128"


def test_a_ca_bundle_from_the_environment_applies_unless_verify_is_off(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("REQUESTS_CA_BUNDLE", "/etc/bmc-ca.pem")
    assert connector.environment(BMC, True) == ({}, "/etc/bmc-ca.pem")
    assert connector.environment(BMC, False) == ({}, False)
    assert connector.environment(BMC, "/etc/own.pem") == ({}, "/etc/own.pem")
    made = connector.make(BMC, True, retries=1, retry_delay=0, timeout=5)
    assert made._verify == "/etc/bmc-ca.pem"


@pytest.mark.parametrize(
    ("retries", "delay", "sent"),
    [(0, 0.0, (1, connector.MIN_DELAY)), (3, 0.5, (3, 0.5))],
)
def test_no_retries_is_never_sushys_default(
    retries: int, delay: float, sent: tuple[int, float]
) -> None:
    """sushy reads 0 retries as 3 tries and a 0 s delay as 2 s."""
    made = connector.make(BMC, True, retries=retries, retry_delay=delay, timeout=5)
    assert (made._server_side_retries, made._server_side_retries_delay) == sent


def test_an_unreachable_bmc_is_tried_once_with_no_retries() -> None:
    made = connector.make(BMC, True, retries=0, retry_delay=0, timeout=5)
    tries = []

    def refused(*_args: object, **_kwargs: object) -> None:
        tries.append(1)
        raise requests.exceptions.ConnectionError("refused")

    made._session.send = refused
    with pytest.raises(sushy_exceptions.ConnectionError):
        made.get("/redfish/v1/")
    assert len(tries) == 1
