"""Version negotiation, listing, pagination and bad input over HTTP."""

from typing import Any

import pytest

from inspector.api import versions
from tests.functional.conftest import Service, add_node, start

V = "X-OpenStack-Ironic-Inspector-API-Version"
NEWEST = versions.format_version(versions.MAXIMUM)


def test_root_lists_current_version(service: Service) -> None:
    resp = service.client.get("/")
    assert resp.status_code == 200
    body = resp.get_json()
    assert body["versions"][0]["id"] == NEWEST
    assert body["versions"][0]["status"] == "CURRENT"
    assert body["versions"][0]["links"][0]["href"].endswith("/v1")


def test_v1_lists_resources(service: Service) -> None:
    names = [r["name"] for r in service.client.get("/v1").get_json()["resources"]]
    assert "introspection" in names and "continue" in names


@pytest.mark.parametrize("path", ["/", "/v1", "/v1/introspection/nope/x"])
def test_version_headers_on_every_response(service: Service, path: str) -> None:
    resp = service.client.get(path)
    assert resp.headers[versions.MIN_HEADER] == "1.0"
    assert resp.headers[versions.MAX_HEADER] == NEWEST


@pytest.mark.parametrize(
    "headers,status,version",
    [
        ({V: "1.9"}, 200, "1.9"),
        ({V: "latest"}, 200, NEWEST),
        ({"OpenStack-API-Version": "baremetal-introspection 1.12"}, 200, "1.12"),
        ({"OpenStack-API-Version": "compute 2.1"}, 200, NEWEST),
        ({V: "1.99"}, 406, None),
        ({V: "2.0"}, 406, None),
        ({V: "one.two"}, 400, None),
        ({V: "1"}, 400, None),
    ],
)
def test_negotiation(
    service: Service, headers: dict[str, str], status: int, version: str | None
) -> None:
    resp = service.client.get("/", headers=headers)
    assert resp.status_code == status
    assert resp.headers[versions.MAX_HEADER] == NEWEST
    if version:
        assert resp.headers[V] == version
    else:
        assert "error" in resp.get_json()
    if status == 406:
        assert (
            f"supported range is 1.0 to {NEWEST}" in resp.get_json()["error"]["message"]
        )


def _waiting(service: Service, count: int) -> list[str]:
    """Starts `count` new nodes, one after the other; their UUIDs."""
    return [start(service, add_node(service)) for _ in range(count)]


def test_pagination_newest_first(service: Service) -> None:
    uuids = _waiting(service, 5)
    listed: list[str] = []
    marker = None
    while True:
        url = "/v1/introspection?limit=2" + (f"&marker={marker}" if marker else "")
        page = service.client.get(url).get_json()["introspection"]
        if not page:
            break
        assert len(page) <= 2
        listed += [item["uuid"] for item in page]
        marker = page[-1]["uuid"]
    assert len(listed) == len(set(listed))
    positions = [listed.index(u) for u in uuids]
    assert positions == sorted(positions, reverse=True)


def test_list_state_filter(service: Service) -> None:
    _waiting(service, 1)
    items = service.client.get("/v1/introspection?state=waiting,starting").get_json()
    assert items["introspection"]
    assert {i["state"] for i in items["introspection"]} <= {"waiting", "starting"}
    resp = service.client.get("/v1/introspection?state=bogus")
    assert resp.status_code == 400
    assert "bogus" in resp.get_json()["error"]["message"]
    # the filter works whatever version is asked for, like every feature
    resp = service.client.get("/v1/introspection?state=bogus", headers={V: "1.0"})
    assert resp.status_code == 400


@pytest.mark.parametrize(
    "query,status,fragment",
    [
        ("limit=-1", 400, "negative"),
        ("limit=100000", 400, "maximum is 1000"),
        ("limit=abc", 400, "expected an integer"),
        ("marker=not-a-uuid", 400, "expected a UUID"),
        ("marker=0c0c0c0c-0000-4000-8000-000000000000", 404, "Marker"),
    ],
)
def test_list_bad_params(
    service: Service, query: str, status: int, fragment: str
) -> None:
    resp = service.client.get(f"/v1/introspection?{query}")
    assert resp.status_code == status
    assert fragment in resp.get_json()["error"]["message"]


@pytest.mark.parametrize(
    "method,path",
    [
        ("get", "/v1/introspection"),
        ("get", "/v1/introspection/{uuid}/data"),
        ("get", "/v1/introspection/{uuid}/data/unprocessed"),
        ("post", "/v1/introspection/{uuid}/abort"),
        ("post", "/v1/introspection/{uuid}/data/unprocessed"),
        ("post", "/v1/introspection/{uuid}?manage_boot=0"),
    ],
)
def test_every_resource_at_1_0(service: Service, method: str, path: str) -> None:
    """The stock client sends version 1.0 unless told otherwise; like
    ironic-inspector, no resource or parameter is refused for its version."""
    uuid = _waiting(service, 1)[0]
    resp = getattr(service.client, method)(path.format(uuid=uuid), headers={V: "1.0"})
    message = (resp.get_json() or {}).get("error", {}).get("message", "")
    assert "version" not in message.lower(), message
    assert resp.status_code != 404 or "data" in path, message


def test_status_fields_at_every_version(service: Service) -> None:
    uuid = _waiting(service, 1)[0]
    old = service.client.get(f"/v1/introspection/{uuid}", headers={V: "1.0"}).get_json()
    assert old["state"] == "waiting" and old["started_at"]
    assert old["finished"] is False
    new = service.client.get(f"/v1/introspection/{uuid}").get_json()
    assert new["state"] == "waiting" and new["started_at"]
    assert new["links"][0]["href"].endswith(f"/v1/introspection/{uuid}")


