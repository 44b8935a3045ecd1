"""Audit-grade request logs in the real servers: the standalone process's
own threaded server and Apache with mod_wsgi daemon threads.

Admin requests (HTTP basic) and anonymous ramdisk posts are interleaved on
the server's threads; every answer names its request in
``X-OpenStack-Request-Id``, and the line the service logs for it (debug)
carries that id and the right caller: the issue found anonymous posts
logged as ``admin`` and unrelated requests sharing one id.
"""

import base64
import os
import pathlib
import re
import shutil
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import bcrypt
import pytest
import requests

from lab.machines import hardware
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from tests.integration.conftest import SplitFactory, start_inspector, wait_until

HEADER = "X-OpenStack-Request-Id"
ADMIN = {"Authorization": "Basic " + base64.b64encode(b"alice:s3cret").decode()}
LINE = re.compile(
    r"\[(\S+) (req-[0-9a-f-]{36}) (\S+) - - - - -\] (GET|POST) (\S+) answered (\d+)\b"
)
"""The line of one request in oslo.log's default context format."""


@pytest.fixture(scope="module")
def htpasswd() -> Iterator[pathlib.Path]:
    """``alice``, readable by Apache's daemon user too."""
    directory = pathlib.Path(tempfile.mkdtemp(prefix="inspector-htpasswd-"))
    os.chmod(directory, 0o755)
    path = directory / "htpasswd"
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
    path.write_text(f"alice:{hashed}\n")
    path.chmod(0o644)
    yield path
    shutil.rmtree(directory, ignore_errors=True)


def _options(htpasswd: pathlib.Path) -> dict[str, dict[str, str]]:
    return {
        "DEFAULT": {
            "auth_strategy": "http_basic",
            "http_basic_auth_user_file": str(htpasswd),
            "debug": "True",
            "api_threads": "8",
        }
    }


@pytest.fixture(scope="module", params=["standalone", "apache"])
def api(
    request: pytest.FixtureRequest,
    ironic: IronicServer,
    split_cluster: SplitFactory,
    htpasswd: pathlib.Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[InspectorServer]:
    if request.param == "standalone":
        server = start_inspector(
            tmp_path_factory.mktemp("request_logs"), ironic, options=_options(htpasswd)
        )
        yield server
        server.stop()
        return
    with split_cluster(
        "request_logs",
        conductors=0,
        api_server="apache",
        api_processes=1,
        options=_options(htpasswd),
    ) as cluster:
        assert cluster.api is not None
        yield cluster.api


def test_interleaved_callers_logged_under_their_own_ids(api: InspectorServer) -> None:
    global_id = "req-0b5e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b"

    def one(n: int) -> tuple[str, str, str, str, str]:
        with requests.Session() as http:  # a connection per request
            if n % 2:
                machine = hardware.unknown_machine(seed=1000 + n)
                resp = http.post(
                    f"{api.url}/v1/continue", json=machine.payload(), timeout=60
                )
                caller, path, sent = "-", "/v1/continue", "None"
            else:
                headers = {**ADMIN, "X-OpenStack-Request-ID": global_id}
                resp = http.get(
                    f"{api.url}/v1/introspection", headers=headers, timeout=60
                )
                caller, path, sent = "alice", "/v1/introspection", global_id
        rid = resp.headers[HEADER]
        return rid, sent, caller, path, str(resp.status_code)

    with ThreadPoolExecutor(max_workers=8) as pool:
        answered = list(pool.map(one, range(160)))
    assert len({a[0] for a in answered}) == 160
    assert {a[4] for a in answered if a[2] == "alice"} == {"200"}

    def logged() -> dict[str, tuple[str, ...]]:
        found = {}
        for match in LINE.finditer(api.log_tail(10**8)):
            found[match.group(2)] = match.group(1, 3, 5, 6)
        return found

    # the log file is written as the server goes: wait for the last lines
    wait_until(
        lambda: {a[0] for a in answered} <= set(logged()),
        timeout=10,
        what="a line for every request in the log",
    )
    lines = logged()
    for rid, sent, caller, path, status in answered:
        assert lines[rid] == (sent, caller, path, status), (rid, api.log_tail())
