"""Retries and error translation of the Ironic client (the SDK is faked)."""

import types
from typing import Any

import pytest
from keystoneauth1 import exceptions as ks_exc
from openstack import exceptions as sdk_exc
from oslo_config import cfg

from inspector import exceptions
from inspector.baremetal.client import BaremetalClient
from inspector.conf import opts


class FakeProxy:
    """Answers each call with the next scripted outcome."""

    def __init__(self, *outcomes: Any) -> None:
        self.outcomes = list(outcomes)
        self.calls = 0

    def get_node(self, node_id: str, fields: list[str] | None = None) -> Any:
        assert fields and "uuid" in fields, "every read names its fields"
        self.calls += 1
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def http_error(cls: type, status: int, message: str) -> Exception:
    return cls(message=message, http_status=status, details=message)


def make_client(proxy: Any, retries: int = 3) -> BaremetalClient:
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([])
    conf.set_override("max_retries", retries, group="ironic")
    conf.set_override("retry_interval", 0, group="ironic")
    client = BaremetalClient(conf)
    client._conn = proxy
    return client


NODE = types.SimpleNamespace(
    id="u1",
    name="n1",
    provision_state="manageable",
    power_state="power off",
    target_power_state=None,
    is_maintenance=False,
    driver="fake-hardware",
    driver_info={},
    properties={},
    extra={},
    reservation=None,
    traits=[],
)


def test_proxy_made_once_for_many_threads() -> None:
    """Making the proxy runs version discovery against Ironic: once only."""
    import threading
    import time

    made = []

    class Connection:
        @property
        def baremetal(self) -> FakeProxy:
            made.append(1)
            time.sleep(0.05)  # discovery takes a while: threads would pile in
            return FakeProxy(*[NODE] * 8)

    client = make_client(FakeProxy())
    client._conn = None
    client._connect = Connection  # type: ignore[method-assign]
    threads = [threading.Thread(target=client.get_node, args=("n1",)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert made == [1]


def test_node_fields_use_ironic_names() -> None:
    node = make_client(FakeProxy(NODE)).get_node("n1")
    assert node["uuid"] == "u1" and node["maintenance"] is False


def test_locked_then_success_is_retried() -> None:
    proxy = FakeProxy(
        http_error(sdk_exc.ConflictException, 409, "Node u1 is locked by host c1"), NODE
    )
    assert make_client(proxy).get_node("u1")["uuid"] == "u1"
    assert proxy.calls == 2


def test_locked_forever_is_node_locked() -> None:
    proxy = FakeProxy(
        *[http_error(sdk_exc.ConflictException, 409, "Node u1 is locked by host c1")]
        * 4
    )
    with pytest.raises(exceptions.NodeLocked, match="locked"):
        make_client(proxy, retries=3).get_node("u1")
    assert proxy.calls == 4


def test_other_conflict_not_retried() -> None:
    proxy = FakeProxy(
        http_error(
            sdk_exc.ConflictException, 409, "A port with MAC address x already exists"
        )
    )
    with pytest.raises(exceptions.Conflict, match="already exists"):
        make_client(proxy).get_node("u1")
    assert proxy.calls == 1


def test_not_found() -> None:
    proxy = FakeProxy(http_error(sdk_exc.NotFoundException, 404, "no node"))
    with pytest.raises(exceptions.NodeNotFound, match="nope"):
        make_client(proxy).get_node("nope")


def test_503_retried_then_error() -> None:
    proxy = FakeProxy(*[http_error(sdk_exc.HttpException, 503, "busy")] * 2)
    with pytest.raises(exceptions.BaremetalError, match="busy"):
        make_client(proxy, retries=1).get_node("u1")
    assert proxy.calls == 2


def test_500_not_retried() -> None:
    proxy = FakeProxy(http_error(sdk_exc.HttpException, 500, "kaboom"))
    with pytest.raises(exceptions.BaremetalError, match="kaboom"):
        make_client(proxy).get_node("u1")
    assert proxy.calls == 1


def test_400_is_invalid_input() -> None:
    proxy = FakeProxy(http_error(sdk_exc.BadRequestException, 400, "bad patch"))
    with pytest.raises(exceptions.InvalidInput, match="bad patch"):
        make_client(proxy).get_node("u1")


def test_dropped_connection_retried() -> None:
    proxy = FakeProxy(ks_exc.ConnectFailure("reset by peer"), NODE)
    assert make_client(proxy).get_node("u1")["uuid"] == "u1"
    proxy = FakeProxy(*[ks_exc.ConnectFailure("refused")] * 3)
    with pytest.raises(exceptions.BaremetalError, match="cannot reach Ironic"):
        make_client(proxy, retries=2).get_node("u1")


class TraitProxy:
    """remove_node_trait answering as a real Ironic 39 does."""

    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.calls = 0

    def remove_node_trait(self, node: str, trait: str, ignore_missing: bool) -> bool:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return True


def test_removing_a_trait_the_node_lacks_is_a_no_op() -> None:
    # the SDK ignores only a 400; Ironic 39 answers 404 for a missing trait
    missing = http_error(
        sdk_exc.NotFoundException, 404, "Node u1 doesn't have a trait 'CUSTOM_X'"
    )
    proxy = TraitProxy(missing)
    make_client(proxy).remove_trait("u1", "CUSTOM_X")
    assert proxy.calls == 1


def test_removing_a_trait_of_a_missing_node_is_not_found() -> None:
    gone = http_error(sdk_exc.NotFoundException, 404, "Node u1 could not be found.")
    with pytest.raises(exceptions.NotFound, match="could not be found"):
        make_client(TraitProxy(gone)).remove_trait("u1", "CUSTOM_X")


def test_each_call_is_one_debug_line(caplog: pytest.LogCaptureFixture) -> None:
    proxy = FakeProxy(http_error(sdk_exc.HttpException, 503, "busy"), NODE)
    with caplog.at_level("DEBUG", logger="inspector.baremetal.client"):
        make_client(proxy, retries=1).get_node("u1")
        with pytest.raises(exceptions.NodeNotFound):
            make_client(
                FakeProxy(http_error(sdk_exc.NotFoundException, 404, "no"))
            ).get_node("u2")
    lines = [
        r.getMessage() for r in caplog.records if r.getMessage().startswith("Ironic ")
    ]
    assert len(lines) == 2, lines
    assert lines[0].startswith("Ironic get node for u1: ok in ")
    assert lines[1].startswith("Ironic get node for u2: failed in ")


def test_an_answer_the_libraries_choke_on_is_an_ironic_error() -> None:
    """A broken version document (found with a hand-made stand-in) made
    keystoneauth raise TypeError, which reached the API as a 500."""
    client = make_client(FakeProxy(TypeError("string indices must be integers")))
    with pytest.raises(
        exceptions.BaremetalError, match="unexpected answer from Ironic"
    ):
        client.get_node("u1")
