"""The OpenAPI 3 description of the v1 API, served at GET /v1/openapi.json.

The operations are listed here, next to the routes; their bodies and query
parameters are the declarations the views validate with
(:mod:`inspector.api.schemas`, the ramdisk's payload, a rule). A test checks
that the routes and the document list the same operations, and the fuzzing
test drives the API from this document.
"""

import copy
from typing import Any

from inspector.api import payload, schemas, versions
from inspector.rules import validation

_ERROR = {"$ref": "#/components/schemas/Error"}
_NODE = {
    "name": "node_id",
    "in": "path",
    "required": True,
    "description": "Node UUID or Ironic node name",
    "schema": {"type": "string"},
}
_RULE = {
    "name": "rule_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "format": "uuid"},
}

_HOST = {"name": "host", "in": "path", "required": True, "schema": {"type": "string"}}


def _responses(success: str, *errors: int) -> dict[str, Any]:
    result: dict[str, Any] = {success: {"description": "Success"}}
    for code in (400, 401, 403, 406, *errors):
        result[str(code)] = {
            "description": "Error",
            "content": {"application/json": {"schema": _ERROR}},
        }
    return result


def _op(
    summary: str,
    success: str,
    *errors: int,
    params: list[Any] | None = None,
    body: dict[str, Any] | None = None,
    body_required: bool = True,
    public: bool = False,
    also: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One operation; ``also``: more successes (status -> description)."""
    responses = _responses(success, *errors)
    for status, description in (also or {}).items():
        responses[status] = {"description": description}
    op: dict[str, Any] = {"summary": summary, "responses": responses}
    if params:
        op["parameters"] = params
    if body is not None:
        op["requestBody"] = {
            "required": body_required,
            "content": {"application/json": {"schema": body}},
        }
    if public:
        op["security"] = []
    return op


def _params(*path: dict[str, Any], query: tuple[schemas.Query, ...] = ()) -> list[Any]:
    return [*path, *(q.parameter() for q in query)]


PATHS: dict[str, dict[str, Any]] = {
    "/": {"get": _op("API versions", "200", public=True)},
    "/v1": {"get": _op("Resources of v1", "200", public=True)},
    "/v1/openapi.json": {"get": _op("This document", "200", public=True)},
    "/v1/continue": {
        "post": _op(
            "Ramdisk data of a node under introspection",
            "200",
            404,
            409,
            413,
            body=payload.SCHEMA,
            public=True,
        )
    },
    "/v1/introspection": {
        "get": _op(
            "List introspection statuses, newest first",
            "200",
            404,
            params=_params(query=schemas.INTROSPECTION_LIST),
        )
    },
    "/v1/introspection/{node_id}": {
        "get": _op("Introspection status", "200", 404, params=[_NODE]),
        "post": _op(
            "Start introspection",
            "202",
            404,
            409,
            params=_params(_NODE, query=schemas.START),
        ),
    },
    "/v1/introspection/{node_id}/abort": {
        "post": _op("Abort introspection", "202", 404, 409, params=[_NODE])
    },
    "/v1/introspection/{node_id}/data": {
        "get": _op("Processed data", "200", 404, params=[_NODE])
    },
    "/v1/introspection/{node_id}/data/unprocessed": {
        "get": _op("Data as the ramdisk posted it", "200", 404, params=[_NODE]),
        "post": _op(
            "Process stored (or these) data again",
            "202",
            404,
            409,
            413,
            params=[_NODE],
            body=payload.SCHEMA,
            body_required=False,
        ),
    },
    "/v1/introspection/{node_id}/history": {
        "get": _op(
            "A node's runs, newest first, with how many components changed (from 1.23)",
            "200",
            404,
            params=_params(_NODE, query=schemas.RUN_PAGE),
        )
    },
    "/v1/introspection/{node_id}/changes": {
        "get": _op(
            "A node's hardware changes, newest run first (from 1.23)",
            "200",
            404,
            params=_params(_NODE, query=schemas.RUN_PAGE),
        )
    },
    "/v1/rules": {
        "get": _op("List rules (the built-in ones too from API 1.25)", "200"),
        "post": _op("Create a rule", "201", 409, 413, body=validation.SCHEMA),
        "delete": _op("Delete every stored rule", "204"),
    },
    "/v1/conductors": {"get": _op("List conductors", "200", 404)},
    "/v1/pxe-filters": {"get": _op("List PXE filters", "200", 404)},
    "/v1/inventory": {
        "get": _op(
            "The latest facts of every node, by UUID; other parameters are "
            "equality filters on facts",
            "200",
            404,
            params=_params(query=schemas.INVENTORY_LIST),
        )
    },
    "/v1/inventory/summary": {
        "get": _op(
            "How many nodes have each value of a fact",
            "200",
            404,
            params=_params(query=schemas.INVENTORY_SUMMARY),
        )
    },
    "/v1/inventory/outliers": {
        "get": _op("Nodes unlike most of their peers", "200", 404)
    },
    "/v1/inventory/cabling": {
        "get": _op("Switch links and cabling problems", "200", 404)
    },
    "/fleet": {"get": _op("The fleet page (HTML, not versioned)", "200")},
    "/fleet/nodes": {
        "get": _op(
            "The nodes' table: filters (product, search, any fact=value), "
            "sort and page (HTML)",
            "200",
            400,
        )
    },
    "/fleet/outliers": {
        "get": _op("Outliers grouped by product and fact (HTML)", "200", 400)
    },
    "/fleet/cabling": {"get": _op("Cabling problems by kind (HTML)", "200", 400)},
    "/fleet/changes": {
        "get": _op("The fleet's hardware changes, newest first (HTML)", "200", 400)
    },
    "/fleet/nodes/{node_id}": {
        "get": _op(
            "One node's page in the fleet view, by UUID or name (HTML)",
            "200",
            404,
            params=[_NODE],
        )
    },
    "/v1/conductors/{host}": {
        "get": _op("A conductor", "200", 404, params=[_HOST]),
        "patch": _op(
            "Enable or disable a conductor",
            "200",
            404,
            413,
            params=[_HOST],
            body=schemas.CONDUCTOR_PATCH.schema,
        ),
    },
    "/v1/rules/{rule_id}": {
        "get": _op("A rule", "200", 404, params=[_RULE]),
        "delete": _op(
            "Delete a rule (409: a built-in one)", "204", 404, 409, params=[_RULE]
        ),
    },
    "/v1/ironic/inspections": {
        "post": _op(
            "An inspection Ironic is running, pushed by its inspection hook "
            "(201 recorded, 200 recorded already; 403 under noauth, 404 a "
            "node Ironic does not have, 409 not the inspection Ironic shows)",
            "201",
            404,
            409,
            413,
            503,
            body=schemas.IRONIC_PUSH.schema,
            also={"200": "Recorded already (a duplicate)"},
        ),
    },
    "/v1/rules/test": {
        "post": _op(
            "Try rules, writing nothing (API 1.24; 404 before)",
            "200",
            404,
            413,
            body=schemas.RULE_TEST.schema,
        ),
    },
}


MIN_VERSION = "x-openstack-min-version"
"""An operation's first API version (from :data:`versions.FEATURES`), on
the operations of resources newer than 1.0."""


def _paths() -> dict[str, dict[str, Any]]:
    paths: dict[str, dict[str, Any]] = {}
    for path, operations in PATHS.items():
        resource = versions.resource_at(path.split("{")[0].rstrip("/"))
        if resource is None or resource.since == versions.MINIMUM:
            paths[path] = operations
            continue
        since = versions.format_version(resource.since)
        paths[path] = {
            method: {**op, MIN_VERSION: since} for method, op in operations.items()
        }
    return paths


def document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Bare metal introspection (ironic-inspector v1)",
            "version": versions.format_version(versions.MAXIMUM),
        },
        # a copy: a reader may change it, never the schemas the views use
        "paths": copy.deepcopy(_paths()),
        "x-openstack-versioned": [
            {"name": f.name, "kind": f.kind, "since": versions.format_version(f.since)}
            for f in versions.FEATURES
        ],
        "components": {
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {
                        "error": {
                            "type": "object",
                            "properties": {"message": {"type": "string"}},
                            "required": ["message"],
                        }
                    },
                    "required": ["error"],
                }
            },
            "securitySchemes": {
                "keystone": {"type": "apiKey", "in": "header", "name": "X-Auth-Token"},
                "basic": {"type": "http", "scheme": "basic"},
            },
        },
        "security": [{"keystone": []}, {"basic": []}],
    }
