"""The WSGI module Apache loads: configuration lookup and failing start-up."""

import json
import pathlib
from typing import Any

import pytest

from inspector import wsgi


def test_config_args() -> None:
    assert wsgi.config_args(None) == []
    assert wsgi.config_args(" /a.conf, ,/b.conf") == [
        "--config-file", "/a.conf", "--config-file", "/b.conf"]


def _call(environ: dict[str, Any]) -> tuple[str, dict[str, str], bytes]:
    seen: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        seen["status"], seen["headers"] = status, dict(headers)

    body = b"".join(wsgi.application(environ, start_response))
    return seen["status"], seen["headers"], body


@pytest.mark.parametrize("conf,fragment", [
    ("[DEFAULT]\nstandalone = True\n", "standalone is True"),
    ("[DEFAULT]\nstandalone = False\n[database]\nconnection = sqlite:////tmp/x\n",
     "[database]connection is SQLite"),
])
def test_start_failure_is_503_and_retried(tmp_path: pathlib.Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          conf: str, fragment: str) -> None:
    path = tmp_path / "inspector.conf"
    path.write_text(conf)
    monkeypatch.delenv(wsgi.CONFIG_ENV, raising=False)
    monkeypatch.setattr(wsgi, "_service", None)
    # Apache passes SetEnv values in the request environment
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", wsgi.CONFIG_ENV: str(path)}
    for _ in range(2):  # nothing is cached after a failed start
        status, headers, body = _call(environ)
        assert status.startswith("503")
        assert headers["Retry-After"] == "5"
        assert fragment in json.loads(body)["error"]["message"]
    assert wsgi._service is None
