"""The private fields of tooz (and etcd3gw's client) that we read are
there in the installed versions, and those versions are in the range
setup.cfg allows: a tooz release that moves a field fails here, naming it,
before a conductor fails in the field."""

import importlib.metadata
from typing import Any

import pytest
import requests
from etcd3gw.client import Etcd3Client
from tooz import coordination

from inspector.coordination import backend
from tests.unit import pinned

URLS = {
    "etcd3gw": "etcd3+http://127.0.0.1:9",
    "redis": "redis://127.0.0.1:9",
    "memcached": "memcached://127.0.0.1:9",
    "file": "file:///nonexistent-tooz-dir",
}
"""A URL per driver; making a coordinator connects to nothing."""


@pytest.mark.parametrize("name", ["tooz", "etcd3gw"])
def test_the_installed_version_is_in_the_range_setup_cfg_pins(name: str) -> None:
    required = pinned.required(name)
    assert not required.specifier.contains("999"), (
        f"setup.cfg must bound {name} from above: {required}"
    )
    installed = importlib.metadata.version(name)
    assert required.specifier.contains(installed, prereleases=True), (
        f"{name} {installed} is outside {required}: check the fields "
        f"inspector/coordination/backend.py reads ({backend.TOOZ_FIELDS}) "
        "and widen the range"
    )


def _coordinator(driver: str) -> Any:
    if driver == "memcached":
        pytest.importorskip("pymemcache")
    return coordination.get_coordinator(URLS[driver], b"pinned")


@pytest.mark.parametrize("driver", sorted(backend.TOOZ_FIELDS))
def test_every_field_read_is_there(driver: str) -> None:
    coordinator = _coordinator(driver)
    assert type(coordinator).__module__ == f"tooz.drivers.{driver}"
    version = importlib.metadata.version("tooz")
    for field in backend.TOOZ_FIELDS[driver]:
        assert hasattr(coordinator, field), (
            f"tooz {version}'s {type(coordinator).__name__} has no {field!r} "
            "any more: inspector/coordination/backend.py reads it"
        )
    held: Any = getattr(coordinator, "_acquired_locks", set())
    assert isinstance(held, set), f"tooz {version}: _acquired_locks is no set"


def test_the_fields_lead_where_we_expect() -> None:
    etcd = _coordinator("etcd3gw")
    driver, client = backend.direct_access(etcd)
    assert (driver, type(client)) == ("etcd3gw", Etcd3Client)
    # what etcd_session and the lock factory use of them
    assert isinstance(client.session, requests.Session)
    assert client.base_url == "http://127.0.0.1:9"
    assert isinstance(client.timeout, int | float)
    assert isinstance(etcd.lock_timeout, int | float)
    assert backend.direct_access(_coordinator("file")) == (
        "file",
        "/nonexistent-tooz-dir",
    )


def test_a_field_that_moved_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(backend.TOOZ_FIELDS, "file", ("_directory_moved",))
    with pytest.raises(AssertionError, match="has no '_directory_moved' any more"):
        test_every_field_read_is_there("file")
