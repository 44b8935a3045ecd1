"""A sensitive rule as answers, exports and logs show it: its shape (the
operators, the actions, ``multiple``, ``invert``) with every value hidden.
"""

from typing import Any

HIDDEN = "***"
SHOWN = frozenset({"op", "action", "multiple", "invert"})
"""The keys of a condition or an action that stay readable."""


def hidden(value: Any) -> Any:
    """``value`` with every leaf replaced by :data:`HIDDEN`."""
    if isinstance(value, dict):
        return {k: hidden(v) for k, v in value.items()}
    if isinstance(value, list):
        return [hidden(v) for v in value]
    return HIDDEN


def _part(part: dict[str, Any]) -> dict[str, Any]:
    return {k: v if k in SHOWN else HIDDEN for k, v in part.items()}


def masked(rule: dict[str, Any]) -> dict[str, Any]:
    """``rule`` as shown: unchanged unless it is sensitive."""
    if not rule.get("sensitive"):
        return rule
    return {
        **rule,
        "conditions": [_part(c) for c in rule.get("conditions") or []],
        "actions": [_part(a) for a in rule.get("actions") or []],
    }


def is_masked(rule: dict[str, Any]) -> bool:
    """Whether ``rule`` is a sensitive rule as :func:`masked` showed it."""
    if not rule.get("sensitive"):
        return False
    parts = [*(rule.get("conditions") or []), *(rule.get("actions") or [])]
    return any(
        isinstance(part, dict)
        and any(v == HIDDEN for k, v in part.items() if k not in SHOWN)
        for part in parts
    )
