"""The WSGI module Apache loads: configuration lookup and failing start-up."""

import json
import pathlib
from typing import Any

import pytest

from inspector import wsgi


def test_config_args() -> None:
    assert wsgi.config_args(None) == []
    assert wsgi.config_args(" /a.conf, ,/b.conf") == [
        "--config-file",
        "/a.conf",
        "--config-file",
        "/b.conf",
    ]


def _call(environ: dict[str, Any]) -> tuple[str, dict[str, str], bytes]:
    seen: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        seen["status"], seen["headers"] = status, dict(headers)

    body = b"".join(wsgi.application(environ, start_response))
    return seen["status"], seen["headers"], body


@pytest.mark.parametrize(
    "conf,fragment",
    [
        ("[DEFAULT]\nstandalone = True\n", "standalone is True"),
        (
            # an etcd URL: upstream's default memcached:// would be refused
            # first (its client is not installed with the service)
            "[DEFAULT]\nstandalone = False\n[database]\nconnection = sqlite:////tmp/x\n"
            "[coordination]\nbackend_url = etcd3+http://127.0.0.1:1\n",
            "[database]connection is SQLite",
        ),
    ],
)
def test_start_failure_is_503_and_retried(
    tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
    conf: str,
    fragment: str,
) -> None:
    path = tmp_path / "inspector.conf"
    path.write_text(conf)
    monkeypatch.delenv(wsgi.CONFIG_ENV, raising=False)
    monkeypatch.setattr(wsgi, "_service", None)
    monkeypatch.setattr(wsgi, "_last_error", None)
    # Apache passes SetEnv values in the request environment
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", wsgi.CONFIG_ENV: str(path)}
    for _ in range(2):  # nothing is cached after a failed start
        status, headers, body = _call(environ)
        assert status.startswith("503")
        assert headers["Retry-After"] == "5"
        # clients (unauthenticated) get no detail: it is in the log
        message = json.loads(body)["error"]["message"]
        assert message == wsgi.CANNOT_START
        assert message.startswith(
            "The inspector API cannot start; the cause is in the service's log"
        )
        assert fragment not in message
    assert wsgi._service is None
    # what the log line said
    assert (wsgi._last_error or "").startswith("The inspector API cannot start")
    assert fragment in (wsgi._last_error or "")


def test_start_failure_never_shows_the_database_to_clients(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "inspector.conf"
    path.write_text(
        "[DEFAULT]\nstandalone = False\ntransport_url = rabbit://u:p@127.0.0.1:1/\n"
        "[coordination]\nbackend_url = etcd3+http://127.0.0.1:1\n"
        "[database]\nconnection = postgresql+psycopg2://dbuser:secret@"
        "db.example.org:1/inspectordb\nmax_retries = 0\n"
    )
    monkeypatch.setattr(wsgi, "_service", None)
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", wsgi.CONFIG_ENV: str(path)}
    status, _headers, body = _call(environ)
    assert status.startswith("503")
    for detail in ("dbuser", "secret", "db.example.org", "inspectordb"):
        assert detail not in body.decode()


def test_missing_config_file_is_named_once_at_preload(
    tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    missing = tmp_path / "nowhere" / "inspector.conf"
    monkeypatch.setenv(wsgi.CONFIG_ENV, str(missing))
    monkeypatch.setattr(wsgi, "_service", None)
    monkeypatch.setattr(wsgi, "_last_error", None)
    with caplog.at_level("ERROR", logger=wsgi.__name__):
        assert wsgi.preload() is False
        status, _headers, body = _call({"REQUEST_METHOD": "GET", "PATH_INFO": "/"})
        _call({"REQUEST_METHOD": "GET", "PATH_INFO": "/"})
    assert status.startswith("503")
    assert str(missing) not in json.loads(body)["error"]["message"]
    lines = [r.getMessage() for r in caplog.records if r.name == wsgi.__name__]
    assert len(lines) == 1, lines  # the same cause is not logged per request
    assert str(missing) in lines[0] and "\n" not in lines[0]


def test_bad_option_value_is_named(
    tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "inspector.conf"
    path.write_text(
        "[DEFAULT]\nstandalone = False\n[coordination]\nmember_cache_seconds = soon\n"
    )
    monkeypatch.setenv(wsgi.CONFIG_ENV, str(path))
    monkeypatch.setattr(wsgi, "_service", None)
    monkeypatch.setattr(wsgi, "_last_error", None)
    assert wsgi.preload() is False
    assert wsgi._last_error is not None
    assert "[coordination]member_cache_seconds" in wsgi._last_error


def test_metrics_directory_is_shared_per_apache_parent(
    tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(wsgi.MULTIPROC_ENV, raising=False)
    gone = tmp_path / f"{wsgi.METRICS_DIR_PREFIX}999999999"  # no such process
    gone.mkdir()
    alive = tmp_path / f"{wsgi.METRICS_DIR_PREFIX}1"  # init never exits
    alive.mkdir()
    import os

    shared = wsgi.share_metrics(os.getpid(), tmp_path)
    assert shared == tmp_path / f"{wsgi.METRICS_DIR_PREFIX}{os.getpid()}"
    assert shared.is_dir() and alive.is_dir() and not gone.exists()
    assert os.environ[wsgi.MULTIPROC_ENV] == str(shared)
    assert wsgi.share_metrics(os.getpid(), tmp_path) == shared  # idempotent
