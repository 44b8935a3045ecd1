"""API microversions: negotiation from request headers, response headers."""

import re

from inspector import exceptions

Version = tuple[int, int]

MINIMUM: Version = (1, 0)
MAXIMUM: Version = (1, 21)
"""1.19 (ours): /v1/conductors; 1.20: ``pending_ironic_sync`` in statuses;
1.21: /v1/pxe-filters.
Everything of 1.0-1.18 answers at any version, as upstream did; what is
new answers only from its version."""

HEADER = "X-OpenStack-Ironic-Inspector-API-Version"
MIN_HEADER = "X-OpenStack-Ironic-Inspector-API-Minimum-Version"
MAX_HEADER = "X-OpenStack-Ironic-Inspector-API-Maximum-Version"
STANDARD_HEADER = "OpenStack-API-Version"
SERVICE_TYPE = "baremetal-introspection"
VARY = f"{HEADER}, {STANDARD_HEADER}"
"""The Vary header of every response: the answer depends on the version."""

_VERSION_RE = re.compile(r"^(\d{1,4})\.(\d{1,4})$")


def format_version(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


def _parse_one(text: str) -> Version:
    text = text.strip()
    if text.lower() == "latest":
        return MAXIMUM
    match = _VERSION_RE.match(text)
    if not match:
        raise exceptions.InvalidInput(
            f"Malformed API version {text[:32]!r}: expected X.Y or 'latest'"
        )
    return int(match.group(1)), int(match.group(2))


def _from_standard_header(value: str) -> str | None:
    """The version for our service type in ``OpenStack-API-Version``."""
    for item in value.split(","):
        parts = item.strip().split(None, 1)
        if len(parts) == 2 and parts[0].lower() == SERVICE_TYPE:
            return parts[1]
    return None


def negotiate(legacy: str | None, standard: str | None) -> Version:
    """The version a request asks for; no header means the maximum.

    :raises InvalidInput: malformed header (400).
    :raises NotAcceptable: outside the supported range (406).
    """
    text = legacy
    if text is None and standard is not None:
        text = _from_standard_header(standard)
    if text is None:
        return MAXIMUM
    version = _parse_one(text)
    if not MINIMUM <= version <= MAXIMUM:
        raise exceptions.NotAcceptable(
            f"Unsupported API version {format_version(version)}, supported "
            f"range is {format_version(MINIMUM)} to {format_version(MAXIMUM)}"
        )
    return version


def response_headers(version: Version | None) -> dict[str, str]:
    headers = {
        MIN_HEADER: format_version(MINIMUM),
        MAX_HEADER: format_version(MAXIMUM),
    }
    if version is not None:
        headers[HEADER] = format_version(version)
        headers[STANDARD_HEADER] = f"{SERVICE_TYPE} {format_version(version)}"
    return headers
