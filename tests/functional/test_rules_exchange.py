"""ironic-inspector-manage rules export/import --format ironic."""

import json
import pathlib
import subprocess
from typing import Any

import pytest

from tests.functional.conftest import Service, database_conf, run_script

RULE = {
    "uuid": "0b7c1e52-4a43-4c55-9a55-2f7d2b1c9e01",
    "description": "vendor",
    "priority": 20,
    "conditions": [
        {"op": "!eq", "field": "inventory.system_vendor.manufacturer", "value": "QEMU"}
    ],
    "actions": [
        {"action": "set-attribute", "path": "/extra/vendor", "value": "known"},
        {"action": "add-trait", "name": "CUSTOM_REAL"},
    ],
}
IRONIC_YAML = """
- uuid: 1c8d2f63-5b54-4d66-8b66-3e8e3c2d0f12
  description: from Ironic
  conditions:
    - op: gt
      args: {values: ["{inventory[memory][physical_mb]}", 1024]}
  actions:
    - op: set-capability
      args: [big, "true"]
"""


@pytest.fixture(autouse=True)
def _no_rules(service: Service) -> Any:
    service.client.delete("/v1/rules")
    yield
    service.client.delete("/v1/rules")


def _manage(
    tmp_path: pathlib.Path, service: Service, *args: str
) -> subprocess.CompletedProcess[str]:
    return run_script(
        tmp_path, "ironic-inspector-manage", database_conf(service), "rules", *args
    )


def test_export_import_ironic(service: Service, tmp_path: pathlib.Path) -> None:
    assert service.client.post("/v1/rules", json=RULE).status_code == 201
    out = tmp_path / "ironic.json"
    exported = _manage(
        tmp_path, service, "export", "--format", "ironic", "--output", str(out)
    )
    assert exported.returncode == 0, exported.stderr
    assert f"Exported 1 rules to {out}" in exported.stdout
    document = json.loads(out.read_text())
    assert document[0]["conditions"] == [
        {
            "op": "!eq",
            "args": {"values": ["{inventory[system_vendor][manufacturer]}", "QEMU"]},
        }
    ]
    assert document[0]["actions"][1] == {
        "op": "add-trait",
        "args": {"name": "CUSTOM_REAL"},
    }
    service.client.delete("/v1/rules")
    yaml_file = tmp_path / "built-in.yaml"
    yaml_file.write_text(IRONIC_YAML)
    dry = _manage(
        tmp_path, service, "import", "--format", "ironic", "--dry-run", str(yaml_file)
    )
    assert dry.returncode == 0, dry.stderr
    assert (
        "1c8d2f63-5b54-4d66-8b66-3e8e3c2d0f12 (from Ironic): would be created"
        in dry.stdout
    )
    assert service.client.get("/v1/rules").get_json()["rules"] == []  # nothing
    for path in (out, yaml_file):
        done = _manage(tmp_path, service, "import", "--format", "ironic", str(path))
        assert done.returncode == 0 and "Imported 1 rules" in done.stdout, done.stderr
    back = service.client.get(f"/v1/rules/{RULE['uuid']}").get_json()
    assert back["conditions"] == [
        {
            "op": "eq",
            "field": "inventory.system_vendor.manufacturer",
            "value": "QEMU",
            "multiple": "any",
            "invert": True,
        }
    ]
    assert back["actions"] == RULE["actions"]
    big = service.client.get(
        "/v1/rules/1c8d2f63-5b54-4d66-8b66-3e8e3c2d0f12"
    ).get_json()
    assert big["conditions"][0]["field"] == "inventory.memory.physical_mb"
    assert big["actions"] == [
        {"action": "set-capability", "name": "big", "value": "true"}
    ]


def test_untranslatable_refused_by_name(
    service: Service, tmp_path: pathlib.Path
) -> None:
    wild = {
        "description": "every NIC",
        "conditions": [
            {"op": "eq", "field": "inventory.interfaces[*].name", "value": "eth0"}
        ],
        "actions": [{"action": "add-trait", "name": "CUSTOM_ETH0"}],
    }
    created = service.client.post("/v1/rules", json=wild).get_json()
    refused = _manage(tmp_path, service, "export", "--format", "ironic")
    assert refused.returncode == 2
    assert (
        f"rule 0 ({created['uuid']}, every NIC): conditions[0].field" in refused.stderr
    )
    assert refused.stdout == ""  # nothing half-written
    api_call = tmp_path / "api-call.json"
    api_call.write_text(
        json.dumps(
            [
                {"actions": [{"op": "add-trait", "args": ["CUSTOM_A"]}]},
                {
                    "description": "hook",
                    "actions": [{"op": "api-call", "args": {"url": "http://x"}}],
                },
            ]
        )
    )
    bad = _manage(tmp_path, service, "import", "--format", "ironic", str(api_call))
    assert bad.returncode == 2
    assert "rule 1 (hook): actions[0]: api-call" in bad.stderr
    assert len(service.client.get("/v1/rules").get_json()["rules"]) == 1  # none added


def test_a_broken_import_names_the_file_the_rule_and_the_formats(
    service: Service, tmp_path: pathlib.Path
) -> None:
    """Ironic's rules read as ours, a file that is not JSON and a format
    that does not exist: each refusal says what to do."""
    ironic = tmp_path / "from-ironic.json"
    ironic.write_text(
        json.dumps(
            [
                {
                    "uuid": "2d9e3a74-6c65-4e77-9c77-4f9f4d3e1a23",
                    "description": "traits",
                    "actions": [{"op": "add-trait", "args": ["CUSTOM_A"]}],
                }
            ]
        )
    )
    refused = _manage(tmp_path, service, "import", str(ironic))
    assert refused.returncode == 2
    assert (
        f"{ironic}: rule 0 (2d9e3a74-6c65-4e77-9c77-4f9f4d3e1a23, traits): "
        "actions[0].action: " in refused.stderr
    )
    assert "try --format ironic; formats: inspector, ironic" in refused.stderr
    yaml_file = tmp_path / "built-in.yaml"
    yaml_file.write_text(IRONIC_YAML)
    refused = _manage(tmp_path, service, "import", str(yaml_file))
    assert refused.returncode == 2
    assert f"Cannot read {yaml_file}: " in refused.stderr
    assert "--format inspector reads JSON" in refused.stderr
    assert "formats: inspector, ironic" in refused.stderr
    refused = _manage(tmp_path, service, "import", "--format", "yaml", str(yaml_file))
    assert refused.returncode == 2
    assert "invalid choice: 'yaml' (choose from 'inspector', 'ironic')" in (
        refused.stderr
    )
    assert "Traceback" not in refused.stderr
    assert service.client.get("/v1/rules").get_json()["rules"] == []
