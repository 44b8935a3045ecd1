"""[cors] as in ironic-inspector: browsers on allowed origins may call the API."""

from typing import Any

from oslo_config import cfg

from inspector.api import app as api_app
from tests.functional.conftest import Service

ORIGIN = "https://dashboard.example.org"


def _client(service: Service) -> Any:
    return api_app.create_app(service.rt).test_client()


def test_no_cors_headers_by_default(service: Service) -> None:
    resp = _client(service).get("/v1", headers={"Origin": ORIGIN})
    assert resp.status_code == 200
    assert "Access-Control-Allow-Origin" not in resp.headers


def test_allowed_origin_gets_cors_headers(
    service: Service, conf: cfg.ConfigOpts
) -> None:
    conf.set_override("allowed_origin", [ORIGIN], group="cors")
    client = _client(service)
    resp = client.get("/v1", headers={"Origin": ORIGIN})
    assert resp.headers["Access-Control-Allow-Origin"] == ORIGIN
    # a dashboard reads the negotiated version and quotes the request id
    exposed = resp.headers["Access-Control-Expose-Headers"].lower().split(",")
    assert {
        "x-openstack-request-id",
        "x-openstack-ironic-inspector-api-version",
    } <= {header.strip() for header in exposed}
    # a preflight carries no credentials and must not meet authentication
    preflight = client.options(
        "/v1/introspection",
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "X-OpenStack-Ironic-Inspector-API-Version",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["Access-Control-Allow-Origin"] == ORIGIN
    allowed = preflight.headers["Access-Control-Allow-Headers"].lower()
    assert "x-openstack-ironic-inspector-api-version" in allowed
    other = client.get("/v1", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers
