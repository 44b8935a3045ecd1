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
conditions' values, its actions' parameters, its node and port patches;
a port it creates or a change of a port this processing creates are not
told apart and show as they are).
"""

import copy
from typing import Any

from inspector.processing.base import Data, NodeContext
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
    trace = runner.Trace()
    applied = runner.compile_rules(rules).apply(data, ctx, settings, trace)
    error = next((r["error"] for r in trace.rules if r["error"]), None)
    patches = [dict(p) for p in ctx.node_patches]
    port_patches = {u: [dict(p) for p in ps] for u, ps in ctx.port_patches.items()}
    for entry in trace.rules:
        start, end = entry.pop("node_patches", (0, 0))
        by_port = entry.pop("port_patches", {})
        if not entry["sensitive"]:
            continue
        hidden = patches[start:end] + [
            patch
            for uuid, (first, last) in by_port.items()
            for patch in port_patches[uuid][first:last]
        ]
        for patch in hidden:
            if "value" in patch:
                patch["value"] = masking.HIDDEN
    return {
        "rules": trace.rules,
        "applied": applied,
        "error": error,
        "would_write": error is None,
        "changes": {
            "node_patches": patches,
            "traits_to_add": ctx.traits_to_add,
            "traits_to_remove": ctx.traits_to_remove,
            "ports_to_create": ctx.ports_to_create,
            "ports_to_delete": ctx.ports_to_delete,
            "port_patches": port_patches,
        },
    }
