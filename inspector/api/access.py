"""What the caller may do: oslo.policy rules checked for every API endpoint.

The rules and their defaults live in :mod:`inspector.api.policies`; operators
override them in ``policy.yaml`` (``[oslo_policy]policy_file``). The caller
is read from the identity the authentication layer left in the WSGI
environment (:mod:`inspector.api.auth`).
"""

import logging
import threading
import time
from typing import Any

from oslo_config import cfg
from oslo_context import context
from oslo_policy import policy

from inspector import exceptions
from inspector.api import policies, request_context
from inspector.api.auth import IDENTITY_HEADERS

LOG = logging.getLogger(__name__)

ENDPOINT_RULES = {
    "root.get_versions": "introspection",
    "root.get_resources": "introspection",
    "root.get_openapi": "introspection",
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
    "rules.test_rules": "introspection:rule:create",
    "conductors.list_conductors": "introspection:conductor:get",
    "conductors.get_conductor": "introspection:conductor:get",
    "conductors.update_conductor": "introspection:conductor:update",
    "pxe_filters.list_pxe_filters": "introspection:pxe_filter:get",
    "history.get_history": "introspection:history",
    "history.get_changes": "introspection:history",
    "inventory.list_inventory": "introspection:inventory:get",
    "inventory.get_summary": "introspection:inventory:get",
    "inventory.get_outliers": "introspection:inventory:get",
    "inventory.get_cabling": "introspection:inventory:get",
    "fleet.get_fleet": "introspection:inventory:get",
    "fleet.get_fleet_node": "introspection:inventory:get",
    "fleet.list_fleet_nodes": "introspection:inventory:get",
    "fleet.list_fleet_outliers": "introspection:inventory:get",
    "fleet.list_fleet_cabling": "introspection:inventory:get",
    "fleet.list_fleet_changes": "introspection:inventory:get",
    "ironic_push.post_inspection": "introspection:ironic_push",
}
"""Flask endpoint -> policy rule. A test checks that every route has one."""


class Forbidden(exceptions.InspectorError):
    code = 403
    template = "Access to %(rule)s is denied for this user (roles: %(roles)s)"


def _context(environ: dict[str, Any]) -> context.RequestContext:
    """The request's context; built here only for a caller outside the
    application's layers, and then without replacing the thread's."""
    found = request_context.current(environ)
    if found is not None:
        return found
    return context.RequestContext.from_environ(environ, overwrite=False)


class _Decisions:
    """One enforcer and its remembered answers.

    With no target, a decision depends only on the rule and the caller's
    identity headers, so it is remembered (a status poll then costs a dict
    lookup, not a policy evaluation). The remembered answers are dropped
    when the policy file's rules change (checked once a second) and when
    there are too many of them.
    """

    REFRESH_SECONDS = 1.0
    MAX_ENTRIES = 10000

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.enforcer = policy.Enforcer(conf)
        self.enforcer.register_defaults(policies.list_rules())
        self.enforcer.load_rules()
        self._guard = threading.Lock()
        self._answers: dict[tuple[Any, ...], bool] = {}
        self._fingerprint = self._rules_fingerprint()
        self._checked_at = time.monotonic()

    def _rules_fingerprint(self) -> int:
        return hash(tuple(sorted((k, str(v)) for k, v in self.enforcer.rules.items())))

    def _refresh(self) -> None:
        now = time.monotonic()
        if now - self._checked_at < self.REFRESH_SECONDS:
            return
        with self._guard:
            self._checked_at = now
            self.enforcer.load_rules()
            fingerprint = self._rules_fingerprint()
            full = len(self._answers) > self.MAX_ENTRIES
            if fingerprint != self._fingerprint or full:
                self._answers = {}
                self._fingerprint = fingerprint

    def decide(self, rule: str, environ: dict[str, Any]) -> tuple[bool, Any]:
        """(allowed, the caller's context or None when remembered)."""
        self._refresh()
        key = (rule, *map(environ.get, IDENTITY_HEADERS))
        answer = self._answers.get(key)
        if answer is not None:
            return answer, None
        ctx = _context(environ)
        try:
            answer = bool(self.enforcer.enforce(rule, {}, ctx, do_raise=False))
        except policy.InvalidScope:
            answer = False  # e.g. a domain-scoped token
        self._answers[key] = answer
        return answer, ctx


_guard = threading.Lock()
_enforcers: dict[int, _Decisions] = {}


def _decisions(conf: cfg.ConfigOpts) -> _Decisions:
    found = _enforcers.get(id(conf))  # every request: no lock to find it
    if found is not None:
        return found
    with _guard:
        found = _enforcers.get(id(conf))
        if found is None:
            found = _enforcers[id(conf)] = _Decisions(conf)
        return found


def enforcer(conf: cfg.ConfigOpts) -> policy.Enforcer:
    """The process's enforcer for ``conf``, with the default rules."""
    return _decisions(conf).enforcer


def check(conf: cfg.ConfigOpts, rule: str, environ: dict[str, Any]) -> None:
    """Raise :class:`Forbidden` unless the caller may use ``rule``."""
    permitted, ctx = _decisions(conf).decide(rule, environ)
    if not permitted:
        ctx = ctx or _context(environ)
        roles = ", ".join(ctx.roles) or "none"
        LOG.info("Denied %s to user %s (roles: %s)", rule, ctx.user_id, roles)
        raise Forbidden(rule=rule, roles=roles)


def allowed(conf: cfg.ConfigOpts, rule: str, environ: dict[str, Any]) -> bool:
    return _decisions(conf).decide(rule, environ)[0]
