"""A real Apache whose API cannot read its configuration says why, once."""

import pathlib

import requests

from lab.servers.apache import ApacheApiServer


def test_missing_config_file_is_named_at_start(tmp_path: pathlib.Path) -> None:
    server = ApacheApiServer(tmp_path, "http://127.0.0.1:1", processes=2, threads=2)
    missing = "/nonexistent/ironic-inspector/api.conf"
    server.config_env = missing
    server.start(timeout=60, dbsync=False)
    try:
        for _ in range(4):
            resp = requests.get(server.url + "/v1", timeout=10)
            assert resp.status_code == 503
            assert resp.headers["Retry-After"] == "5"
            # clients get no detail; the error log names the file
            assert missing not in resp.json()["error"]["message"]
            assert "cause is in the service's log" in resp.json()["error"]["message"]
        logs = server.error_log.read_text() + (
            server.vhost_error_log.read_text()
            if server.vhost_error_log.exists()
            else ""
        )
        lines = [x for x in logs.splitlines() if "cannot start" in x]
        # one line per daemon process, at its start, naming the file
        assert 1 <= len(lines) <= 2, logs
        assert all(missing in line for line in lines)
    finally:
        server.stop()
