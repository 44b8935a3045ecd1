"""Collection from a BMC: static Redfish trees served on loopback."""

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from oslo_config import cfg

from inspector import exceptions
from inspector.hooks import lldp
from inspector.redfish import collect, credentials, provenance, sessions
from lab.machines.redfish_static import StaticBmc, StaticSystem

MAC1 = "52:54:00:00:00:01"
MAC2 = "52:54:00:00:00:02"
SWITCH = {
    "ChassisId": "aa:bb:cc:dd:ee:ff",
    "ChassisIdSubtype": "MacAddr",
    "PortId": "Ethernet1/3",
    "PortIdSubtype": "IfName",
    "SystemName": "leaf-1",
}
REQUIRED = ["cpus", "memory_mb", "local_gb", "macs"]


@pytest.fixture
def bmc() -> Iterator[StaticBmc]:
    with StaticBmc(
        [
            StaticSystem("full", [MAC1], lldp={MAC1: SWITCH}),
            StaticSystem(
                "quirky",
                [MAC2],
                memory_gib=0.5,
                drives_gib=[],
                empty_controller=True,
                mac_less_nic=True,
            ),
            StaticSystem("nonics", [], drives_gib=[]),
            StaticSystem("broken", [MAC1], html=True),
        ]
    ) as server:
        yield server


def _creds(
    bmc: StaticBmc, system: str | None, password: str = "password"
) -> credentials.BmcCredentials:
    info: dict[str, Any] = {
        "redfish_address": bmc.url,
        "redfish_username": "admin",
        "redfish_password": password,
    }
    if system is not None:
        info["redfish_system_id"] = system
    return credentials.from_node({"uuid": "n1", "driver_info": info})


def _short(conf: cfg.ConfigOpts) -> sessions.Sessions:
    conf.set_override("retries", 0, "redfish")
    conf.set_override("retry_delay", 0, "redfish")
    conf.set_override("timeout", 5, "redfish")
    return sessions.Sessions(conf)


def test_full_system_in_the_ramdisk_shape(conf: cfg.ConfigOpts, bmc: StaticBmc) -> None:
    got = collect.collect(_short(conf), _creds(bmc, "/redfish/v1/Systems/full"))
    inv = got.inventory
    assert inv["cpu"] == {
        "count": 8,
        "architecture": "x86_64",
        "model_name": "Static CPU 3000",
    }
    assert inv["memory"]["physical_mb"] == 32 * 1024
    assert inv["system_vendor"]["serial_number"] == "SN0001"
    assert inv["system_vendor"]["firmware"] == {"version": "1.2.3"}
    assert inv["boot"] == {"current_boot_mode": "uefi"}
    [disk] = inv["disks"]
    assert disk["size"] == 480 * 1024**3
    assert (disk["model"], disk["serial"], disk["rotational"]) == (
        "Disk-480",
        "SN0001-D0",
        False,
    )
    [nic] = inv["interfaces"]
    assert (nic["mac_address"], nic["speed_mbps"], nic["has_carrier"]) == (
        MAC1,
        25000,
        True,
    )
    # the LLDP TLVs decode with the hooks' decoder to what the switch said
    decoded, skipped = lldp.parse(nic["lldp"])
    assert skipped == 0
    assert decoded["switch_chassis_id"] == "aa:bb:cc:dd:ee:ff"
    assert decoded["switch_port_id"] == "Ethernet1/3"
    assert decoded["switch_system_name"] == "leaf-1"
    assert provenance.missing(inv, REQUIRED) == []
    data = got.data(bmc.url)
    assert set(data["provenance"].values()) == {"redfish"}
    assert set(data["provenance"]) == set(inv)


def test_system_id_without_the_path_prefix(
    conf: cfg.ConfigOpts, bmc: StaticBmc
) -> None:
    got = collect.collect(_short(conf), _creds(bmc, "full"))
    assert got.inventory["cpu"]["count"] == 8


def test_quirks_are_noted_not_fatal(conf: cfg.ConfigOpts, bmc: StaticBmc) -> None:
    got = collect.collect(_short(conf), _creds(bmc, "/redfish/v1/Systems/quirky"))
    inv = got.inventory
    # under 1 GiB is kept as told (sushy's rounding would say 0) and judged
    assert inv["memory"]["physical_mb"] == 512
    assert "disks" not in inv
    assert [n["mac_address"] for n in inv["interfaces"]] == [MAC2]
    notes = " | ".join(got.notes)
    assert "storage 2 listed no drives" in notes  # sushy's TypeError, caught
    assert "nomac has no MAC address" in notes
    assert provenance.missing(inv, REQUIRED) == [
        "memory_mb (512 MiB is implausibly small)",
        "local_gb (no drives)",
    ]


def test_no_nics_misses_macs(conf: cfg.ConfigOpts, bmc: StaticBmc) -> None:
    got = collect.collect(_short(conf), _creds(bmc, "/redfish/v1/Systems/nonics"))
    assert provenance.missing(got.inventory, ["macs", "cpus"]) == [
        "macs (no NIC with a MAC address)"
    ]


