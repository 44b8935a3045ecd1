"""What the caller may do: oslo.policy rules checked for every API endpoint.

The rules and their defaults live in :mod:`inspector.policies`; operators
override them in ``policy.yaml`` (``[oslo_policy]policy_file``). The caller
is read from the identity the authentication layer left in the WSGI
environment (:mod:`inspector.api.auth`).
"""

import logging
import threading
from typing import Any

from oslo_config import cfg
from oslo_context import context
from oslo_policy import policy

from inspector import exceptions, policies

LOG = logging.getLogger(__name__)

ENDPOINT_RULES = {
    "root.get_versions": "introspection",
    "root.get_resources": "introspection",
    "ramdisk.post_continue": "introspection:continue",
    "introspection.start": "introspection:start",
    "introspection.get_status": "introspection:status",
    "introspection.list_statuses": "introspection:status",
    "introspection.abort": "introspection:abort",
    "introspection.get_data": "introspection:data",
    "introspection.get_unprocessed_data": "introspection:data",
    "introspection.reapply": "introspection:reapply",
    "rules.list_rules": "introspection:rule:get",
    "rules.get_rule": "introspection:rule:get",
    "rules.create_rule": "introspection:rule:create",
    "rules.delete_rule": "introspection:rule:delete",
    "rules.delete_rules": "introspection:rule:delete",
}
"""Flask endpoint -> policy rule. A test checks that every route has one."""


class Forbidden(exceptions.InspectorError):
    code = 403
    template = "Access to %(rule)s is denied for this user (roles: %(roles)s)"


_guard = threading.Lock()
_enforcers: dict[int, policy.Enforcer] = {}


def enforcer(conf: cfg.ConfigOpts) -> policy.Enforcer:
    """The process's enforcer for ``conf``, with the default rules."""
    with _guard:
        found = _enforcers.get(id(conf))
        if found is None:
            found = policy.Enforcer(conf)
            found.register_defaults(policies.list_rules())
            found.load_rules()
            _enforcers[id(conf)] = found
        return found


def check(conf: cfg.ConfigOpts, rule: str, environ: dict[str, Any]) -> None:
    """Raise :class:`Forbidden` unless the caller may use ``rule``."""
    ctx = context.RequestContext.from_environ(environ)
    try:
        permitted = enforcer(conf).enforce(rule, {}, ctx, do_raise=False)
    except policy.InvalidScope:
        permitted = False  # e.g. a domain-scoped token
    if not permitted:
        roles = ", ".join(ctx.roles) or "none"
        LOG.info("Denied %s to user %s (roles: %s)", rule, ctx.user_id, roles)
        raise Forbidden(rule=rule, roles=roles)


def allowed(conf: cfg.ConfigOpts, rule: str, environ: dict[str, Any]) -> bool:
    try:
        check(conf, rule, environ)
    except Forbidden:
        return False
    return True
