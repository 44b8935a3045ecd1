"""The PXE filter's decision and the dnsmasq hostsdir it writes."""

import os
import pathlib

import pytest

from inspector import exceptions
from inspector.pxe_filter import policy
from inspector.pxe_filter.dnsmasq import UNKNOWN_HOSTS_FILE, HostsDir

A, B, C, D = (f"52:54:00:00:00:0{n}" for n in range(1, 5))


@pytest.mark.parametrize(
    ("introspecting", "discovery", "deny_unknown", "fail_closed", "unknown"),
    [
        (False, False, False, False, False),
        (True, False, False, False, True),
        (False, True, False, False, True),
        (True, True, True, False, False),
        (True, True, False, True, False),
    ],
)
def test_unknown_macs(
    introspecting: bool,
    discovery: bool,
    deny_unknown: bool,
    fail_closed: bool,
    unknown: bool,
) -> None:
    desired = policy.decide(
        frozenset({A}),
        frozenset({A, B}),
        introspecting,
        discovery,
        deny_unknown,
        fail_closed,
    )
    assert desired.allow == {A} and desired.deny == {B}
    assert desired.unknown_allowed is unknown


def test_entries_gone_from_ironic_follow_the_unknown_policy() -> None:
    desired = policy.decide(frozenset({A}), frozenset({A, B}), True, False, False)
    # C was written before and its port is gone: allowed like any unknown MAC
    assert desired.entries(frozenset({A, B, C})) == {A: True, B: False, C: True}
    closed = policy.decide(frozenset(), frozenset({A, B}), False, False, False)
    assert closed.entries(frozenset({C})) == {A: False, B: False, C: False}


def files(path: pathlib.Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(path.iterdir())}


def test_writes_upstream_format_and_only_changes(tmp_path: pathlib.Path) -> None:
    hosts = HostsDir(str(tmp_path), purge=True)
    hosts.check()
    hosts.prepare()
    desired = policy.decide(frozenset({A}), frozenset({A, B}), True, False, False)
    assert hosts.apply(desired) == 3
    assert files(tmp_path) == {
        A: f"{A}\n",
        B: f"{B},ignore\n",
        UNKNOWN_HOSTS_FILE: "*:*:*:*:*:*\n",
    }
    stamps = {p.name: p.stat().st_ino for p in tmp_path.iterdir()}
    assert hosts.apply(desired) == 0  # nothing changed, nothing written
    assert {p.name: p.stat().st_ino for p in tmp_path.iterdir()} == stamps
    finished = policy.decide(frozenset(), frozenset({A, B}), False, False, False)
    assert hosts.apply(finished) == 2  # A denied, the wildcard denies
    assert files(tmp_path)[A] == f"{A},ignore\n"
    assert files(tmp_path)[UNKNOWN_HOSTS_FILE] == "*:*:*:*:*:*,ignore\n"
    assert hosts.counts() == (0, 2)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_purge_or_keep_what_is_there(tmp_path: pathlib.Path) -> None:
    (tmp_path / C).write_text(f"{C},ignore\n")
    (tmp_path / D).write_text(f"{D}\n")
    (tmp_path / f".tmp-{A}").write_text("half")
    kept = HostsDir(str(tmp_path), purge=False)
    kept.prepare()
    assert kept.written == {C: False, D: True}
    assert not (tmp_path / f".tmp-{A}").exists()
    purged = HostsDir(str(tmp_path), purge=True)
    purged.prepare()
    assert purged.written == {} and list(tmp_path.iterdir()) == []


def test_unusable_directory_is_named(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(exceptions.ConfigError, match=r"dhcp_hostsdir .* not a dir"):
        HostsDir(str(tmp_path / "missing"), purge=True).check()
    # as the service's user would see a directory it may not write (the
    # tests run as root, who may write anywhere)
    monkeypatch.setattr(os, "access", lambda _path, _mode: False)
    with pytest.raises(exceptions.ConfigError, match="is not writable by"):
        HostsDir(str(tmp_path), purge=True).check()


def test_hosts_file_needs_a_pid_file_and_a_directory(tmp_path: pathlib.Path) -> None:
    from inspector.pxe_filter.hostsfile import HostsFile

    with pytest.raises(exceptions.ConfigError, match="needs dnsmasq_pid_file"):
        HostsFile(str(tmp_path / "hosts"), "").check()
    with pytest.raises(exceptions.ConfigError, match="is missing or not writable"):
        HostsFile(str(tmp_path / "no" / "hosts"), str(tmp_path / "pid")).check()
    hosts = HostsFile(str(tmp_path / "hosts"), str(tmp_path / "no-such.pid"))
    hosts.prepare()
    desired = policy.decide(frozenset({A}), frozenset({A, B}), False, False, False)
    assert hosts.apply(desired) == 3
    assert (tmp_path / "hosts").read_text() == (
        f"{A}\n{B},ignore\n*:*:*:*:*:*,ignore\n"
    )
    assert hosts.reloads == 0  # no dnsmasq runs: nothing to reload, no error
    assert hosts.apply(desired) == 0


def test_compaction_needs_the_pid_file(tmp_path: pathlib.Path) -> None:
    hosts = HostsDir(str(tmp_path), purge=True)  # no pid file: never removes
    hosts.prepare()
    hosts.apply(policy.decide(frozenset(), frozenset({A, B}), False, False, False))
    hosts.apply(policy.decide(frozenset(), frozenset({A}), False, False, False))
    assert hosts.compact() == 0 and (tmp_path / B).exists()
