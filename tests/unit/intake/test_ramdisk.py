"""A ramdisk's post at the API: its logs come out on arrival and are kept
apart beside the data (or written at once for a post that matches no
node); the data is stored without them."""

import base64
import gzip
import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
from oslo_config import cfg
from oslo_config import fixture as config_fixture

from inspector import exceptions, states
from inspector.conductor.rpcapi import ConductorClient
from inspector.conf import opts
from inspector.db import data_store, engine, introspections, stored_data, transitions
from inspector.intake import ramdisk
from inspector.locking.semaphore import SemaphoreLockProvider
from inspector.runtime import ApiRuntime

UUID = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
MAC = "52:54:00:12:34:56"
LOGS = base64.b64encode(gzip.compress(b"journal")).decode()


class Nobody:
    """A conductor group with no conductor in it."""

    def pick(self, exclude: Any = ()) -> str:
        raise exceptions.NoConductor(reason="no conductor is available")

    def invalidate(self) -> None: ...

    def hosts(self) -> list[str]:
        return []


@pytest.fixture
def rt(db: engine.Database) -> Iterator[ApiRuntime]:
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([], default_config_files=[])
    fixture = config_fixture.Config(conf)
    fixture.setUp()
    # no conductor: the step is left for the sweep, as in an outage
    yield ApiRuntime(
        conf=conf,
        db=db,
        baremetal=None,  # type: ignore[arg-type]
        locks=SemaphoreLockProvider(),
        stores=data_store.DataStores(conf, db),
        rpc=ConductorClient(None, Nobody()),  # type: ignore[arg-type]
        conductors=None,  # type: ignore[arg-type]
    )
    fixture.cleanUp()


def post(logs: Any) -> dict[str, Any]:
    return {
        "inventory": {"interfaces": [{"name": "eth0", "mac_address": MAC}]},
        "logs": logs,
    }


def waiting(rt: ApiRuntime) -> introspections.IntrospectionRecord:
    record = introspections.start(rt.db, UUID, True, {"mac": [MAC]})
    return transitions.waiting(rt.db, record)


def test_logs_are_kept_apart_from_the_data(rt: ApiRuntime) -> None:
    waiting(rt)
    data = post(LOGS)
    assert ramdisk.continue_(rt, data) == UUID
    assert "logs" not in data
    record = introspections.get(rt.db, UUID)
    assert record.state == states.PROCESSING
    stored = stored_data.get_post(rt.db, UUID, record.version)
    assert stored.logs == LOGS and "logs" not in stored.data
    assert stored.data["inventory"]["interfaces"][0]["mac_address"] == MAC


def test_logs_that_are_no_string_are_dropped(rt: ApiRuntime) -> None:
    waiting(rt)
    ramdisk.continue_(rt, post({"not": "base64"}))
    record = introspections.get(rt.db, UUID)
    assert stored_data.get_post(rt.db, UUID, record.version).logs is None


def test_logs_of_an_unknown_machine_are_written_at_once(
    rt: ApiRuntime, tmp_path: pathlib.Path
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    rt.conf.set_override("ramdisk_logs_dir", str(folder), group="processing")
    with pytest.raises(exceptions.NoMatch):
        ramdisk.continue_(rt, post(LOGS))
    (written,) = folder.iterdir()
    assert written.name.startswith("unknown_")
    assert gzip.decompress(written.read_bytes()) == b"journal"
