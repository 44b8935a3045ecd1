"""The status GET fast path answers exactly what the Flask route answers."""

import io
import uuid as uuid_mod
from typing import Any

import pytest

from inspector.api import auth
from inspector.api.app import create_app
from inspector.api.status_fast_path import StatusFastPath
from inspector.db import introspections
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
    return seen["status"], sorted(seen["headers"]), body


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
def test_same_answer_as_flask(service: Service, headers: dict[str, str]) -> None:
    uuid = str(uuid_mod.uuid4())
    introspections.start(service.rt.db, uuid, True, {"mac": ["aa:bb:cc:00:11:22"]})
    app = create_app(service.rt)
    fast = app.wsgi_app  # the authentication layer in front of the fast path
    assert isinstance(fast._app, StatusFastPath)  # type: ignore[attr-defined]
    flask_only = auth.NoAuth(fast._app._app)  # type: ignore[attr-defined]
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
    fast = app.wsgi_app._app  # type: ignore[attr-defined]
    expected = _call(auth.NoAuth(fast._app), path, **extra)
    assert got == expected
    assert got[0][:3] in ("404", "400", "406")