@pytest.mark.parametrize(
    "body,content_type,fragment",
    [
        (b"{not json", "application/json", "Invalid JSON"),
        (b"[1, 2]", "application/json", "must be a JSON object"),
        (b'"text"', "application/json", "must be a JSON object"),
        (b"", "application/json", "JSON object is required"),
        (b"\xff\xfe{}", "application/json", "not valid UTF-8"),
        (b"{}", "text/plain", "no MAC or BMC"),
    ],
)
def test_continue_bad_bodies(
    service: Service, body: bytes, content_type: str, fragment: str
) -> None:
    resp = service.client.post(
        "/v1/continue", data=body, headers={"Content-Type": content_type}
    )
    assert 400 <= resp.status_code < 500
    assert fragment in resp.get_json()["error"]["message"]


def test_deeply_nested_body_is_400(service: Service) -> None:
    body = "[" * 100000 + "]" * 100000
    resp = service.client.post(
        "/v1/continue", data=body, headers={"Content-Type": "application/json"}
    )
    assert resp.status_code == 400


def test_huge_body_is_413(service: Service) -> None:
    resp = service.client.post(
        "/v1/continue",
        data=b"{" + b" " * (17 * 2**20) + b"}",
        headers={"Content-Type": "application/json"},
    )
    assert resp.status_code == 413


@pytest.mark.parametrize(
    "path",
    [
        "/v1/introspection/..%2F..%2Fetc%2Fpasswd",
        "/v1/introspection/x' OR '1'='1",
        "/v1/introspection/" + "a" * 300,
    ],
)
def test_bad_node_ids(service: Service, path: str) -> None:
    resp = service.client.get(path)
    assert resp.status_code in (400, 404)
    assert "error" in resp.get_json()


def test_unknown_route_and_method(service: Service) -> None:
    resp = service.client.get("/v2")
    assert resp.status_code == 404 and "error" in resp.get_json()
    resp = service.client.delete("/v1/continue")
    assert resp.status_code == 405 and "error" in resp.get_json()


def test_status_of_never_introspected(service: Service) -> None:
    node = service.ironic.add_node(bmc="10.3.3.3")
    resp = service.client.get(f"/v1/introspection/{node['uuid']}")
    assert resp.status_code == 404


def test_continue_with_sql_looking_strings(service: Service, payload: Any) -> None:
    data = payload("52:54:00:00:00:01", "1.2.3.4'; DROP TABLE introspections; --")
    resp = service.client.post("/v1/continue", json=data)
    assert resp.status_code == 404  # an odd BMC address matches nothing
    data["inventory"]["interfaces"][0]["mac_address"] = "'; DELETE FROM attributes; --"
    resp = service.client.post("/v1/continue", json=data)
    assert resp.status_code == 400  # not a MAC: refused before any lookup
    assert "is not a MAC address" in resp.get_json()["error"]["message"]
    assert service.client.get("/v1/introspection").status_code == 200


def test_database_outage_is_503(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database that goes away answers 503 naming it, on the lean status
    path and through Flask alike, never a 500."""
    from sqlalchemy import exc as sa_exc

    uuid = _waiting(service, 1)[0]

    def down(*_args: object, **_kwargs: object) -> None:
        raise sa_exc.OperationalError(
            "SELECT", {}, Exception('connection to server at "db" failed')
        )

    # the engine itself fails to connect: whatever reads the database meets
    # the driver's error inside inspector.db, which translates it
    monkeypatch.setattr(service.rt.db.engine, "connect", down)
    for path in (f"/v1/introspection/{uuid}", "/v1/introspection"):
        resp = service.client.get(path)
        assert resp.status_code == 503, resp.get_json()
        assert resp.headers["Retry-After"] == "5"
        message = resp.get_json()["error"]["message"]
        assert message.startswith("Service temporarily unavailable: the database")
        assert '"db"' not in message  # the driver's words are the log's


def test_database_outage_details_stay_in_the_log(
    service: Service,
    conf: Any,
    payload: Any,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Any,
) -> None:
    """A real outage: the API's database is a PostgreSQL server nobody
    listens for. An anonymous ramdisk post (HTTP basic authentication on)
    gets a 503 saying the database is unreachable, without its host, port
    or user; the log has them."""
    import dataclasses
    import logging
    import socket

    from inspector.api import errors
    from inspector.api.app import create_app
    from inspector.db import engine

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql+psycopg2://inspector_db_user:pw@127.0.0.1:{port}/inspector"
    down = engine.Database(url)
    (tmp_path / "htpasswd").write_text("")
    conf.set_override("auth_strategy", "http_basic")
    conf.set_override("http_basic_auth_user_file", str(tmp_path / "htpasswd"))
    # the health check's plugins find their runtime by the options object:
    # this app must not take the session service's
    conf.set_override("enabled", False, group="healthcheck")
    caplog.set_level(logging.DEBUG, logger=errors.__name__)
    client = create_app(dataclasses.replace(service.rt, db=down)).test_client()
    try:
        resp = client.post("/v1/continue", json=payload("52:54:00:00:00:07", "1.2.3.7"))
    finally:
        down.dispose()
    assert resp.status_code == 503, resp.get_json()
    message = resp.get_json()["error"]["message"]
    assert message == (
        "Service temporarily unavailable: the database is unreachable; "
        "the details are in the service's log"
    )
    assert "127.0.0.1" in caplog.text and str(port) in caplog.text
