"""The lab's etcd keeps its data in memory when asked, across restarts,
and leaves nothing behind."""

import pathlib

import pytest

from lab.servers import etcd
from lab.servers.etcd import EtcdServer


def test_in_memory_data_is_kept_until_closed(tmp_path: pathlib.Path) -> None:
    if not etcd.RAM.is_dir():
        pytest.skip(f"no {etcd.RAM} here")
    server = EtcdServer(tmp_path, in_memory=True)
    assert server.data_dir.parent == etcd.RAM
    (server.data_dir / "member").mkdir()  # what etcd writes there
    server.stop()  # a restart keeps the data
    assert (server.data_dir / "member").is_dir()
    server.close()
    assert not server.data_dir.exists()
    server.close()  # twice is harmless


def test_on_disk_by_default(tmp_path: pathlib.Path) -> None:
    server = EtcdServer(tmp_path)
    assert server.data_dir == tmp_path / "etcd-data"
    server.close()


def test_without_a_ram_filesystem_the_data_stays_on_disk(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(etcd, "RAM", tmp_path / "absent")
    server = EtcdServer(tmp_path, in_memory=True)
    assert server.data_dir == tmp_path / "etcd-data"
