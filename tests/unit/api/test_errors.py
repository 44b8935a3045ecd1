"""Every 5xx answer the error mapper gives says what failed in general terms:
no host, port, user name or URL reaches a client; the log has them."""

import logging
from collections.abc import Iterator

import flask
import pytest
from sqlalchemy import exc as sa_exc
from werkzeug import exceptions as http_exceptions

from inspector import exceptions
from inspector.api import access, errors
from inspector.db import engine

SECRETS = (
    "db.example.com",
    "10.20.30.40",
    "5432",
    "6385",
    "inspector_db_user",
    "s3cr3t",
    "https://",
    "rabbit://",
    "ironic.example.com",
    "conductor-7.example.com",
)
"""What the failures below name, and no answer may."""

DETAIL = (
    'connection to server at "db.example.com" (10.20.30.40), port 5432 failed: '
    'FATAL:  password authentication failed for user "inspector_db_user" '
    "(tried https://ironic.example.com:6385/v1 and "
    "rabbit://inspector_db_user:s3cr3t@10.20.30.40:5672/ from conductor-7.example.com)"
)
"""A driver's message, an Ironic URL, a broker URL and a host, in one."""


def _domain_classes() -> Iterator[type[exceptions.InspectorError]]:
    """Every error the API process can meet: the domain's, and the API's
    own (the conductor's live in modules the API never imports)."""
    pending: list[type[exceptions.InspectorError]] = [exceptions.InspectorError]
    while pending:
        cls = pending.pop()
        if cls.__module__ == exceptions.__name__ or cls.__module__.startswith(
            "inspector.api."
        ):
            yield cls
        pending.extend(cls.__subclasses__())


def _five_hundreds() -> list[BaseException]:
    failures: list[BaseException] = []
    for cls in _domain_classes():
        if cls.code >= 500:
            failures.append(cls(reason=DETAIL))  # through the template
            failures.append(cls(DETAIL))  # a message written at the raise
    # what the database's boundary makes of the drivers' errors
    for driver_message in (
        DETAIL,
        'FATAL: password authentication failed for user "inspector_db_user"',
        'FATAL: database "inspector_db_user" does not exist (db.example.com:5432)',
        "Access denied for user 'inspector_db_user'@'10.20.30.40' (using password: YES)",
    ):
        failures.append(
            engine.unreachable(
                sa_exc.OperationalError("SELECT 1", {}, Exception(driver_message))
            )
        )
    failures.append(RuntimeError(DETAIL))  # the unexpected
    failures.append(KeyError(DETAIL))
    for http_cls in (
        http_exceptions.InternalServerError,
        http_exceptions.NotImplemented,
        http_exceptions.BadGateway,
        http_exceptions.ServiceUnavailable,
        http_exceptions.GatewayTimeout,
    ):
        failures.append(http_cls(description=DETAIL))
    return failures


@pytest.fixture
def app() -> flask.Flask:
    app = flask.Flask("test-errors")
    errors.register(app)
    raised: dict[str, BaseException] = {}
    app.config["RAISE"] = raised

    @app.route("/v1/continue", methods=["POST"])
    def fail() -> flask.Response:
        raise raised["exc"]

    return app


def test_the_failures_are_many() -> None:
    """Every 5xx class of the domain is covered (else the scan proves little)."""
    codes = {cls.__name__ for cls in _domain_classes() if cls.code >= 500}
    assert {
        "InspectorError",
        "ServiceUnavailable",
        "NoConductor",
        "DatabaseUnavailable",
        "DatabaseRefused",
        "BaremetalError",
        "ConfigError",
    } <= codes
    assert access.Forbidden.code == 403  # a client's: it keeps its message


@pytest.mark.parametrize("failure", _five_hundreds(), ids=repr)
def test_no_backend_details_in_any_5xx(
    app: flask.Flask, failure: BaseException, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=errors.__name__)
    app.config["RAISE"]["exc"] = failure
    resp = app.test_client().post("/v1/continue")  # anonymous, as a ramdisk
    assert resp.status_code >= 500
    text = resp.get_data(as_text=True) + repr(list(resp.headers))
    leaked = [s for s in SECRETS if s in text]
    assert not leaked, text
    message = resp.get_json()["error"]["message"]
    assert message.endswith(errors.SEE_LOG), message
    named = [s for s in SECRETS if s in str(failure)]
    if named and not isinstance(failure, http_exceptions.HTTPException):
        # the details are not lost: the log has them
        assert all(s in caplog.text for s in named), caplog.text


@pytest.mark.parametrize(
    "failure,general",
    [
        (exceptions.DatabaseUnavailable(reason=DETAIL), "the database is unreachable"),
        (exceptions.DatabaseRefused(reason=DETAIL), "the database refused"),
        (exceptions.BaremetalError(reason=DETAIL), "a request to Ironic failed"),
        (exceptions.NoConductor(reason=DETAIL), "no conductor is available"),
        (exceptions.ServiceUnavailable(reason=DETAIL), "a backend this request needs"),
        (exceptions.ConfigError(DETAIL), "configuration is invalid"),
        (RuntimeError(DETAIL), "Internal server error (RuntimeError)"),
    ],
)
def test_what_failed_in_general_terms(
    app: flask.Flask, failure: Exception, general: str
) -> None:
    app.config["RAISE"]["exc"] = failure
    resp = app.test_client().post("/v1/continue")
    assert general in resp.get_json()["error"]["message"]
    if resp.status_code == 503:
        assert resp.headers["Retry-After"] == "5"


def test_client_mistakes_keep_their_message(app: flask.Flask) -> None:
    app.config["RAISE"]["exc"] = exceptions.NodeNotFound(node="node-7.example.com")
    resp = app.test_client().post("/v1/continue")
    assert resp.status_code == 404
    assert "node-7.example.com" in resp.get_json()["error"]["message"]
