"""[oslo_middleware]enable_proxy_headers_parsing: links behind a TLS proxy."""

from oslo_config import cfg

from inspector.api import app as api_app
from tests.functional.conftest import Service

FORWARDED = {
    "X-Forwarded-Proto": "https",
    "X-Forwarded-Host": "inspector.example.org",
    "X-Forwarded-Prefix": "/baremetal-introspection",
}


def _self_link(service: Service) -> str:
    client = api_app.create_app(service.rt).test_client()
    body = client.get("/", headers=FORWARDED).get_json()
    (version,) = [v for v in body["versions"] if v["status"] == "CURRENT"]
    link: str = version["links"][0]["href"]
    return link


def test_proxy_headers_ignored_by_default(service: Service) -> None:
    # a client reaching the API directly must not choose the links
    assert _self_link(service).startswith("http://localhost/")


def test_proxy_headers_parsed_when_enabled(
    service: Service, conf: cfg.ConfigOpts
) -> None:
    conf.set_override("enable_proxy_headers_parsing", True, group="oslo_middleware")
    assert _self_link(service).startswith(
        "https://inspector.example.org/baremetal-introspection/"
    )
