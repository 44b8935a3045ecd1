"""The ramdisk's logs through a whole introspection: written by the
conductor when due, never kept in the stored data."""

import base64
import io
import json
import logging
import pathlib
import tarfile
from typing import Any

import pytest
from oslo_config import cfg

from inspector import exceptions, states
from inspector.db import stored_data
from inspector.server import wiring
from tests.functional.conftest import (
    Service,
    add_node,
    build_payload,
    introspect,
    random_bmc,
    random_mac,
)


def tarball(text: str = "ironic-python-agent: hello") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        content = text.encode() + b"\n"
        info = tarfile.TarInfo("journal")
        info.size = len(content)
        tar.addfile(info, io.BytesIO(content))
    return buf.getvalue()


@pytest.fixture
def logs_dir(conf: cfg.ConfigOpts, tmp_path: pathlib.Path) -> pathlib.Path:
    folder = tmp_path / "ramdisk-logs"
    folder.mkdir()
    conf.set_override("ramdisk_logs_dir", str(folder), group="processing")
    return folder


def post_with_logs(
    service: Service, logs: Any, *, error: str | None = None
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """One introspection whose ramdisk sends ``logs``: the final status,
    the node and its PXE MAC."""
    node = add_node(service)
    mac = random_mac()
    data = build_payload(mac, node["driver_info"]["ipmi_address"])
    data["logs"] = logs
    data["error"] = error
    return introspect(service, node, data=data), node, mac


def assert_no_logs_stored(service: Service, uuid: str) -> None:
    raw = stored_data.get(service.rt.db, uuid, processed=False)
    assert "logs" not in raw and raw["inventory"]
    resp = service.client.get(f"/v1/introspection/{uuid}/data/unprocessed")
    assert resp.status_code == 200 and "logs" not in resp.get_json()
    try:
        processed = stored_data.get(service.rt.db, uuid, processed=True)
    except exceptions.DataNotFound:
        return  # an introspection that failed has no processed data
    assert "logs" not in processed
    resp = service.client.get(f"/v1/introspection/{uuid}/data")
    assert resp.status_code == 200 and "logs" not in resp.get_json()


def test_error_writes_the_logs(service: Service, logs_dir: pathlib.Path) -> None:
    content = tarball()
    status, node, _mac = post_with_logs(
        service, base64.b64encode(content).decode(), error="disk on fire"
    )
    assert status["state"] == states.ERROR, status
    assert "disk on fire" in status["error"]
    uuid = node["uuid"]
    written = list(logs_dir.iterdir())
    assert len(written) == 1, written
    assert written[0].name.startswith(f"{uuid}_") and written[0].name.endswith(
        ".tar.gz"
    )
    assert written[0].read_bytes() == content
    with tarfile.open(written[0]) as tar:
        member = tar.extractfile("journal")
        assert member is not None and b"hello" in member.read()
    assert_no_logs_stored(service, uuid)


def test_success_writes_only_with_always(
    service: Service, conf: cfg.ConfigOpts, logs_dir: pathlib.Path
) -> None:
    logs = base64.b64encode(tarball()).decode()
    status, node, _mac = post_with_logs(service, logs)
    assert status["state"] == states.FINISHED, status
    assert list(logs_dir.iterdir()) == []
    assert_no_logs_stored(service, node["uuid"])

    conf.set_override("always_store_ramdisk_logs", True, group="processing")
    conf.set_override(
        "ramdisk_logs_filename_format",
        "{uuid}-{mac}-{bmc}-{dt:%Y}.tgz",
        group="processing",
    )
    status, node, mac = post_with_logs(service, logs)
    assert status["state"] == states.FINISHED, status
    bmc = node["driver_info"]["ipmi_address"]
    (written,) = list(logs_dir.iterdir())
    expected = f"{node['uuid']}-{mac.replace(':', '')}-{bmc}-20"
    assert written.name.startswith(expected), written.name
    assert written.read_bytes() == base64.b64decode(logs)
    assert_no_logs_stored(service, node["uuid"])


def test_without_a_directory_logs_are_dropped(
    service: Service, conf: cfg.ConfigOpts, tmp_path: pathlib.Path
) -> None:
    conf.set_override("always_store_ramdisk_logs", True, group="processing")
    status, node, _mac = post_with_logs(
        service, base64.b64encode(tarball()).decode(), error="boom"
    )
    assert status["state"] == states.ERROR, status
    assert list(tmp_path.iterdir()) == []
    assert_no_logs_stored(service, node["uuid"])


@pytest.mark.parametrize(
    "logs", ["%%% not base64 %%%", base64.b64encode(b"not a tarball").decode()]
)
def test_bad_logs_do_not_change_the_outcome(
    service: Service,
    conf: cfg.ConfigOpts,
    logs_dir: pathlib.Path,
    caplog: pytest.LogCaptureFixture,
    logs: str,
) -> None:
    caplog.set_level(logging.WARNING, logger="inspector.db.ramdisk_logs")
    conf.set_override("always_store_ramdisk_logs", True, group="processing")
    status, node, _mac = post_with_logs(service, logs)
    assert status["state"] == states.FINISHED, status
    status, failed, _mac = post_with_logs(service, logs, error="boom")
    assert status["state"] == states.ERROR, status
    assert status["error"] == "Ramdisk reported error: boom"
    assert list(logs_dir.iterdir()) == []
    for uuid in (node["uuid"], failed["uuid"]):
        assert_no_logs_stored(service, uuid)
        assert any(
            uuid in r.getMessage() and r.levelno == logging.WARNING
            for r in caplog.records
        ), caplog.text


def test_directory_store_keeps_no_logs(
    service: Service, conf: cfg.ConfigOpts, logs_dir: pathlib.Path
) -> None:
    store = logs_dir.parent / "data"
    conf.set_override("store_data", "directory", group="processing")
    conf.set_override("store_data_dir", str(store), group="processing")
    status, node, _mac = post_with_logs(
        service, base64.b64encode(tarball()).decode(), error="boom"
    )
    assert status["state"] == states.ERROR, status
    assert len(list(logs_dir.iterdir())) == 1
    unprocessed = json.loads((store / node["uuid"] / "unprocessed.json").read_text())
    assert "logs" not in unprocessed and unprocessed["inventory"]


def test_reapply_strips_but_writes_nothing(
    service: Service, conf: cfg.ConfigOpts, logs_dir: pathlib.Path
) -> None:
    conf.set_override("always_store_ramdisk_logs", True, group="processing")
    status, node, mac = post_with_logs(service, None)
    assert status["state"] == states.FINISHED, status
    uuid = node["uuid"]
    data = build_payload(mac, node["driver_info"]["ipmi_address"])
    data["logs"] = base64.b64encode(tarball()).decode()
    resp = service.client.post(f"/v1/introspection/{uuid}/data/unprocessed", json=data)
    assert resp.status_code == 202, resp.get_json()
    assert service.wait_for(uuid, states.FINISHED)["state"] == states.FINISHED
    assert list(logs_dir.iterdir()) == []
    assert_no_logs_stored(service, uuid)


def test_start_up_refuses_a_missing_directory(
    conf: cfg.ConfigOpts, tmp_path: pathlib.Path
) -> None:
    missing = tmp_path / "missing"
    conf.set_override("ramdisk_logs_dir", str(missing), group="processing")
    with pytest.raises(exceptions.ConfigError) as err:
        wiring.standalone(conf)
    assert "[processing]ramdisk_logs_dir" in str(err.value)
    assert str(missing) in str(err.value)


def test_unknown_machine_logs_are_kept_as_unknown(
    service: Service, logs_dir: pathlib.Path
) -> None:
    # no node matches: 404, and the logs are written as ironic-inspector does
    content = tarball("lost machine")
    data = build_payload(random_mac(), random_bmc())
    data["logs"] = base64.b64encode(content).decode()
    resp = service.client.post("/v1/continue", json=data)
    assert resp.status_code == 404
    (written,) = list(logs_dir.iterdir())
    assert written.name.startswith("unknown_") and written.read_bytes() == content
