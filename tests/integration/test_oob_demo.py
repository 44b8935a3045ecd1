"""``python -m lab demo --oob`` (lab/demos/out_of_band.py) in small: three machines
out of band and one ``auto`` falling back to the ramdisk, on the shared
Ironic with the lab's Redfish emulator, through the demo's own
``introspect``, ``problems`` and ``report``."""

from collections.abc import Iterator

import pytest

from lab.demos import out_of_band
from lab.machines.enroll import IronicAPI, enroll
from lab.machines.ramdisk import RamdiskPlayer
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from lab.servers.redfish_emulator import RedfishEmulator
from tests.integration.conftest import start_inspector


@pytest.fixture
def unmasked(ironic: IronicServer) -> Iterator[None]:
    ironic.set_policy({"show_password": "@"})
    yield
    ironic.set_policy({})


def test_oob_demo_in_small(
    ironic: IronicServer,
    ironic_api: IronicAPI,
    tmp_path_factory: pytest.TempPathFactory,
    unmasked: None,
) -> None:
    planned = out_of_band.plan(4, seed=35, first=35_001)
    assert [p.mode for p in planned] == ["out-of-band"] * 3 + ["auto"]
    inspector: InspectorServer = start_inspector(
        tmp_path_factory.mktemp("inspector-oob-demo"), ironic
    )
    emulator = RedfishEmulator(
        tmp_path_factory.mktemp("redfish-oob-demo"), [p.system for p in planned]
    )
    player = RamdiskPlayer(
        ironic_api, inspector.url, [p.machine for p in planned], poll_interval=0.5
    )
    player.start()
    try:
        emulator.start()
        uuids = enroll(ironic_api, [p.machine for p in planned])
        for item in planned:
            out_of_band.point_at(
                ironic_api,
                uuids[item.machine.name],
                emulator.url,
                emulator.system_id(item.system),
            )
        assert inspector.pid is not None
        out = out_of_band.introspect(
            inspector.url,
            ironic_api,
            ironic.log_file,
            planned,
            uuids,
            {"inspector": inspector.pid},
            timeout=60,
            player=player,
        )
    finally:
        player.stop()
        emulator.stop()
        assert inspector.stop() == 0, inspector.log_tail()
    assert out_of_band.problems(planned, uuids, out) == []
    assert out.finished == 4
    # the player played only the fallback's ramdisk; it was booted for it
    fallback = planned[3]
    assert out.ramdisk_posts == [fallback.machine.name]
    assert out.booting[uuids[fallback.machine.name]] > 0
    text = out_of_band.report(planned, uuids, out)
    assert "powered on or booted: none (0 power/boot-device calls for 3 nodes" in text
    rows = {row[0]: row for row in out.rows}
    assert rows[fallback.machine.name][1:3] == ["auto", "in-band"]
    assert rows[fallback.machine.name][-1] == "local_gb (no drives)"
    for item in planned[:3]:
        row = rows[item.machine.name]
        assert row[1:3] == ["out-of-band", "out-of-band"]
        # the emulated system's sizes came through the BMC
        assert row[3] == str(item.system.cpus)
        assert row[4] == f"{item.system.memory_gib} GiB"
