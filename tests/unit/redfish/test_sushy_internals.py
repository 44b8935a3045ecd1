"""What :mod:`inspector.redfish.sessions` relies on inside sushy: the
HTTP session its connector keeps in a private attribute. A sushy release
that moves it fails here, by name, rather than in the field."""

import importlib.metadata

import pytest
import requests
import sushy.connector

from inspector.redfish import sessions

VERSION = importlib.metadata.version("sushy")


def test_the_connector_keeps_a_requests_session() -> None:
    connector = sushy.connector.Connector("https://bmc.example:8000")
    session = getattr(connector, "_session", None)
    assert isinstance(session, requests.Session), (
        f"sushy {VERSION}: Connector._session is no longer a requests.Session; "
        "inspector.redfish.sessions.settle must follow it"
    )


def test_settle_stops_reading_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "")
    address = "https://bmc.example:8000"
    found = requests.Session().merge_environment_settings(address, {}, None, True, None)
    connector = sushy.connector.Connector(address)
    sessions.settle(connector, found["proxies"])
    session = connector._session
    assert session.trust_env is False
    assert session.proxies["https"] == "http://proxy.example:3128"
    # what a request through it would use: the proxy found once, though
    # the environment changed since
    monkeypatch.setenv("HTTPS_PROXY", "http://other.example:3128")
    used = session.merge_environment_settings(address, {}, None, True, None)
    assert dict(used["proxies"]) == {"https": "http://proxy.example:3128"}
    prepared = session.prepare_request(requests.Request("GET", address))
    assert prepared.headers.get("Authorization") is None  # no ~/.netrc
