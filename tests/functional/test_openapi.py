"""The OpenAPI description matches the routes, and fuzzing it finds no 500."""

import base64
import pathlib
import re
from collections.abc import Iterator
from typing import Any

import bcrypt
import hypothesis
import pytest
import schemathesis
from oslo_config import cfg
from schemathesis.core.result import Ok

from inspector.api import openapi
from inspector.api.app import create_app
from tests.functional.conftest import Service


def test_document_lists_exactly_the_routes(service: Service) -> None:
    app = create_app(service.rt)
    routes = set()
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        assert rule.methods is not None, rule  # Flask routes always name them
        path = re.sub(r"<([a-z_]+)>", r"{\1}", rule.rule).rstrip("/") or "/"
        routes |= {(m.lower(), path) for m in rule.methods - {"HEAD", "OPTIONS"}}
    described = {(m, p) for p, ops in openapi.PATHS.items() for m in ops}
    assert routes == described
    served = app.test_client().get("/v1/openapi.json")
    assert served.status_code == 200
    assert served.get_json() == openapi.document()


@pytest.fixture(params=["noauth", "http_basic", "http_basic-anonymous"])
def fuzz_app(
    request: pytest.FixtureRequest,
    service: Service,
    conf: cfg.ConfigOpts,
    tmp_path: pathlib.Path,
) -> Iterator[tuple[Any, dict[str, str]]]:
    headers: dict[str, str] = {}
    if request.param.startswith("http_basic"):
        users = tmp_path / "htpasswd"
        hashed = bcrypt.hashpw(b"pw", bcrypt.gensalt(rounds=4)).decode()
        users.write_text(f"fuzz:{hashed}\n")
        conf.set_override("auth_strategy", "http_basic")
        conf.set_override("http_basic_auth_user_file", str(users))
        if request.param == "http_basic":
            headers["Authorization"] = "Basic " + base64.b64encode(b"fuzz:pw").decode()
    yield create_app(service.rt), headers
    service.client.delete("/v1/rules")
    for view in service.rt.conductors.conductors():  # the fuzzer may disable it
        service.rt.conductors.set_enabled(view["hostname"], True)


def test_fuzz_finds_no_server_error(fuzz_app: tuple[Any, dict[str, str]]) -> None:
    """Every operation with generated (valid and invalid) input: never a
    5xx, never a hang; bounded and deterministic so that CI is stable."""
    app, headers = fuzz_app
    schema = schemathesis.openapi.from_dict(openapi.document())
    failures = []
    seen: dict[int, int] = {}
    operations = 0
    for result in schema.get_all_operations():
        operations += 1
        assert isinstance(result, Ok), result.err()
        operation = result.ok()

        @hypothesis.settings(
            max_examples=40,
            deadline=2000,
            derandomize=True,
            database=None,
            suppress_health_check=list(hypothesis.HealthCheck),
        )
        @hypothesis.given(case=operation.as_strategy())
        def check(case: Any) -> None:
            response = case.call(app=app, headers=headers)
            seen[response.status_code] = seen.get(response.status_code, 0) + 1
            if response.status_code >= 500:
                failures.append(
                    (
                        case.method,
                        case.formatted_path,
                        response.status_code,
                        response.text[:200],
                    )
                )

        check()
    assert failures == []
    assert operations == sum(len(ops) for ops in openapi.PATHS.values())
    print(
        f"fuzzing: {sum(seen.values())} requests, status codes {sorted(seen.items())}"
    )
    assert sum(seen.values()) >= 10 * operations  # it really ran
    assert any(200 <= code < 300 for code in seen)  # public ones at least
    assert any(400 <= code < 500 for code in seen)
