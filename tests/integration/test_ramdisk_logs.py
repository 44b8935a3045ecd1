"""The ramdisk's logs with the real ironic-inspector process and a real
Ironic: the agent's gzipped tarball written to ramdisk_logs_dir, named
after the node, never kept in the stored data."""

import io
import pathlib
import tarfile
from collections.abc import Iterator

import pytest

from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from tests.integration.conftest import Client, Lab, introspect, start_inspector

FORMAT = "{uuid}_{mac}_{bmc}_{dt:%Y%m%d-%H%M%S.%f}.tar.gz"


def agent_logs(hostname: str) -> bytes:
    """A gzipped tarball as ironic-python-agent's logs collector builds it."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in [
            ("journal", f"{hostname} ironic-python-agent[712]: Starting agent\n"),
            ("dmesg", "[    0.000000] Linux version 6.1.0\n"),
        ]:
            content = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return buf.getvalue()


@pytest.fixture(scope="module", params=["on-error", "always"])
def logs_inspector(
    request: pytest.FixtureRequest,
    ironic: IronicServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[InspectorServer, pathlib.Path, bool]]:
    work = tmp_path_factory.mktemp(f"inspector-logs-{request.param}")
    folder = work / "ramdisk-logs"
    folder.mkdir()
    always = request.param == "always"
    server = start_inspector(
        work,
        ironic,
        options={
            "processing": {
                "ramdisk_logs_dir": str(folder),
                "always_store_ramdisk_logs": str(always),
                "ramdisk_logs_filename_format": FORMAT,
            }
        },
    )
    yield server, folder, always
    assert server.stop() == 0, server.log_tail()


def test_logs_written_as_asked(
    logs_inspector: tuple[InspectorServer, pathlib.Path, bool], lab: Lab
) -> None:
    server, folder, always = logs_inspector
    client = Client(server.url)
    failing, failing_uuid = lab.machine()
    failing.behaviour = "error"
    healthy, healthy_uuid = lab.machine()
    sent = {}
    for machine, uuid in [(failing, failing_uuid), (healthy, healthy_uuid)]:
        sent[uuid] = agent_logs(machine.name)
        (status,) = introspect(
            client, (machine, uuid), payload=machine.payload(logs=sent[uuid])
        )
        wanted = "error" if machine is failing else "finished"
        assert status["state"] == wanted, status

    written = {p.name.split("_")[0]: p for p in folder.iterdir()}
    expected = {failing_uuid, healthy_uuid} if always else {failing_uuid}
    assert set(written) == expected, sorted(written)
    for machine, uuid in [(failing, failing_uuid), (healthy, healthy_uuid)]:
        if uuid not in written:
            continue
        path = written[uuid]
        name_uuid, mac, bmc, stamp = path.name.removesuffix(".tar.gz").split("_")
        assert mac == machine.pxe_mac.replace(":", "")
        assert bmc == machine.bmc_address
        assert len(stamp) == len("20240305-070809.123456"), stamp
        assert path.read_bytes() == sent[uuid]
        with tarfile.open(path) as tar:
            assert sorted(tar.getnames()) == ["dmesg", "journal"]
            journal = tar.extractfile("journal")
            assert journal is not None and machine.name.encode() in journal.read()
        assert f"written to {path}" in server.log_tail(100_000)

    for uuid in (failing_uuid, healthy_uuid):
        raw = client.get(f"/v1/introspection/{uuid}/data/unprocessed").json()
        assert "logs" not in raw and raw["inventory"]
    processed = client.get(f"/v1/introspection/{healthy_uuid}/data").json()
    assert "logs" not in processed and processed["cpus"] == healthy.cpus


def test_a_missing_directory_stops_the_start(
    ironic: IronicServer, tmp_path: pathlib.Path
) -> None:
    missing = tmp_path / "no-such-dir"
    with pytest.raises(RuntimeError) as err:
        start_inspector(
            tmp_path / "inspector",
            ironic,
            options={"processing": {"ramdisk_logs_dir": str(missing)}},
        )
    assert "[processing]ramdisk_logs_dir" in str(err.value), str(err.value)
    assert str(missing) in str(err.value)
