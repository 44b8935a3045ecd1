"""The hook package (``ironic-push-hook/``, a distribution of its own) on
the path, a stand-in for Ironic's hook base class, and a small HTTP
server on loopback standing in for the service."""

import http.server
import json
import pathlib
import sys
import threading
import time
import types
from collections.abc import Iterator
from typing import Any

import pytest

HOOK_DIR = pathlib.Path(__file__).resolve().parents[3] / "ironic-push-hook"
if str(HOOK_DIR) not in sys.path:
    sys.path.insert(0, str(HOOK_DIR))

BASE = "ironic.drivers.modules.inspector.hooks.base"


class Service:
    """What the stand-in answers (``status``, after ``delay`` seconds)
    and what it received (``bodies``, ``headers``)."""

    def __init__(self) -> None:
        self.status = 201
        self.answer: dict[str, Any] = {"recorded": True}
        self.delay = 0.0
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.server: http.server.ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"


def _handler(service: Service) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            service.bodies.append(json.loads(raw))
            service.headers.append(dict(self.headers))
            time.sleep(service.delay)
            answer = json.dumps(
                service.answer
                if service.status < 400
                else {"error": {"message": f"refused with {service.status}"}}
            ).encode()
            try:
                self.send_response(service.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
            except OSError:
                pass  # the client gave up

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def service() -> Iterator[Service]:
    found = Service()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(found))
    server.daemon_threads = True
    found.server = server
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    yield found
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def closed_url() -> str:
    """A loopback URL where nothing listens (connections refused)."""
    server = http.server.HTTPServer(
        ("127.0.0.1", 0), http.server.BaseHTTPRequestHandler
    )
    host, port = server.server_address[:2]
    server.server_close()
    return f"http://{host!s}:{port}"


class InspectionHook:
    """The interface of Ironic's base class (dependencies, preprocess,
    __call__), for importing the hook outside Ironic."""

    dependencies: list[str] = []

    def preprocess(self, task: Any, inventory: Any, plugin_data: Any) -> None:
        pass

    def __call__(self, task: Any, inventory: Any, plugin_data: Any) -> None:
        pass


@pytest.fixture
def hook_module(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """``inspector_push_hook.hook`` imported over the stand-in base class
    (and forgotten afterwards, with the stand-in)."""
    parts = BASE.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    sys.modules[BASE].InspectionHook = InspectionHook  # type: ignore[attr-defined]
    monkeypatch.delitem(sys.modules, "inspector_push_hook.hook", raising=False)
    import inspector_push_hook.hook as module

    yield module
    sys.modules.pop("inspector_push_hook.hook", None)
