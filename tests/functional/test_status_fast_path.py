"""The status GET fast path answers exactly what the Flask route answers."""

import io
from typing import Any

import pytest

from inspector.api import auth, request_context
from inspector.api.app import create_app
from inspector.api.status_fast_path import StatusFastPath
from tests.functional.conftest import Service

V = "HTTP_X_OPENSTACK_IRONIC_INSPECTOR_API_VERSION"


def _call(
    app: Any, path: str, **extra: str
) -> tuple[str, list[tuple[str, str]], bytes]:
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "5050",
        "HTTP_HOST": "inspector.example.com:5050",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": io.StringIO(),
        **extra,
    }
    seen: dict[str, Any] = {}

    def start_response(
        status: str, headers: list[tuple[str, str]], _exc: Any = None
    ) -> None:
        seen["status"], seen["headers"] = status, headers

    body = b"".join(app(environ, start_response))
    # every answer names its own request: the rest must be the same
    headers = [h for h in seen["headers"] if h[0] != request_context.HEADER]
    return seen["status"], sorted(headers), body


def _layers(app: Any) -> tuple[Any, StatusFastPath]:
    """(the stack from authentication inward, the fast path)."""
    ids = app.wsgi_app
    assert isinstance(ids, request_context.RequestIds)
    identity = ids._app._app  # type: ignore[attr-defined]  # behind authentication
    assert isinstance(identity, request_context.Identity)
    fast = identity._app
    assert isinstance(fast, StatusFastPath)
    return ids._app, fast


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {V: "1.0"},
        {V: "1.7"},
        {V: "1.10"},
        {V: "latest"},
        {"HTTP_OPENSTACK_API_VERSION": "baremetal-introspection 1.12"},
    ],
)
def test_same_answer_as_flask(
    service: Service, headers: dict[str, str], status_record: Any
) -> None:
    uuid = status_record("aa:bb:cc:00:11:22")
    app = create_app(service.rt)
    fast, path_layer = _layers(app)  # the authentication layer, the fast path
    flask_only = auth.NoAuth(path_layer._app)
    for path in (f"/v1/introspection/{uuid}", f"/v1/introspection/{uuid.upper()}/"):
        expected = _call(flask_only, path, **headers)
        got = _call(fast, path, **headers)
        assert expected[0] == "200 OK"
        assert got == expected


@pytest.mark.parametrize(
    "path,extra",
    [
        ("/v1/introspection/7f1a2b3c-0000-4000-8000-000000000000", {}),
        ("/v1/introspection/7f1a2b3c-0000-4000-8000-000000000000", {V: "2.0"}),
        ("/v1/introspection/7f1a2b3c-0000-4000-8000-000000000000", {V: "one"}),
    ],
)
def test_errors_go_through_flask(
    service: Service, path: str, extra: dict[str, str]
) -> None:
    app = create_app(service.rt)
    got = _call(app.wsgi_app, path, **extra)
    expected = _call(auth.NoAuth(_layers(app)[1]._app), path, **extra)
    assert got == expected
    assert got[0][:3] in ("404", "400", "406")
