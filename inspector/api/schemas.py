"""The request bodies and query parameters of the v1 API, each declared
once: the views validate with these declarations and the OpenAPI document
(:mod:`inspector.api.openapi`) shows them, so the two cannot disagree.

Declared elsewhere and read from there by both: the ramdisk's payload
(:data:`inspector.api.payload.SCHEMA`, compiled by fastjsonschema for the
hot path) and a rule (:data:`inspector.rules.validation.SCHEMA`, whose
plugins the API loads only when a rule is posted).
"""

import dataclasses
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from inspector import exceptions, states
from inspector.fleet import queries

if TYPE_CHECKING:
    import jsonschema


class Body:
    """A JSON object a request carries: its JSON Schema (draft 2020-12, as
    OpenAPI 3.1 reads it) and the message of each way it can fail.

    ``messages`` are judged in their order and the first that fails is the
    answer. A key is a property of the schema (its value is wrong, or it is
    missing), ``<property>[]`` (an item of it; ``{index}``), ``unknown`` (a
    field the schema does not name; ``{field}``, and ``{allowed}``, the
    ones it names) or a keyword of the schema's root (``then``).
    """

    def __init__(self, schema: dict[str, Any], messages: dict[str, str]) -> None:
        self.schema = schema
        self.messages = messages
        self._order = {key: index for index, key in enumerate(messages)}
        self._compiled: jsonschema.protocols.Validator | None = None
        self._guard = threading.Lock()

    def validator(self) -> "jsonschema.protocols.Validator":
        """The schema compiled by jsonschema, once, on first use (so an API
        process that never receives this body never imports jsonschema)."""
        compiled = self._compiled
        if compiled is None:
            with self._guard:
                if self._compiled is None:
                    import jsonschema

                    jsonschema.Draft202012Validator.check_schema(self.schema)
                    self._compiled = jsonschema.Draft202012Validator(self.schema)
                compiled = self._compiled
        return compiled

    def check(self, body: Mapping[str, Any]) -> None:
        """:raises InvalidInput: the message of the first way ``body`` fails."""
        found = [
            (self._order.get(key, len(self._order)), index, str(error.message), key)
            for error in self.validator().iter_errors(body)
            for key, index in self._keys(error, body)
        ]
        if not found:
            return
        _order, index, fallback, key = min(found)
        template = self.messages.get(key)
        if template is None:  # a key without a message: a unit test catches it
            raise exceptions.InvalidInput(f"{key}: {fallback}")
        properties = self.schema.get("properties", {})
        field = min(set(body) - set(properties), default="")
        raise exceptions.InvalidInput(
            template.format(field=field, index=index, allowed=", ".join(properties))
        )

    def _keys(self, error: Any, body: Mapping[str, Any]) -> list[tuple[str, int]]:
        """The message keys (with an item's index) one error of jsonschema
        stands for."""
        where = list(error.relative_schema_path)
        top = str(where[0]) if where else ""
        if top == "additionalProperties":
            return [("unknown", 0)]
        if top == "required":
            return [(str(p), 0) for p in error.validator_value if p not in body]
        if top == "properties":
            name, path = str(where[1]), list(error.absolute_path)
            if len(path) > 1 and f"{name}[]" in self.messages:
                return [(f"{name}[]", int(path[1]))]
            return [(name, 0)]
        return [(top, 0)]


@dataclasses.dataclass(frozen=True)
class Query:
    """A query parameter: its name, the schema of its value and what it
    means."""

    name: str
    schema: dict[str, Any]
    description: str

    def parameter(self) -> dict[str, Any]:
        """As the OpenAPI document lists it."""
        return {
            "name": self.name,
            "in": "query",
            "required": False,
            "schema": self.schema,
            "description": self.description,
        }


# ---- bodies

REASON_MAX = 255
"""Longest ``disabled_reason`` of a conductor."""

CONDUCTOR_PATCH = Body(
    {
        "type": "object",
        "properties": {
            "enabled": {"type": "boolean"},
            "disabled_reason": {"type": ["string", "null"], "maxLength": REASON_MAX},
        },
        "required": ["enabled"],
        "additionalProperties": False,
        # a reason says why a conductor is disabled
        "if": {"properties": {"enabled": {"const": True}}},
        "then": {"properties": {"disabled_reason": {"maxLength": 0}}},
    },
    {
        "unknown": "Unknown field {field!r}: only enabled and disabled_reason "
        "can be changed",
        "enabled": "enabled is required and must be true or false",
        "disabled_reason": "disabled_reason must be a string of at most "
        f"{REASON_MAX} characters",
        "then": "disabled_reason is only for enabled = false",
    },
)
"""PATCH /v1/conductors/<host> (1.19)."""

