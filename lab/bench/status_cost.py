"""The CPU that one status GET costs inside the application, part by part.

``python -m lab bench-status`` builds the standalone shape as
``ironic-inspector`` builds it (the options the lab's server gets, oslo.log
set up with DEBUG off, a SQLite file with one finished introspection), then
calls the WSGI application the HTTP server calls with a prepared
environment, many times, and prints the microseconds of CPU per request
(``time.process_time``, the least of several rounds, so other load on the
machine mostly drops out): the whole application, then each part of it on
its own. The HTTP server's own share (cheroot, the sockets, the threads'
hand-offs) is not in these numbers: the benchmark's ``cpu_us_per_request``
(``python -m lab bench``) is the whole process's.

``--debug`` sets ``[DEFAULT]debug``, to price the per-request log line.
It measures only; nothing passes or fails.
"""

import argparse
import gc
import io
import json
import logging
import pathlib
import shutil
import sys
import tempfile
import time
import uuid as uuid_mod
from collections.abc import Callable, Iterable
from typing import Any, cast
from unittest import mock

ROUNDS = 7
CALLS = 3000


def _environ(path: str) -> dict[str, Any]:
    """What cheroot hands the application for ``GET path`` from wrk."""
    return {
        "REQUEST_METHOD": "GET",
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "5050",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "SERVER_SOFTWARE": "ironic-inspector",
        "REMOTE_ADDR": "127.0.0.1",
        "REMOTE_PORT": "40000",
        "HTTP_HOST": "127.0.0.1:5050",
        "ACTUAL_SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.url_scheme": "http",
        "wsgi.version": (1, 0),
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
    }


def _start_response(
    status: str, headers: list[tuple[str, str]], exc_info: Any = None
) -> Callable[[bytes], None]:
    return lambda data: None


def _answer(
    environ: dict[str, Any], start_response: Callable[..., Any]
) -> Iterable[bytes]:
    """A WSGI application that does nothing: the layer around it is priced."""
    start_response("200 OK", [("Content-Type", "application/json")])
    return [b"{}"]


def per_call_us(call: Callable[[], Any], calls: int = CALLS) -> float:
    """Microseconds of CPU per ``call()``, the least of :data:`ROUNDS`."""
    best = float("inf")
    for _ in range(ROUNDS):
        gc.collect()
        started = time.process_time()
        for _ in range(calls):
            call()
        best = min(best, time.process_time() - started)
    return best * 1e6 / calls


def _config(work: pathlib.Path, debug: bool) -> str:
    return (
        "[DEFAULT]\n"
        "standalone = True\n"
        "host = lab-inspector\n"
        f"log_file = {work / 'inspector.log'}\n"
        "use_stderr = False\n"
        "auth_strategy = noauth\n"
        f"debug = {debug}\n"
        "[pxe_filter]\ndriver = noop\n"
        "[healthcheck]\nenabled = True\n"
        f"[database]\nconnection = sqlite:///{work / 'inspector.sqlite'}\n"
        "[ironic]\nauth_type = none\nendpoint_override = http://127.0.0.1:9\n"
        "[processing]\nstore_data = database\n"
    )


def measure(debug: bool = False) -> dict[str, float]:
    """Microseconds of CPU per status GET: the whole application, each part."""
    from inspector import bootstrap

    bootstrap.select_threading_backend()  # as every entry point, first

    import sqlalchemy as sa

    from inspector import states
    from inspector.api import (
        access,
        auth,
        request_context,
        status_fast_path,
        urls,
        versions,
    )
    from inspector.api.status_body import status_body
    from inspector.db import engine, introspections, migration, models
    from inspector.server import wiring

    work = pathlib.Path(tempfile.mkdtemp(prefix="inspector-status-cost-"))
    (work / "inspector.conf").write_text(_config(work, debug))
    conf = bootstrap.parse_config(["--config-file", str(work / "inspector.conf")])
    bootstrap.setup_logging(conf, "ironic-inspector")
    db = engine.from_conf(conf)
    migration.upgrade(db)
    # the API alone: no conductor started, no Ironic asked
    shape = wiring.standalone(conf, db=db, baremetal=object())
    uuid = str(uuid_mod.uuid4())
    introspections.start(db, uuid, True, {"mac": ["52:54:00:12:34:56"]})
    table = cast(sa.Table, models.Introspection.__table__)
    with db.begin() as conn:  # a finished node, as the benchmark reads
        conn.execute(
            sa.update(table)
            .where(table.c.uuid == uuid)
            .values(state=states.FINISHED, finished_at=models.utcnow())
        )

    path = f"/v1/introspection/{uuid}"
    app = shape.app  # what the HTTP server calls (Flask.__call__)
    first = b"".join(app(_environ(path), _start_response))
    if not first.startswith(b'{"uuid"'):
        raise RuntimeError(f"the status GET did not answer: {first[:200]!r}")
    environ = _environ(path)
    version = versions.MAXIMUM
    record = introspections.get(db, uuid)
    body = status_body(record, urls.base_url(environ), version)
    data = status_fast_path.encode(body)
    log = logging.getLogger("inspector.api.request_context")

    def whole() -> None:
        b"".join(app(_environ(path), _start_response))

    ids = request_context.RequestIds(_answer)
    no_auth = auth.NoAuth(_answer)
    identity = request_context.Identity(_answer)
    # as the fast path sees it: behind RequestIds and authentication
    authenticated = _environ(path)
    ids(authenticated, _start_response)
    no_auth(authenticated, _start_response)

    parts: dict[str, Callable[[], Any]] = {
        "the environment (copied per call below)": lambda: _environ(path),
        "request context (RequestIds: id, context, header, clear)": lambda: ids(
            _environ(path), _start_response
        ),
        "  request id (uuid4)": request_context.new_request_id,
        "  oslo.context RequestContext()": lambda: request_context.RequestContext(
            request_id="req-x"
        ),
        "  clear the thread's context": request_context.clear,
        "  debug check (DEBUG off: isEnabledFor)": lambda: log.isEnabledFor(
            logging.DEBUG
        ),
        "authentication (NoAuth)": lambda: no_auth(_environ(path), _start_response),
        "identity into the context": lambda: identity(authenticated, _start_response),
        "policy decision (remembered)": lambda: access.allowed(
            conf, "introspection:status", authenticated
        ),
        "version negotiation": lambda: versions.negotiate(None, None),
        "database read": lambda: introspections.get(db, uuid),
        "status body": lambda: status_body(record, urls.base_url(environ), version),
        "JSON encoding": lambda: status_fast_path.encode(body),
        "response headers": lambda: status_fast_path.headers(version, len(data)),
    }
    result = {"whole application": per_call_us(whole)}
    # everything but the database: the read answers the record at once
    with mock.patch.object(introspections, "get", lambda _db, _uuid: record):
        result["whole application less the database read"] = per_call_us(whole)
    for name, call in parts.items():
        result[name] = per_call_us(call)
    shape.rt.db.dispose()
    shutil.rmtree(work, ignore_errors=True)
    return result


def run(args: argparse.Namespace) -> int:
    """``python -m lab bench-status``: ``--debug``, ``--json``."""
    result = measure(debug=args.debug)
    if args.json:
        print(json.dumps({k: round(v, 1) for k, v in result.items()}))
        return 0
    print(f"status GET, CPU us per request (least of {ROUNDS} x {CALLS} calls)")
    for name, us in result.items():
        print(f"{us:8.1f}  {name}")
    return 0
