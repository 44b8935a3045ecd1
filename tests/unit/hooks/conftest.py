import pytest

from inspector.hooks.base import NodeContext


@pytest.fixture
def ctx() -> NodeContext:
    return NodeContext(uuid="node-1", node={"properties": {}}, ports={})