def test_html_answer_names_the_bmc(conf: cfg.ConfigOpts, bmc: StaticBmc) -> None:
    with pytest.raises(exceptions.BmcError) as caught:
        collect.collect(_short(conf), _creds(bmc, "/redfish/v1/Systems/broken"))
    assert bmc.url in caught.value.message
    assert "not Redfish JSON" in caught.value.message


def test_unknown_system(conf: cfg.ConfigOpts, bmc: StaticBmc) -> None:
    with pytest.raises(exceptions.BmcError) as caught:
        collect.collect(_short(conf), _creds(bmc, "/redfish/v1/Systems/nope"))
    assert "not found" in caught.value.message
    assert "Systems/nope" in caught.value.message


def test_several_systems_need_an_id(conf: cfg.ConfigOpts) -> None:
    systems = [StaticSystem("a", [MAC1]), StaticSystem("b", [MAC2])]
    with StaticBmc(systems) as two:
        with pytest.raises(exceptions.BmcError, match="System count is not exactly"):
            collect.collect(_short(conf), _creds(two, None))


def test_wrong_password(conf: cfg.ConfigOpts, bmc: StaticBmc) -> None:
    with pytest.raises(exceptions.BmcError) as caught:
        collect.collect(
            _short(conf), _creds(bmc, "/redfish/v1/Systems/full", password="nope")
        )
    assert "the BMC refused the credentials (HTTP 401/403)" in caught.value.message
    assert bmc.url in caught.value.message


def test_unreachable_bmc(conf: cfg.ConfigOpts, bmc: StaticBmc) -> None:
    creds = _creds(bmc, "full")
    bmc.stop()
    with pytest.raises(exceptions.BmcError, match="could not be reached"):
        collect.collect(_short(conf), creds)


def test_session_is_reused(conf: cfg.ConfigOpts, bmc: StaticBmc) -> None:
    kept = _short(conf)
    collect.collect(kept, _creds(bmc, "full"))
    roots = bmc.requests.count("/redfish/v1")
    collect.collect(kept, _creds(bmc, "quirky"))
    assert bmc.requests.count("/redfish/v1") == roots  # no second login
    # a changed password logs in again
    with pytest.raises(exceptions.BmcError):
        collect.collect(kept, _creds(bmc, "full", password="changed"))
    assert bmc.requests.count("/redfish/v1") > roots


def test_slots_bound_one_host_only(conf: cfg.ConfigOpts, bmc: StaticBmc) -> None:
    conf.set_override("max_per_host", 1, "redfish")
    kept = sessions.Sessions(conf)
    here = _creds(bmc, "full")
    other = credentials.BmcCredentials("http://192.0.2.1:1", None, "a", "b", True)
    entered = threading.Event()

    def other_host() -> None:
        with kept.slot(other):
            entered.set()

    with kept.slot(here):
        thread = threading.Thread(target=other_host)
        thread.start()
        thread.join(5)
        assert entered.is_set()  # another host is not held up
        blocked = threading.Event()

        def same_host() -> None:
            with kept.slot(here):
                blocked.set()

        waiter = threading.Thread(target=same_host)
        waiter.start()
        assert not blocked.wait(0.2)  # the host's one slot is taken
    waiter.join(5)
    assert blocked.is_set()


def test_collect_within_gives_up_after_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mode auto: a BMC that does not answer within [redfish]auto_budget
    is given up (the caller boots the ramdisk); the asking thread ends by
    itself."""
    release = threading.Event()
    monkeypatch.setattr(collect, "collect", lambda _s, _c: release.wait(30))
    creds = credentials.from_node(
        {"uuid": "n1", "driver_info": {"redfish_address": "https://10.0.0.9"}}
    )
    try:
        with pytest.raises(exceptions.BmcError) as caught:
            collect.collect_within(None, creds, 0.05)  # type: ignore[arg-type]
    finally:
        release.set()
    assert "https://10.0.0.9" in str(caught.value)
    assert "no answer within [redfish]auto_budget (0.05 s)" in str(caught.value)


def test_collect_within_hands_over_the_answer_or_the_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    creds = credentials.from_node(
        {"uuid": "n1", "driver_info": {"redfish_address": "https://10.0.0.9"}}
    )
    told = collect.Collected(inventory={"cpu": {"count": 1}})
    monkeypatch.setattr(collect, "collect", lambda _s, _c: told)
    assert collect.collect_within(None, creds, 5) is told  # type: ignore[arg-type]
    refused = exceptions.BmcError(bmc="BMC x", reason="refused")

    def fail(_s: Any, _c: Any) -> collect.Collected:
        raise refused

    monkeypatch.setattr(collect, "collect", fail)
    with pytest.raises(exceptions.BmcError) as caught:
        collect.collect_within(None, creds, 5)  # type: ignore[arg-type]
    assert caught.value is refused
