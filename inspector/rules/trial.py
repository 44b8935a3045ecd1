"""Trying rules before they run (``POST /v1/rules/test``,
``ironic-inspector-manage rules test``).

The rules run as a processing would run them, on copies of the data and
the node, in a trial :class:`~inspector.rules.actions.RuleRun`: nothing leaves
the process (no Ironic write, no database write, no api-call; the answer
says which call would be made). The answer lists, rule by rule in the
order they run, whether it was in scope, each condition with the values
its field found and whether it held, each action that would run with its
values resolved (once per loop item), and then what the node would get in
Ironic: the node patches, traits, and port changes. A rule that cannot run
on this node is reported with its error, where the processing would end
in error and write nothing. A sensitive rule's values stay hidden (its
conditions' values, its actions' parameters, its node and port patches,
and the fields it set in the body of a port this processing creates).
"""

import copy
from typing import Any

from inspector.hooks.base import Data, NodeContext
from inspector.rules import masking, runner


def run(
    rules: list[dict[str, Any]],
    data: Data,
    node: Data,
    ports: list[Data],
    settings: runner.RunSettings | None = None,
) -> dict[str, Any]:
    """The trial's answer for ``rules`` (validated or stored rule dicts)."""
    data = copy.deepcopy(data)
    by_mac = {
        str(p["address"]).lower(): copy.deepcopy(p) for p in ports if p.get("address")
    }
    ctx = NodeContext(
        uuid=str(node.get("uuid") or ""), node=copy.deepcopy(node), ports=by_mac
    )
    return answer(rules, data, ctx, settings)


def answer(
    rules: list[dict[str, Any]],
    data: Data,
    ctx: NodeContext,
    settings: runner.RunSettings | None = None,
) -> dict[str, Any]:
    """The trial's answer for ``rules`` run on ``ctx`` (a copy: it changes)."""
    trace = runner.Trace()
    applied = runner.compile_rules(rules).apply(data, ctx, settings, trace)
    error = next((r["error"] for r in trace.rules if r["error"]), None)
    patches = [dict(p) for p in ctx.node_patches]
    port_patches = {u: [dict(p) for p in ps] for u, ps in ctx.port_patches.items()}
    created = copy.deepcopy(ctx.ports_to_create)
    hidden_fields: list[Any] = [{} for _ in created]
    for entry in trace.rules:
        start, end = entry.pop("node_patches", (0, 0))
        by_port = entry.pop("port_patches", {})
        before = entry.pop("ports_to_create", None)
        if not entry["sensitive"]:
            continue
        if before is not None:
            for index, body in enumerate(ctx.ports_to_create):
                earlier = before[index] if index < len(before) else {}
                _changed(body, earlier, hidden_fields[index])
        hidden = patches[start:end] + [
            patch
            for uuid, (first, last) in by_port.items()
            for patch in port_patches[uuid][first:last]
        ]
        for patch in hidden:
            if "value" in patch:
                patch["value"] = masking.HIDDEN
    created = [
        _hide(body, hide) for body, hide in zip(created, hidden_fields, strict=True)
    ]
    return {
        "rules": trace.rules,
        "applied": applied,
        "error": error,
        "would_write": error is None,
        "changes": {
            "node_patches": patches,
            "traits_to_add": ctx.traits_to_add,
            "traits_to_remove": ctx.traits_to_remove,
            "ports_to_create": created,
            "ports_to_delete": ctx.ports_to_delete,
            "port_patches": port_patches,
        },
    }


def _changed(after: Any, before: Any, hidden: dict[str, Any]) -> None:
    """Mark in ``hidden`` (a tree of keys) the fields of the port body
    ``after`` that differ from ``before``."""
    for key, value in after.items():
        earlier = before.get(key) if isinstance(before, dict) else None
        if isinstance(value, dict) and isinstance(earlier, dict):
            if hidden.get(key) is not True:  # not already hidden whole
                _changed(value, earlier, hidden.setdefault(key, {}))
        elif earlier != value or (isinstance(before, dict) and key not in before):
            hidden[key] = True


def _hide(body: Any, hidden: dict[str, Any]) -> Any:
    """``body`` with the fields ``hidden`` marks masked."""
    if not hidden:
        return body
    out = dict(body)
    for key, mark in hidden.items():
        if key not in out:
            continue
        out[key] = masking.hidden(out[key]) if mark is True else _hide(out[key], mark)
    return out
