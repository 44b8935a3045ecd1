"""A Keystone stand-in on loopback: the identity calls keystonemiddleware makes.

Enough of the Identity v3 API for ``auth_token`` with ``auth_type =
password``: version discovery (``GET /`` and ``GET /v3``), the service
user's own authentication (``POST /v3/auth/tokens``, password method, whose
catalog names this server as the identity endpoint on every interface,
and any other service it was given),
and token validation (``GET /v3/auth/tokens`` with the service token in
``X-Auth-Token`` and the caller's in ``X-Subject-Token``: 200 with the
token, 404 for an unknown one). Tokens are issued by :meth:`issue`. Each
validation is counted, so a test can tell a cached answer from a new one.
"""

import datetime
import json
import threading
import uuid
from http import server
from typing import Any

from lab.servers.threaded import ThreadedHttpServer

DOMAIN = {"id": "default", "name": "Default"}
REGION = "RegionOne"
"""The region of every endpoint in the catalog."""


def _when(delta: datetime.timedelta) -> str:
    moment = datetime.datetime.now(datetime.UTC) + delta
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000000Z")


class KeystoneStandin(ThreadedHttpServer):
    """An HTTP server in a thread of the lab's process, on 127.0.0.1, with
    a fixed service user."""

    def __init__(
        self,
        username: str,
        password: str,
        project: str = "service",
        services: dict[str, str] | None = None,
    ):
        """``services``: more entries of the catalog, service type -> URL
        (the same URL on every interface)."""
        self.username = username
        self.password = password
        self.project = project
        self.services = services or {}
        self.tokens: dict[str, dict[str, Any]] = {}
        self.validations: list[str] = []
        """Subject tokens asked about, in order (valid or not)."""
        self.lock = threading.Lock()
        super().__init__(self._handler(), "keystone-standin")

    def issue(self, user: str, roles: list[str], project: str = "admin") -> str:
        """A new valid token for ``user`` with ``roles`` on ``project``."""
        token_id = "gAAAA" + uuid.uuid4().hex
        body = {
            "methods": ["password"],
            "issued_at": _when(datetime.timedelta()),
            "expires_at": _when(datetime.timedelta(hours=1)),
            "user": {"id": f"{user}-id", "name": user, "domain": DOMAIN},
            "project": {"id": f"{project}-id", "name": project, "domain": DOMAIN},
            "roles": [{"id": f"{role}-id", "name": role} for role in roles],
            "catalog": self._catalog(),
        }
        with self.lock:
            self.tokens[token_id] = body
        return token_id

    def _catalog(self) -> list[dict[str, Any]]:
        services = {"identity": self.url, **self.services}
        return [
            {
                "id": kind,
                "type": kind,
                "name": "keystone" if kind == "identity" else kind,
                "endpoints": [
                    {
                        "id": f"{kind}-{interface}",
                        "interface": interface,
                        "region": REGION,
                        "region_id": REGION,
                        "url": url,
                    }
                    for interface in ("public", "internal", "admin")
                ],
            }
            for kind, url in services.items()
        ]

    def _version(self) -> dict[str, Any]:
        return {
            "id": "v3.14",
            "status": "stable",
            "updated": "2020-04-07T00:00:00Z",
            "links": [{"rel": "self", "href": f"{self.url}/v3/"}],
            "media-types": [
                {
                    "base": "application/json",
                    "type": "application/vnd.openstack.identity-v3+json",
                }
            ],
        }

    def _handler(self) -> type[server.BaseHTTPRequestHandler]:
        standin = self

        class Handler(server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the tests read the counters, not a log

            def _answer(
                self, status: int, body: object, headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0].rstrip("/")
                if path == "":
                    versions = {"versions": {"values": [standin._version()]}}
                    self._answer(300, versions)
                elif path == "/v3":
                    self._answer(200, {"version": standin._version()})
                elif path == "/v3/auth/tokens":
                    self._validate()
                else:
                    self._answer(
                        404, {"error": {"code": 404, "message": "no such path"}}
                    )

            def _validate(self) -> None:
                subject = self.headers.get("X-Subject-Token", "")
                with standin.lock:
                    service_ok = self.headers.get("X-Auth-Token") in standin.tokens
                    standin.validations.append(subject)
                    body = standin.tokens.get(subject)
                if not service_ok:
                    self._answer(
                        401, {"error": {"code": 401, "message": "no service token"}}
                    )
                elif body is None:
                    self._answer(
                        404, {"error": {"code": 404, "message": "token not found"}}
                    )
                else:
                    self._answer(200, {"token": body}, {"X-Subject-Token": subject})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v3/auth/tokens":
                    self._answer(
                        404, {"error": {"code": 404, "message": "no such path"}}
                    )
                    return
                user = request.get("auth", {}).get("identity", {}).get("password", {})
                user = user.get("user", {})
                if (user.get("name"), user.get("password")) != (
                    standin.username,
                    standin.password,
                ):
                    self._answer(
                        401, {"error": {"code": 401, "message": "bad password"}}
                    )
                    return
                token_id = standin.issue(standin.username, ["service"], standin.project)
                with standin.lock:
                    body = standin.tokens[token_id]
                self._answer(201, {"token": body}, {"X-Subject-Token": token_id})

        return Handler
