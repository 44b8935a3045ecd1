"""Default access policy of the v1 API (oslo.policy rules).

The defaults keep upstream's split: the ramdisk's call
(continue) and the version documents are public; everything else needs the
``admin`` or the ``service`` role (Ironic itself calls the inspector with
the service role). ``etc/ironic-inspector/policy.yaml.sample`` is generated
from these rules with ``make genconfig``.
"""

from oslo_policy import policy

ADMIN_OR_SERVICE = "role:admin or role:service"
PUBLIC = "@"

_BASE = [
    policy.RuleDefault(
        "is_admin", "role:admin", description="Full access to the inspector."
    ),
    policy.RuleDefault(
        "is_service", "role:service", description="Other services (Ironic)."
    ),
    policy.RuleDefault(
        "admin_or_service",
        "rule:is_admin or rule:is_service",
        description="What the operator and Ironic may do.",
    ),
    policy.RuleDefault(
        "public_api", PUBLIC, description="Calls that need no credentials."
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
    )


_API = [
    _rule("introspection", "rule:public_api",
          "See the API root and its versions.", [("/", "GET"), ("/v1", "GET")]),
    _rule("introspection:continue", "rule:public_api",
          "The ramdisk posts what it found.", [("/v1/continue", "POST")]),
    _rule("introspection:status", "rule:admin_or_service",
          "Read introspection statuses.",
          [("/v1/introspection", "GET"), ("/v1/introspection/{node_id}", "GET")]),
    _rule("introspection:start", "rule:admin_or_service",
          "Start an introspection.", [("/v1/introspection/{node_id}", "POST")]),
    _rule("introspection:abort", "rule:admin_or_service",
          "Abort a running introspection.",
          [("/v1/introspection/{node_id}/abort", "POST")]),
    _rule("introspection:data", "rule:admin_or_service",
          "Read the stored introspection data.",
          [("/v1/introspection/{node_id}/data", "GET"),
           ("/v1/introspection/{node_id}/data/unprocessed", "GET")]),
    _rule("introspection:reapply", "rule:admin_or_service",
          "Process the stored data again.",
          [("/v1/introspection/{node_id}/data/unprocessed", "POST")]),
    _rule("introspection:rule:get", "rule:admin_or_service",
          "Read introspection rules.",
          [("/v1/rules", "GET"), ("/v1/rules/{rule_id}", "GET")]),
    _rule("introspection:rule:create", "rule:admin_or_service",
          "Create an introspection rule.", [("/v1/rules", "POST")]),
    _rule("introspection:rule:delete", "rule:admin_or_service",
          "Delete introspection rules.",
          [("/v1/rules", "DELETE"), ("/v1/rules/{rule_id}", "DELETE")]),
]


def list_rules() -> list[policy.RuleDefault]:
    """Entry point for oslopolicy-sample-generator and the enforcer."""
    return _BASE + _API
