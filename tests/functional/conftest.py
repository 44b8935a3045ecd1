"""The real app in-process: real SQLite, real conductor over fake://, fake Ironic."""

import copy
import functools
import json
import pathlib
import random
import subprocess
import sys
import uuid as uuid_mod
from collections.abc import Iterator
from typing import Any

import oslo_messaging as messaging
import pytest
from flask.testing import FlaskClient
from oslo_config import cfg
from oslo_config import fixture as config_fixture

from inspector import states
from inspector.conductor.service import ConductorService
from inspector.conf import opts
from inspector.db import engine, migration, transitions
from inspector.runtime import ApiRuntime
from inspector.server import wiring
from lab.waiting import wait_until
from tests.functional.fake_ironic import FakeIronic

DATA_FILE = pathlib.Path(__file__).parent.parent / "data" / "ipa-inventory.json"
BIN = pathlib.Path(sys.executable).parent


@pytest.fixture(scope="session")
def base_conf() -> cfg.ConfigOpts:
    conf = cfg.CONF
    opts.register_all(conf)
    messaging.set_transport_defaults("ironic_inspector")
    conf([], project="ironic-inspector", default_config_files=[])
    _test_defaults(conf)
    return conf


def _test_defaults(conf: cfg.ConfigOpts) -> None:
    """A deployment's defaults are ironic-inspector's (keystone, iptables);
    the functional tests run without Keystone or a DHCP filter."""
    conf.set_default("auth_strategy", "noauth")
    conf.set_default("driver", "noop", group="pxe_filter")
    conf.set_default("enabled", True, group="healthcheck")
    # no periodic reconcile: it removes the records of nodes the fake
    # Ironic does not know, which many tests write directly (a record gone
    # 60 s into the session failed them at random); test_reconcile calls
    # the reconcile itself
    conf.set_default("sync_interval", 0, group="processing")


@pytest.fixture
def conf(base_conf: cfg.ConfigOpts) -> Iterator[cfg.ConfigOpts]:
    fixture = config_fixture.Config(base_conf)
    fixture.setUp()
    fixture.config(introspection_delay=0, host="functional-test")
    # fixture.cleanUp resets defaults too: the overrides follow base_conf's
    fixture.config(auth_strategy="noauth")
    fixture.config(driver="noop", group="pxe_filter")
    fixture.config(enabled=True, group="healthcheck")
    fixture.config(store_data="database", group="processing")
    fixture.config(sync_interval=0, group="processing")
    yield base_conf
    fixture.cleanUp()
    # cleanUp resets the options (defaults too) and leaves CONF unparsed:
    # parse it again, as the running service always has it (oslo.policy
    # reads files through it), with the tests' defaults, which the
    # session's service (made by whichever test comes first) reads
    base_conf([], project="ironic-inspector", default_config_files=[])
    _test_defaults(base_conf)


class Service:
    """One running service: the runtime, its conductor and a Flask client."""

    def __init__(
        self,
        rt: ApiRuntime,
        conductor: ConductorService,
        ironic: FakeIronic,
        client: FlaskClient,
    ) -> None:
        self.rt = rt
        self.conductor = conductor
        self.ironic = ironic
        self.client = client

    def wait_for(
        self, uuid: str, *wanted: str, timeout: float = 30.0
    ) -> dict[str, Any]:
        """The introspection status of ``uuid`` once its state is one of
        ``wanted``."""
        body: dict[str, Any] = wait_until(
            lambda: self.client.get(f"/v1/introspection/{uuid}").get_json(),
            timeout,
            f"node {uuid} to reach {' or '.join(wanted)}",
            until=lambda body: body.get("state") in wanted,
            interval=0.02,
        )
        return body