RULE_TEST = Body(
    {
        "type": "object",
        "properties": {
            "node_uuid": {
                "type": ["string", "null"],
                "minLength": 1,
                "description": "a node whose stored data, node and ports the "
                "rules run on (unless given here)",
            },
            "data": {"type": ["object", "null"]},
            "node": {"type": ["object", "null"]},
            "ports": {"type": ["array", "null"], "items": {"type": "object"}},
            "rules": {
                "type": ["array", "null"],
                "minItems": 1,
                "items": {"type": ["string", "object"]},
                "description": "rule UUIDs and new rule bodies (default: every rule)",
            },
        },
        "additionalProperties": False,
        # the data is posted, or read from a node's
        "if": {"properties": {"node_uuid": {"type": "null"}}},
        "then": {"required": ["data"], "properties": {"data": {"type": "object"}}},
    },
    {
        "unknown": "{field}: unknown field; allowed: {allowed}",
        "data": "data: must be a JSON object",
        "node": "node: must be a JSON object",
        "ports": "ports: must be a list of port objects",
        "node_uuid": "node_uuid: must be a node's UUID or name",
        "then": "data: post the introspection data, or give node_uuid to use "
        "the node's stored data",
        "rules": "rules: must be a non-empty list of rule UUIDs or rule bodies",
        "rules[]": "rules[{index}]: must be a rule UUID or a rule body",
    },
)
"""POST /v1/rules/test (1.24): the node and data to try the rules on."""

NAME_MAX = 255
"""Longest node name and inspect interface name a push may carry."""

IRONIC_PUSH = Body(
    {
        "type": "object",
        "properties": {
            "node_uuid": {
                "type": "string",
                "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                "[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
            },
            "node_name": {"type": ["string", "null"], "maxLength": NAME_MAX},
            "inspect_interface": {"type": ["string", "null"], "maxLength": NAME_MAX},
            "inspection_started_at": {
                "type": "string",
                "minLength": 1,
                "maxLength": 64,
            },
            "inventory": {"type": "object"},
            "plugin_data": {"type": ["object", "null"]},
            "logs": {"type": ["string", "null"]},
        },
        "required": ["node_uuid", "inspection_started_at", "inventory"],
        # a newer hook may send more: what this service does not read is
        # ignored, not refused (a refusal drops the push for good)
    },
    {
        "node_uuid": "node_uuid: must be the UUID of an Ironic node",
        "inspection_started_at": "inspection_started_at: must be the start "
        "of the node's inspection as Ironic shows it (ISO 8601)",
        "inventory": "inventory: must be the ramdisk's inventory, a JSON object",
        "plugin_data": "plugin_data: must be a JSON object",
        "logs": "logs: must be the ramdisk's logs as a base64 string",
        "node_name": f"node_name: must be a string of at most {NAME_MAX} characters",
        "inspect_interface": "inspect_interface: must be a string of at most "
        f"{NAME_MAX} characters",
    },
)
"""POST /v1/ironic/inspections: the push of Ironic's inspection hook."""

BODIES = {
    "CONDUCTOR_PATCH": CONDUCTOR_PATCH,
    "RULE_TEST": RULE_TEST,
    "IRONIC_PUSH": IRONIC_PUSH,
}
"""Every :class:`Body` of this module, for the tests."""

# ---- query parameters

LIMIT = Query(
    "limit",
    {"type": "integer", "minimum": 0},
    "0 to api_max_limit; 0 or absent: api_max_limit",
)
"""A page's size (:func:`inspector.arguments.limit`)."""

STATE = Query(
    "state", {"type": "string"}, "comma-separated states: " + ", ".join(states.ALL)
)
MANAGE_BOOT = Query("manage_boot", {"type": "string"}, "true or false")
MODE = Query(
    "mode",
    {"type": "string", "enum": list(states.MODES)},
    "from 1.26: how the hardware is learnt (doc/redfish.md)",
)
FIELDS = Query("fields", {"type": "string"}, "comma-separated facts (default: all)")
GROUP_BY = Query(
    "group_by",
    {"type": "string", "enum": ["uuid", *queries.FACTS], "default": "product"},
    "the fact to count nodes by",
)


def _marker(what: str) -> Query:
    return Query("marker", {"type": "string"}, f"UUID of the last {what} seen")


INTROSPECTION_LIST = (LIMIT, _marker("item"), STATE)
"""GET /v1/introspection."""
START = (MANAGE_BOOT, MODE)
"""POST /v1/introspection/<node>."""
RUN_PAGE = (LIMIT, _marker("run"))
"""GET /v1/introspection/<node>/history and .../changes (1.23)."""
INVENTORY_LIST = (FIELDS, LIMIT, _marker("node"))
"""GET /v1/inventory (1.23); any other parameter is a filter on a fact."""
INVENTORY_SUMMARY = (GROUP_BY,)
"""GET /v1/inventory/summary (1.23); any other parameter is a filter."""
