import copy
import json
import pathlib
from typing import Any

import pytest
from oslo_config import cfg
from oslo_config import fixture as config_fixture

from inspector.conf import opts
from inspector.processing.base import NodeContext

DATA = pathlib.Path(__file__).parents[2] / "data" / "ipa-inventory.json"


@pytest.fixture
def conf() -> Any:
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([])
    fixture = config_fixture.Config(conf)
    fixture.setUp()
    yield conf
    fixture.cleanUp()


@pytest.fixture
def data() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(DATA.read_text())
    return copy.deepcopy(result)


@pytest.fixture
def ctx() -> NodeContext:
    return NodeContext(uuid="node-1", node={"properties": {}}, ports={})
