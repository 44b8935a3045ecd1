"""API microversions: what each version adds (one table), negotiation from
request headers, response headers."""

import dataclasses
import re

from inspector import exceptions

Version = tuple[int, int]

MINIMUM: Version = (1, 0)


@dataclasses.dataclass(frozen=True)
class Feature:
    """One versioned thing of the API, declared once."""

    name: str
    """A resource's name in ``GET /v1``, a field's name, or a behaviour's."""
    kind: str
    """``resource`` (a path under /v1, 404 below its version), ``field`` (of
    an introspection status) or ``behaviour``."""
    since: Version
    path: str = ""
    """A resource's path prefix."""


FEATURES = (
    # ironic-inspector's (1.0-1.18) answer at every version, as upstream's
    # did: its stock client asks for 1.0 and still uses them all
    Feature("introspection", "resource", MINIMUM, "/v1/introspection"),
    Feature("continue", "resource", MINIMUM, "/v1/continue"),
    Feature("rules", "resource", MINIMUM, "/v1/rules"),
    Feature("rule-created-201", "behaviour", (1, 6)),
    # ours: each answers only from its version
    Feature("conductors", "resource", (1, 19), "/v1/conductors"),
    Feature("pending_ironic_sync", "field", (1, 20)),
    Feature("pending_ironic_sync_reason", "field", (1, 20)),
    Feature("pxe-filters", "resource", (1, 21), "/v1/pxe-filters"),
    Feature("owner", "field", (1, 22)),
    Feature("owner_since", "field", (1, 22)),
    # a node's hardware history (api/history.py): sub-resources of an
    # introspection, so behaviours its views check, not blueprints
    Feature("introspection-history", "behaviour", (1, 23)),
    Feature("introspection-changes", "behaviour", (1, 23)),
    Feature("inventory", "resource", (1, 23), "/v1/inventory"),
    Feature("rule-language", "behaviour", (1, 24)),
    Feature("rules-test", "behaviour", (1, 24)),
    # issue 34 item 2: [rules]built_in_rules listed with built_in: true
    Feature("rules-built-in", "behaviour", (1, 25)),
    # out-of-band inspection (issue 33): POST /v1/introspection/<node>?mode=
    Feature("introspection-mode", "behaviour", (1, 26)),
    # how the run learns the hardware: in-band, out-of-band, or auto until
    # its start step decides
    Feature("mode", "field", (1, 26)),
)
"""Every versioned resource, field and behaviour: ``GET /v1``, the routing,
the status body, rule creation and the OpenAPI document read this table."""

RESOURCES = tuple(f for f in FEATURES if f.kind == "resource")

MAXIMUM: Version = max(f.since for f in FEATURES)
"""The newest version: that of the newest feature."""


def since(name: str) -> Version:
    """The version that added feature ``name``.

    :raises KeyError: no such feature (a typo must not pass silently).
    """
    for feature in FEATURES:
        if feature.name == name:
            return feature.since
    raise KeyError(name)


def resources(version: Version) -> list[Feature]:
    """The resources that exist at ``version``, in the table's order."""
    return [f for f in RESOURCES if f.since <= version]


def resource_at(path: str) -> Feature | None:
    """The resource a request path belongs to."""
    for feature in RESOURCES:
        if path == feature.path or path.startswith(feature.path + "/"):
            return feature
    return None


def require(feature: Feature, version: Version, path: str) -> None:
    """:raises NotFound: ``feature`` does not exist at ``version``."""
    if version < feature.since:
        raise exceptions.NotFound(
            f"No resource at {path} in API version {format_version(version)}: "
            f"{feature.name} needs version {format_version(feature.since)} or newer"
        )


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
