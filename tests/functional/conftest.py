"""The real app in-process: real SQLite, real conductor over fake://, fake Ironic."""

import copy
import json
import pathlib
import time
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
from inspector.db import engine, migration
from inspector.runtime import Runtime
from inspector.server import wiring
from tests.functional.fake_ironic import FakeIronic

DATA_FILE = pathlib.Path(__file__).parent.parent / "data" / "ipa-inventory.json"


@pytest.fixture(scope="session")
def base_conf() -> cfg.ConfigOpts:
    conf = cfg.CONF
    opts.register_all(conf)
    messaging.set_transport_defaults("ironic_inspector")
    conf([], project="ironic-inspector", default_config_files=[])
    return conf


@pytest.fixture
def conf(base_conf: cfg.ConfigOpts) -> Iterator[cfg.ConfigOpts]:
    fixture = config_fixture.Config(base_conf)
    fixture.setUp()
    fixture.config(introspection_delay=0, host="functional-test")
    fixture.config(store_data="database", group="processing")
    yield base_conf
    fixture.cleanUp()
    # cleanUp resets the options and leaves CONF unparsed: parse it again,
    # as the running service always has it (oslo.policy reads files through it)
    base_conf([], project="ironic-inspector", default_config_files=[])


class Service:
    """One running service: the runtime, its conductor and a Flask client."""

    def __init__(
        self,
        rt: Runtime,
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
        deadline = time.monotonic() + timeout
        body: dict[str, Any] = {}
        while time.monotonic() < deadline:
            body = self.client.get(f"/v1/introspection/{uuid}").get_json()
            if body.get("state") in wanted:
                return body
            time.sleep(0.02)
        raise AssertionError(f"node {uuid} never reached {wanted}: {body}")


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


@pytest.fixture(scope="session")
def inventory_template() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(DATA_FILE.read_text())
    return result


@pytest.fixture
def payload(inventory_template: dict[str, Any]) -> Any:
    """Builds a ramdisk payload whose MACs and BMC match a given node."""

    def build(mac: str, bmc: str) -> dict[str, Any]:
        data = copy.deepcopy(inventory_template)
        data["inventory"]["bmc_address"] = bmc
        first = data["inventory"]["interfaces"][0]
        first["mac_address"] = mac
        data["boot_interface"] = "01-" + mac.replace(":", "-")
        for index, iface in enumerate(data["inventory"]["interfaces"][1:], 1):
            iface["mac_address"] = mac[:-2] + f"{(int(mac[-2:], 16) + index) % 256:02x}"
        return data

    return build


FINAL = states.FINAL
