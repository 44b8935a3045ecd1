"""store_data = directory, the rebuild from it, and rules export/import."""

import json
import pathlib
import subprocess

from oslo_config import cfg

from inspector import states
from inspector.conductor import reconcile
from inspector.db import introspections
from tests.functional.conftest import (
    Service,
    database_conf,
    introspect,
    run_script,
)


def test_directory_store_layout_and_rebuild(
    service: Service, conf: cfg.ConfigOpts, tmp_path: pathlib.Path
) -> None:
    conf.set_override("store_data", "directory", group="processing")
    conf.set_override("store_data_dir", str(tmp_path / "data"), group="processing")
    status = introspect(service)
    assert status["state"] == states.FINISHED, status
    uuid = status["uuid"]
    # introspection.json is the record as finished, written after the state
    # says so and before the conductor lets go of the node
    lock = service.rt.locks.get_lock(uuid)
    assert lock.acquire(timeout=10)
    lock.release()
    folder = tmp_path / "data" / uuid
    assert sorted(p.name for p in folder.iterdir()) == [
        "introspection.json",
        "processed.json",
        "unprocessed.json",
    ]
    saved = json.loads((folder / "introspection.json").read_text())
    assert saved["state"] == "finished" and saved["uuid"] == uuid
    processed = service.client.get(f"/v1/introspection/{uuid}/data").get_json()
    assert processed == json.loads((folder / "processed.json").read_text())
    raw = service.client.get(f"/v1/introspection/{uuid}/data/unprocessed").get_json()
    assert raw["inventory"]
    # reapply reads the data back from the directory
    assert (
        service.client.post(f"/v1/introspection/{uuid}/data/unprocessed").status_code
        == 202
    )
    assert service.wait_for(uuid, states.FINISHED)["state"] == states.FINISHED
    # the reapply's introspection.json is written once the state says so
    assert lock.acquire(timeout=10)
    lock.release()
    status = service.client.get(f"/v1/introspection/{uuid}").get_json()

    # the database loses the record: the rebuild brings it back
    introspections.delete(service.rt.db, uuid)
    assert service.client.get(f"/v1/introspection/{uuid}").status_code == 404
    dry = reconcile.sync(service.rt, rebuild=True, dry_run=True, drift=False)
    assert (uuid, "rebuild", "would do") in {
        (f.node, f.kind, f.action) for f in dry.findings
    }
    report = reconcile.sync(service.rt, rebuild=True, drift=False)
    assert (uuid, "rebuild", "done") in {
        (f.node, f.kind, f.action) for f in report.findings
    }
    assert any("introspection rules" in note for note in report.notes)
    rebuilt = service.client.get(f"/v1/introspection/{uuid}").get_json()
    assert {k: rebuilt[k] for k in ("state", "finished", "finished_at", "error")} == {
        k: status[k] for k in ("state", "finished", "finished_at", "error")
    }
    assert service.client.get(f"/v1/introspection/{uuid}/data").get_json() == processed


def test_rebuild_needs_the_directory_store(service: Service) -> None:
    import pytest

    from inspector import exceptions

    with pytest.raises(exceptions.InvalidInput, match="store_data = directory"):
        reconcile.sync(service.rt, rebuild=True)


def _manage(
    tmp_path: pathlib.Path, service: Service, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return run_script(
        tmp_path,
        "ironic-inspector-manage",
        database_conf(service),
        "rules",
        *args,
        stdin=stdin,
    )


def test_rules_export_and_import(service: Service, tmp_path: pathlib.Path) -> None:
    service.client.delete("/v1/rules")
    for n in range(2):
        service.client.post(
            "/v1/rules",
            json={
                "description": f"rule {n}",
                "actions": [{"action": "add-trait", "name": f"CUSTOM_{n}"}],
            },
        )
    exported = _manage(tmp_path, service, "export")
    assert exported.returncode == 0, exported.stderr
    rules = json.loads(exported.stdout)
    assert [r["description"] for r in rules] == ["rule 0", "rule 1"]
    service.client.delete("/v1/rules")
    imported = _manage(tmp_path, service, "import", "-", stdin=exported.stdout)
    assert imported.returncode == 0 and "Imported 2 rules" in imported.stdout
    again = _manage(tmp_path, service, "import", "-", stdin=exported.stdout)
    assert "0 rules; 2 already existed" in again.stdout
    listed = service.client.get("/v1/rules").get_json()["rules"]
    assert sorted(r["uuid"] for r in listed) == sorted(r["uuid"] for r in rules)
    bad = _manage(
        tmp_path,
        service,
        "import",
        "-",
        stdin=json.dumps(
            [rules[0] | {"uuid": None}, {"actions": [{"action": "explode"}]}]
        ),
    )
    assert bad.returncode == 2, bad.stderr
    assert "-: rule 1: actions[0].action: unknown action 'explode'" in bad.stderr
    assert len(service.client.get("/v1/rules").get_json()["rules"]) == 2  # none added
    service.client.delete("/v1/rules")
