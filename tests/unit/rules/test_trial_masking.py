"""A trial hides what a sensitive rule set in the body of a port the
processing creates (as it hides its node and port patches)."""

from typing import Any

from inspector.hooks.base import NodeContext
from inspector.rules import trial, validation

MAC = "52:54:00:aa:bb:cc"


def _rule(sensitive: bool, value: str, path: str = "/extra/secret") -> dict[str, Any]:
    return validation.validate(
        {
            "sensitive": sensitive,
            "actions": [
                {
                    "action": "set-port-attribute",
                    "port_id": MAC,
                    "path": path,
                    "value": value,
                }
            ],
        }
    )


def test_port_to_create_fields_of_a_sensitive_rule_hidden() -> None:
    ctx = NodeContext(uuid="n", node={"properties": {}, "extra": {}}, ports={})
    ctx.ports_to_create.append({"address": MAC, "pxe_enabled": True, "extra": {"a": 1}})
    rules = [
        _rule(False, "shown", "/extra/open"),
        _rule(True, "s3cret"),
        _rule(True, "fabric-x", "/physical_network"),
    ]
    answer = trial.answer(rules, {"inventory": {}}, ctx)
    assert answer["error"] is None
    (body,) = answer["changes"]["ports_to_create"]
    assert body == {
        "address": MAC,
        "pxe_enabled": True,
        "extra": {"a": 1, "open": "shown", "secret": "***"},
        "physical_network": "***",
    }
    assert "s3cret" not in str(answer) and "fabric-x" not in str(answer)
