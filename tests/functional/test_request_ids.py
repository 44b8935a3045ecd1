"""Every request is logged under its own id and caller, which it answers with.

The real application on the service's own threaded server (8 threads):
admin requests and anonymous ramdisk posts interleaved on the same server
threads, each log line checked against the request that wrote it.
"""

import base64
import io
import logging
import pathlib
import re
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import bcrypt
import pytest
import requests
from oslo_config import cfg
from oslo_log import formatters, log

from inspector.api import request_context
from inspector.api.app import create_app
from inspector.net.wsgi_server import WSGIServer
from tests.functional.conftest import Service, build_payload, random_bmc, random_mac

ANSWERED = re.compile(
    r" DEBUG inspector\.api\.request_context "
    r"\[(\S+) (req-\S+) (\S+) - - - - -\] (GET|POST) (\S+) answered (\d+)\b"
)
"""The line every request writes with debug logging, in oslo.log's default
``logging_context_format_string`` (the service's): global request id,
request id, user, project, domains; then the message."""


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """What the API logs, formatted as the service formats it by default."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    log_conf = cfg.ConfigOpts()
    log.register_options(log_conf)
    log_conf([], default_config_files=[])
    handler.setFormatter(formatters.ContextFormatter(config=log_conf))
    logger = logging.getLogger(request_context.__name__)
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        yield stream
    finally:
        logger.setLevel(level)
        logger.removeHandler(handler)


@pytest.fixture
def server(
    service: Service, conf: cfg.ConfigOpts, tmp_path: pathlib.Path
) -> Iterator[str]:
    """The API with HTTP basic authentication (``alice`` is an admin) on
    its own threaded server; its URL."""
    htpasswd = tmp_path / "htpasswd"
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
    htpasswd.write_text(f"alice:{hashed}\n")
    conf.set_override("auth_strategy", "http_basic")
    conf.set_override("http_basic_auth_user_file", str(htpasswd))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    wsgi = WSGIServer(create_app(service.rt), "127.0.0.1", port, 8)
    wsgi.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        wsgi.stop()


ADMIN = {"Authorization": "Basic " + base64.b64encode(b"alice:s3cret").decode()}


def test_each_request_logged_under_its_own_id_and_caller(
    server: str, log_lines: io.StringIO
) -> None:
    """80 anonymous posts and 80 admin reads on 8 threads (the issue's
    case: the posts were logged under one request id, and as ``admin``)."""
    global_id = "req-0b5e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b"

    def one(n: int) -> tuple[str, str, str, str]:
        with requests.Session() as http:  # a connection per request
            if n % 2:
                data = build_payload(random_mac(), random_bmc())
                resp = http.post(f"{server}/v1/continue", json=data, timeout=30)
                caller, path = "-", "/v1/continue"
            else:
                headers = {**ADMIN, "X-OpenStack-Request-ID": global_id}
                resp = http.get(
                    f"{server}/v1/introspection", headers=headers, timeout=30
                )
                caller, path = "alice", "/v1/introspection"
        return resp.headers[request_context.HEADER], caller, path, str(resp.status_code)

    with ThreadPoolExecutor(max_workers=8) as pool:
        answered = list(pool.map(one, range(160)))
    assert {status for *_, status in answered} == {"200", "404"}
    assert len({rid for rid, *_ in answered}) == 160
    logged: dict[str, tuple[str, ...]] = {}
    for line in log_lines.getvalue().splitlines():
        match = ANSWERED.search(line)
        assert match, line
        logged[match.group(2)] = match.group(1, 3, 5, 6)
    for rid, caller, path, status in answered:
        expected_global = global_id if caller == "alice" else "None"
        assert logged[rid] == (expected_global, caller, path, status)


@pytest.mark.parametrize(
    "method,path,headers,status",
    [
        ("GET", "/", {}, 200),
        ("GET", "/v1", {}, 200),
        ("GET", "/v1/introspection", {}, 401),  # refused before the API
        ("GET", "/v1/introspection", ADMIN, 200),
        ("GET", "/v1/introspection/0b5e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b", ADMIN, 404),
        ("GET", "/v1/nothing-here", ADMIN, 404),
        ("GET", "/healthcheck", {}, 200),
        ("GET", "/metrics", {}, 200),
    ],
)
def test_every_answer_names_its_request(
    server: str, method: str, path: str, headers: dict[str, str], status: int
) -> None:
    first = requests.request(method, server + path, headers=headers, timeout=30)
    second = requests.request(method, server + path, headers=headers, timeout=30)
    assert first.status_code == second.status_code == status
    ids = {r.headers[request_context.HEADER] for r in (first, second)}
    assert len(ids) == 2 and all(i.startswith("req-") for i in ids)


def test_status_fast_path_names_its_request(
    server: str, log_lines: io.StringIO, status_record: Any
) -> None:
    uuid = status_record()
    resp = requests.get(f"{server}/v1/introspection/{uuid}", headers=ADMIN, timeout=30)
    assert resp.status_code == 200
    rid = resp.headers[request_context.HEADER]
    line = f"[None {rid} alice - - - - -] GET /v1/introspection/{uuid} answered 200"
    assert line in log_lines.getvalue()