@pytest.fixture(scope="session")
def _service(
    base_conf: cfg.ConfigOpts, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    path = tmp_path_factory.mktemp("db") / "inspector.sqlite"
    db = engine.Database(f"sqlite:///{path}")
    migration.upgrade(db)
    ironic = FakeIronic()
    shape = wiring.standalone(base_conf, db=db, baremetal=ironic)
    shape.start()
    yield Service(shape.rt, shape.conductor, ironic, shape.app.test_client())
    shape.stop()


@pytest.fixture
def service(_service: Service, conf: cfg.ConfigOpts) -> Service:
    return _service


@pytest.fixture
def status_record(service: Service) -> Iterator[Any]:
    """Writes a started introspection for a test that only reads it back
    (status answers) and ends it, if still working, when the test ends.

    Left alone, nobody would claim it: [coordination]claim_timeout later
    the session's sweep takes it as lost and starts it against the fake
    Ironic in the middle of some other test, which then finds one lost
    step more than its own."""
    from inspector.db import introspections

    written: list[str] = []

    def write(mac: str | None = None) -> str:
        uuid = str(uuid_mod.uuid4())
        introspections.start(service.rt.db, uuid, True, {"mac": [mac or random_mac()]})
        written.append(uuid)
        return uuid

    yield write
    for uuid in written:
        if introspections.get(service.rt.db, uuid).state in states.WORKING:
            transitions.failed(
                service.rt.db, introspections.get(service.rt.db, uuid), "test over"
            )


@functools.cache
def _inventory_template() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(DATA_FILE.read_text())
    return result


def build_payload(mac: str, bmc: str) -> dict[str, Any]:
    """A ramdisk payload whose MACs and BMC match a given node."""
    data = copy.deepcopy(_inventory_template())
    data["inventory"]["bmc_address"] = bmc
    first = data["inventory"]["interfaces"][0]
    first["mac_address"] = mac
    data["boot_interface"] = "01-" + mac.replace(":", "-")
    for index, iface in enumerate(data["inventory"]["interfaces"][1:], 1):
        iface["mac_address"] = mac[:-2] + f"{(int(mac[-2:], 16) + index) % 256:02x}"
    return data


@pytest.fixture
def payload() -> Any:
    """Builds a ramdisk payload whose MACs and BMC match a given node."""
    return build_payload


def random_mac() -> str:
    return "52:54:" + ":".join(f"{random.randrange(256):02x}" for _ in range(4))


def random_bmc() -> str:
    return (
        f"10.{random.randrange(256)}.{random.randrange(256)}.{random.randrange(1, 255)}"
    )


def add_node(service: Service, **fields: Any) -> dict[str, Any]:
    """Enrolls a node with a unique name and a random BMC address (unless
    `fields` say otherwise) into the fake Ironic."""
    fields.setdefault("name", f"node-{random.randrange(10**9)}")
    fields.setdefault("bmc", random_bmc())
    return service.ironic.add_node(**fields)


@pytest.fixture
def node(service: Service) -> dict[str, Any]:
    return add_node(service)


def start(service: Service, node: dict[str, Any], *, manage_boot: bool = True) -> str:
    """Starts introspection of `node` and waits for the ramdisk; its UUID."""
    uuid: str = node["uuid"]
    query = "" if manage_boot else "?manage_boot=false"
    resp = service.client.post(f"/v1/introspection/{uuid}{query}")
    assert resp.status_code == 202, resp.get_json()
    service.wait_for(uuid, states.WAITING)
    return uuid


def introspect(
    service: Service,
    node: dict[str, Any] | None = None,
    *,
    manage_boot: bool = True,
    data: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One introspection from start to end: starts it, posts the ramdisk data
    (`data`, or a payload with a fresh MAC and the node's BMC; 200 naming the
    node) and waits for a final state. Enrolls a new node unless one is given. The final status
    (its "uuid" names the node)."""
    if node is None:
        node = add_node(service)
    uuid = start(service, node, manage_boot=manage_boot)
    if data is None:
        data = build_payload(random_mac(), node["driver_info"]["ipmi_address"])
    resp = service.client.post("/v1/continue", json=data)
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json() == {"uuid": uuid}
    return service.wait_for(uuid, *states.FINAL)


LAB_DEFAULTS = "[DEFAULT]\nauth_strategy = noauth\n[pxe_filter]\ndriver = noop\n"


def run_script(
    tmp_path: pathlib.Path,
    script: str,
    conf: str,
    *args: str,
    stdin: str | None = None,
    cwd: pathlib.Path | None = None,
    lab_defaults: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Runs one of the console scripts with `conf` as its config file.

    With ``lab_defaults`` a first file sets what the tests run without
    (Keystone, a DHCP filter); `conf` comes after it and wins.
    """
    files = []
    if lab_defaults:
        base = tmp_path / "lab-defaults.conf"
        base.write_text(LAB_DEFAULTS)
        files += ["--config-file", str(base)]
    path = tmp_path / "inspector.conf"
    path.write_text(conf)
    files += ["--config-file", str(path)]
    return subprocess.run(
        [str(BIN / script), *files, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )


def database_conf(service: Service) -> str:
    """Config text pointing a console script at the service's database."""
    url = service.rt.db.url.render_as_string(hide_password=False)
    return f"[database]\nconnection = {url}\n"
