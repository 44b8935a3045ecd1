"""Default access policy of the v1 API (oslo.policy rules).

The defaults keep upstream's split: the ramdisk's call (continue) and the
version documents are public; the ``reader`` role may read statuses, data
and rules; acting (start, abort, reapply, changing rules) needs ``admin`` or
``service`` (Ironic itself calls the inspector with the service role).
``etc/ironic-inspector/policy.yaml.sample`` is generated from these rules
with ``make genconfig``.
"""

from oslo_policy import policy

SCOPES = ["system", "project"]
"""Either scope of Keystone token may call the API; the roles decide."""

_BASE = [
    policy.RuleDefault(
        "is_admin", "role:admin", description="Full access to the inspector."
    ),
    policy.RuleDefault(
        "is_service", "role:service", description="Other services (Ironic)."
    ),
    policy.RuleDefault("is_reader", "role:reader", description="Read-only access."),
    policy.RuleDefault(
        "admin_or_service",
        "rule:is_admin or rule:is_service",
        description="What the operator and Ironic may do.",
    ),
    policy.RuleDefault(
        "reader_or_more",
        "rule:is_reader or rule:admin_or_service",
        description="Who may read statuses, data and rules.",
    ),
    policy.RuleDefault(
        "public_api", "@", description="Calls that need no credentials."
    ),
]


def _rule(
    name: str, check: str, description: str, operations: list[tuple[str, str]]
) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(
        name=name,
        check_str=check,
        description=description,
        operations=[{"path": path, "method": method} for path, method in operations],
        scope_types=SCOPES,
    )


_API = [
    _rule(
        "introspection",
        "rule:public_api",
        "See the API root, its versions and its OpenAPI description.",
        [("/", "GET"), ("/v1", "GET"), ("/v1/openapi.json", "GET")],
    ),
    _rule(
        "introspection:continue",
        "rule:public_api",
        "The ramdisk posts what it found.",
        [("/v1/continue", "POST")],
    ),
    _rule(
        "introspection:status",
        "rule:reader_or_more",
        "Read introspection statuses.",
        [("/v1/introspection", "GET"), ("/v1/introspection/{node_id}", "GET")],
    ),
    _rule(
        "introspection:start",
        "rule:admin_or_service",
        "Start an introspection.",
        [("/v1/introspection/{node_id}", "POST")],
    ),
    _rule(
        "introspection:abort",
        "rule:admin_or_service",
        "Abort a running introspection.",
        [("/v1/introspection/{node_id}/abort", "POST")],
    ),
    _rule(
        "introspection:data",
        "rule:reader_or_more",
        "Read the stored introspection data.",
        [
            ("/v1/introspection/{node_id}/data", "GET"),
            ("/v1/introspection/{node_id}/data/unprocessed", "GET"),
        ],
    ),
    _rule(
        "introspection:reapply",
        "rule:admin_or_service",
        "Process the stored data again.",
        [("/v1/introspection/{node_id}/data/unprocessed", "POST")],
    ),
    _rule(
        "introspection:rule:get",
        "rule:reader_or_more",
        "Read introspection rules.",
        [("/v1/rules", "GET"), ("/v1/rules/{rule_id}", "GET")],
    ),
    _rule(
        "introspection:rule:create",
        "rule:admin_or_service",
        "Create an introspection rule.",
        [("/v1/rules", "POST")],
    ),
    _rule(
        "introspection:rule:delete",
        "rule:admin_or_service",
        "Delete introspection rules.",
        [("/v1/rules", "DELETE"), ("/v1/rules/{rule_id}", "DELETE")],
    ),
    _rule(
        "introspection:conductor:get",
        "rule:reader_or_more",
        "See the conductors, whether they are alive and enabled (1.19).",
        [("/v1/conductors", "GET"), ("/v1/conductors/{host}", "GET")],
    ),
    _rule(
        "introspection:conductor:update",
        "rule:is_admin",
        "Enable or disable a conductor (1.19).",
        [("/v1/conductors/{host}", "PATCH")],
    ),
    _rule(
        "introspection:pxe_filter:get",
        "rule:reader_or_more",
        "See the PXE filters: what each allows and denies, healthy or not (1.21).",
        [("/v1/pxe-filters", "GET")],
    ),
    _rule(
        "introspection:history",
        "rule:reader_or_more",
        "Read a node's hardware history and changes (1.23).",
        [
            ("/v1/introspection/{node_id}/history", "GET"),
            ("/v1/introspection/{node_id}/changes", "GET"),
        ],
    ),
    _rule(
        "introspection:inventory:get",
        "rule:reader_or_more",
        "Read the fleet view: inventory, summary, outliers, cabling (1.23) "
        "and the /fleet page.",
        [
            ("/v1/inventory", "GET"),
            ("/v1/inventory/summary", "GET"),
            ("/v1/inventory/outliers", "GET"),
            ("/v1/inventory/cabling", "GET"),
            ("/fleet", "GET"),
            ("/fleet/nodes", "GET"),
            ("/fleet/nodes/{node_id}", "GET"),
            ("/fleet/outliers", "GET"),
            ("/fleet/cabling", "GET"),
            ("/fleet/changes", "GET"),
        ],
    ),
    _rule(
        "introspection:ironic_push",
        "rule:admin_or_service",
        "Ironic's inspection hook pushes an inspection Ironic is running "
        "(Ironic's service user has the service role); under noauth refused "
        "unless [ironic_push]allow_unauthenticated.",
        [("/v1/ironic/inspections", "POST")],
    ),
]


def list_rules() -> list[policy.RuleDefault]:
    """Entry point for oslopolicy-sample-generator and the enforcer."""
    return _BASE + _API
