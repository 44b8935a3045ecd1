"""Domain exceptions: a message template and an HTTP-neutral error kind."""

from typing import Any


def first_line(exc: BaseException, empty: str | None = None) -> str:
    """One line for a log or a message: the first line of the error's
    message (:attr:`InspectorError.message`, or a client library's
    ``message``), else of its text; ``empty`` (by default the class name)
    when there is none."""
    text = str(getattr(exc, "message", None) or exc).strip()
    if text:
        return text.splitlines()[0].rstrip()
    return type(exc).__name__ if empty is None else empty


class InspectorError(Exception):
    """Base class; ``code`` is the HTTP status the API maps this error to.

    The message of a client's mistake (4xx) is the client's answer. That of
    a failure of the service (5xx) names what failed in detail (a host, a
    port, a user, a URL) and is for the log only: the client reads
    :attr:`public`, which says what failed in general terms.
    """

    code = 500
    template = "An unexpected error occurred"
    public = "Internal server error"
    """A 5xx answer's message: general terms, never a backend's details."""

    def __init__(self, message: str | None = None, **kwargs: Any) -> None:
        if message is None:
            try:
                message = self.template % kwargs if kwargs else self.template
            except (KeyError, TypeError, ValueError):
                message = self.template
        self.kwargs = kwargs
        super().__init__(message)

    @property
    def message(self) -> str:
        return str(self.args[0])


class InvalidInput(InspectorError):
    code = 400
    template = "Invalid input: %(reason)s"


class NotFound(InspectorError):
    code = 404
    template = "Not found"


class NodeNotFound(NotFound):
    template = "Node %(node)s was not found in Ironic"


class IntrospectionNotFound(NotFound):
    """No introspection of the node is known (its data: :class:`DataNotFound`)."""

    template = (
        "Node %(node)s was not found in the inspector (it was never "
        "introspected, or its record was removed)"
    )


class DataNotFound(NotFound):
    """The node's introspection is known, its stored data is not."""

    template = "Introspection data for node %(node)s was not found"


class LookupFailed(NotFound):
    """No single running introspection matches the ramdisk's data."""

    template = "Could not find a node for attributes %(attributes)s"


class NoMatch(LookupFailed):
    """Nothing under introspection matches at all (discovery may enroll)."""


class BaremetalForbidden(InvalidInput):
    """Ironic's policy refused this service's user (HTTP 403)."""


class Conflict(InspectorError):
    code = 409
    template = "Conflict"


class NodeLocked(Conflict):
    template = "Node %(node)s is locked by another operation, please retry later"


class StaleState(Conflict):
    """A compare-and-swap state write lost against a newer write."""

    template = (
        "Introspection of node %(node)s was changed concurrently "
        "(expected version %(version)s)"
    )


class InvalidTransition(InspectorError):
    code = 400
    template = (
        "Invalid event: Can not transition from state '%(state)s' "
        "on event '%(event)s' (no defined transition)"
    )


class NotAcceptable(InspectorError):
    code = 406
    template = "Not acceptable"


class ServiceUnavailable(InspectorError):
    code = 503
    template = "Service temporarily unavailable: %(reason)s"
    public = "Service temporarily unavailable: a backend this request needs failed"


class NoConductor(ServiceUnavailable):
    """No conductor takes the work: none is live, enabled and reachable."""

    public = "Service temporarily unavailable: no conductor is available"


class DatabaseUnavailable(ServiceUnavailable):
    """The database cannot be reached (raised by :mod:`inspector.db`)."""

    template = "The database is unreachable: %(reason)s"
    public = "Service temporarily unavailable: the database is unreachable"

    @property
    def reason(self) -> str:
        """The cause in one line (the driver's message)."""
        return str(self.kwargs.get("reason", self.message))


class DatabaseRefused(DatabaseUnavailable):
    """The database server answered, but refused us: wrong credentials, a
    database that does not exist, no permission. Retrying will not help
    until the configuration or the server is fixed."""

    template = "The database refused the connection: %(reason)s"
    public = "Service temporarily unavailable: the database refused the connection"


class BaremetalError(InspectorError):
    """Ironic refused or failed a request after the client's retries."""

    code = 503
    template = "Ironic request failed: %(reason)s"
    public = "Service temporarily unavailable: a request to Ironic failed"


class ProcessingError(InspectorError):
    """Processing the ramdisk data failed; ends the introspection in error."""

    code = 400
    template = "%(reason)s"


class ConfigError(InspectorError):
    template = "Invalid configuration: %(reason)s"
    public = "Internal server error: the service's configuration is invalid"


class BmcError(InspectorError):
    """A BMC could not be asked, or its answer could not be read (an
    out-of-band introspection then ends in ``error`` with this message,
    which names the BMC and the cause)."""

    code = 502
    template = "%(bmc)s: %(reason)s"
    public = "A BMC could not be asked"
