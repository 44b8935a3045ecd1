"""Each request's own context: ids, caller, the response header, the log line."""

import io
import logging
import re
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from oslo_config import cfg
from oslo_context import context
from oslo_log import formatters, log

from inspector.api import auth, request_context

ID_RE = re.compile(
    r"^req-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
)
FORMAT = "[%(global_request_id)s %(request_id)s %(user_identity)s] %(message)s"
"""oslo.log's default context format, cut to the part these tests read."""
ANONYMOUS = "- - - - - -"
"""``user_identity`` (oslo.log's: user, project, domain, system scope, user
domain, project domain) of a request without a caller."""
LOG = logging.getLogger("tests.request_context")


@pytest.fixture
def lines() -> Iterator[io.StringIO]:
    """What the test logger writes through oslo.log's context formatter
    (with the thread's context, as a service's log does)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    conf = cfg.ConfigOpts()
    log.register_options(conf)
    conf([], default_config_files=[])
    conf.set_override("logging_context_format_string", FORMAT)
    conf.set_override("logging_default_format_string", "[-] %(message)s")
    handler.setFormatter(formatters.ContextFormatter(config=conf))
    LOG.addHandler(handler)
    LOG.setLevel(logging.INFO)
    try:
        yield stream
    finally:
        LOG.removeHandler(handler)
        request_context.clear()


def _app(
    environ: dict[str, Any], start_response: Callable[..., Any]
) -> Iterable[bytes]:
    """Logs one line naming the request, as a view would."""
    LOG.info("handled %s", environ.get("PATH_INFO"))
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]


def _call(
    app: Callable[..., Iterable[bytes]], path: str = "/x", **extra: str
) -> dict[str, str]:
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": path, **extra}
    seen: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], *_: Any) -> None:
        seen.update(headers)

    b"".join(app(environ, start_response))
    return seen


def test_formatter_config(lines: io.StringIO) -> None:
    """The fixture's formatter writes the context (else the other tests
    could pass on lines without one)."""
    context.RequestContext(request_id="req-x", user_id="u1")
    LOG.info("hello")
    request_context.clear()
    LOG.info("bye")
    assert lines.getvalue().splitlines() == [
        "[None req-x u1 - - - - -] hello",
        "[-] bye",
    ]


def test_new_request_id_is_a_uuid4() -> None:
    ids = {request_context.new_request_id() for _ in range(2000)}
    assert len(ids) == 2000
    for value in ids:
        assert ID_RE.match(value), value
        parsed = uuid.UUID(value.removeprefix("req-"))
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_every_request_its_own_id_in_header_and_log(lines: io.StringIO) -> None:
    app = request_context.RequestIds(_app)
    answered = [_call(app, f"/p{n}")[request_context.HEADER] for n in range(5)]
    assert len(set(answered)) == 5 and all(ID_RE.match(r) for r in answered)
    logged = lines.getvalue().splitlines()
    assert logged == [
        f"[None {rid} {ANONYMOUS}] handled /p{n}" for n, rid in enumerate(answered)
    ]
    assert not context.get_current()  # cleared once answered


@pytest.mark.parametrize(
    "sent,kept",
    [
        ("req-6f2c1d0e-8b1a-4c3d-9e2f-0a1b2c3d4e5f", True),
        ("req-6F2C1D0E-8B1A-4C3D-9E2F-0A1B2C3D4E5F", False),  # oslo's: lower case
        ("6f2c1d0e-8b1a-4c3d-9e2f-0a1b2c3d4e5f", False),
        ("req-6f2c1d0e-8b1a-4c3d-9e2f-0a1b2c3d4e5f\nforged line", False),
        ("req-6f2c1d0e-8b1a-4c3d-9e2f-0a1b2c3d4e5f\n", False),  # $ would pass it
        ("req-x", False),
        ("", False),
    ],
)
def test_global_request_id_only_when_valid(
    lines: io.StringIO, sent: str, kept: bool
) -> None:
    app = request_context.RequestIds(_app)
    headers = _call(app, HTTP_X_OPENSTACK_REQUEST_ID=sent)
    expected = sent if kept else "None"
    assert lines.getvalue() == (
        f"[{expected} {headers[request_context.HEADER]} {ANONYMOUS}] handled /x\n"
    )


def test_cleared_when_the_app_raises() -> None:
    def broken(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        _call(request_context.RequestIds(broken))
    assert not context.get_current()


def _stack() -> Callable[..., Iterable[bytes]]:
    """Ids, then HTTP basic authentication of one admin, then the caller."""
    basic = auth.HttpBasic.__new__(auth.HttpBasic)
    basic._app = request_context.Identity(_app)
    basic._user = lambda environ: (  # type: ignore[method-assign]
        "alice" if environ.get("HTTP_AUTHORIZATION") == "good" else None
    )
    return request_context.RequestIds(basic)


def test_admin_and_anonymous_interleaved_on_the_same_threads(
    lines: io.StringIO,
) -> None:
    """The issue's case: anonymous ramdisk posts were logged as the admin
    whose request the thread served before, and shared its request id."""
    app = _stack()

    def one(n: int) -> tuple[str, str]:
        admin = n % 2 == 0
        extra = {"HTTP_AUTHORIZATION": "good"} if admin else {}
        path = "/v1/introspection" if admin else "/v1/continue"
        if not admin:  # an anonymous caller claiming to be someone
            extra.update(HTTP_X_USER_ID="mallory", HTTP_X_ROLES="admin")
        method = "GET" if admin else "POST"
        return _call(app, path, REQUEST_METHOD=method, **extra)[
            request_context.HEADER
        ], ("alice" if admin else "-")

    with ThreadPoolExecutor(max_workers=4) as pool:
        answered = list(pool.map(one, range(200)))
    ids = [rid for rid, _ in answered]
    assert len(set(ids)) == 200
    logged = {}
    for line in lines.getvalue().splitlines():
        match = re.match(r"^\[None (\S+) (\S+) - - - - -\] handled (\S+)$", line)
        assert match, line
        logged[match.group(1)] = (match.group(2), match.group(3))
    for rid, user in answered:
        path = "/v1/introspection" if user == "alice" else "/v1/continue"
        assert logged[rid] == (user, path)


def test_identity_is_read_after_authentication_only(lines: io.StringIO) -> None:
    """A line logged before authentication has run is anonymous, even when
    the client sent identity headers."""

    def early(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        LOG.info("before authentication")
        return request_context.Identity(_app)(environ, start_response)

    extra = {"HTTP_X_IDENTITY_STATUS": "Confirmed", "HTTP_X_USER_ID": "bob"}
    rid = _call(request_context.RequestIds(early), **extra)[request_context.HEADER]
    assert lines.getvalue().splitlines() == [
        f"[None {rid} {ANONYMOUS}] before authentication",
        f"[None {rid} bob - - - - -] handled /x",
    ]


def test_context_carries_what_from_environ_reads_without_tokens() -> None:
    environ = {
        "HTTP_X_IDENTITY_STATUS": "Confirmed",
        "HTTP_X_USER_ID": "u1",
        "HTTP_X_USER_NAME": "alice",
        "HTTP_X_PROJECT_ID": "p1",
        "HTTP_X_PROJECT_NAME": "demo",
        "HTTP_X_USER_DOMAIN_ID": "default",
        "HTTP_X_PROJECT_DOMAIN_ID": "default",
        "HTTP_OPENSTACK_SYSTEM_SCOPE": "all",
        "HTTP_X_ROLES": "admin, reader",
        "HTTP_X_SERVICE_ROLES": "service",
        "HTTP_X_IS_ADMIN_PROJECT": "False",
        "HTTP_X_AUTH_TOKEN": "secret-token",
    }
    ctx = request_context.RequestContext(request_id="req-1", overwrite=False)
    ctx.identify(environ)
    expected = context.RequestContext.from_environ(
        environ, request_id="req-1", overwrite=False, auth_token=None
    )
    assert ctx.to_policy_values() == expected.to_policy_values()
    assert ctx.to_dict() == expected.to_dict()
    assert ctx.auth_token is None and "secret-token" not in str(
        ctx.get_logging_values()
    )


def test_answered_line_escapes_the_path(lines: io.StringIO) -> None:
    """With debug logging every request writes one line; a decoded %0A in
    its path must not start a line of its own."""

    def silent(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        start_response("404 Not Found", [])
        return [b""]

    ids_log = logging.getLogger(request_context.__name__)
    ids_log.addHandler(LOG.handlers[0])
    ids_log.setLevel(logging.DEBUG)
    try:
        rid = _call(request_context.RequestIds(silent), "/v1/x\nforged")[
            request_context.HEADER
        ]
    finally:
        ids_log.removeHandler(LOG.handlers[0])
        ids_log.setLevel(logging.NOTSET)
    logged = lines.getvalue().splitlines()
    assert len(logged) == 1, logged
    assert logged[0].startswith(
        f"[None {rid} {ANONYMOUS}] GET /v1/x\\x0aforged answered 404"
    )
