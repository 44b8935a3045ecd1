"""Requests, retries and error translation of the Ironic client (the
keystoneauth adapter is faked; answers are shaped as Ironic 39 sends them)."""

import json
import threading
from typing import Any

import pytest
from keystoneauth1 import exceptions as ks_exc
from oslo_config import cfg

from inspector import exceptions
from inspector.baremetal.client import NODE_FIELDS, BaremetalClient
from inspector.conf import opts
from lab.waiting import wait_until

BASE = "http://ironic.test:6385"


class Answer:
    """A requests.Response as far as the client reads one."""

    def __init__(self, status: int, body: Any = None, text: str | None = None) -> None:
        self.status_code = status
        self.text = text if text is not None else json.dumps(body) if body else ""
        self.content = self.text.encode()

    def json(self) -> Any:
        return json.loads(self.text)


def error(status: int, message: str) -> Answer:
    """Ironic's error body: JSON in a JSON string."""
    fault = json.dumps({"faultstring": message, "faultcode": "Client"})
    return Answer(status, {"error_message": fault})


class FakeAdapter:
    """Answers each request with the next scripted outcome; records them."""

    def __init__(self, *outcomes: Any, endpoint: str = BASE) -> None:
        self.outcomes = list(outcomes)
        self.requests: list[tuple[str, str, Any]] = []
        self.endpoint = endpoint

    def get_endpoint(self) -> str:
        return self.endpoint

    def request(self, url: str, method: str, **kwargs: Any) -> Any:
        self.requests.append((method, url, kwargs.get("json")))
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    @property
    def calls(self) -> int:
        return len(self.requests)


def make_client(adapter: Any, retries: int = 3) -> BaremetalClient:
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([])
    conf.set_override("max_retries", retries, group="ironic")
    conf.set_override("retry_interval", 0, group="ironic")
    client = BaremetalClient(conf)
    client._conn = adapter
    return client


NODE: dict[str, Any] = {
    "uuid": "u1",
    "name": "n1",
    "provision_state": "manageable",
    "power_state": "power off",
    "target_power_state": None,
    "maintenance": False,
    "driver": "fake-hardware",
    "driver_info": {},
    "properties": {},
    "extra": {},
    "reservation": None,
    "traits": [],
}
OK_NODE = Answer(200, NODE)


class Arrivals:
    """A lock that counts the callers that came to it."""

    def __init__(self, lock: Any) -> None:
        self._lock = lock
        self._guard = threading.Lock()
        self.count = 0

    def __enter__(self) -> None:
        with self._guard:
            self.count += 1
        self._lock.acquire()

    def __exit__(self, *_exc: object) -> None:
        self._lock.release()


def test_endpoint_looked_up_once_for_many_threads() -> None:
    """Finding the endpoint may read Keystone's catalog: once only."""
    made = []
    read = threading.Event()

    class SlowAdapter(FakeAdapter):
        def get_endpoint(self) -> str:
            made.append(1)
            assert read.wait(10)  # a catalog read takes a while: threads pile in
            return BASE

    client = make_client(SlowAdapter(*[OK_NODE] * 8))
    arrivals = Arrivals(client._lock)
    client._lock = arrivals  # type: ignore[assignment]
    threads = [threading.Thread(target=client.get_node, args=("n1",)) for _ in range(8)]
    for thread in threads:
        thread.start()
    wait_until(lambda: arrivals.count, 10, "8 threads at the lock", until=(8).__eq__)
    read.set()
    for thread in threads:
        thread.join()
    assert made == [1]


def test_get_node_names_its_fields_and_keeps_ironic_names() -> None:
    adapter = FakeAdapter(OK_NODE)
    node = make_client(adapter).get_node("n1")
    assert node["uuid"] == "u1" and node["maintenance"] is False
    method, url, _ = adapter.requests[0]
    assert method == "GET"
    assert url == f"{BASE}/v1/nodes/n1?fields={','.join(NODE_FIELDS)}"


def test_catalog_endpoint_with_v1_is_not_doubled() -> None:
    adapter = FakeAdapter(OK_NODE, endpoint=BASE + "/v1/")
    make_client(adapter).get_node("u1")
    assert adapter.requests[0][1].startswith(f"{BASE}/v1/nodes/u1?")


def test_listings_follow_pages() -> None:
    first = Answer(
        200,
        {
            "ports": [{"address": "AA:bb:cc:dd:ee:01"}],
            "next": f"{BASE}/v1/ports?fields=address&marker=p1",
        },
    )
    second = Answer(200, {"ports": [{"address": "aa:bb:cc:dd:ee:02"}]})
    adapter = FakeAdapter(first, second)
    found = make_client(adapter).list_port_addresses()
    assert found == {"aa:bb:cc:dd:ee:01", "aa:bb:cc:dd:ee:02"}
    assert [url for _, url, _ in adapter.requests] == [
        f"{BASE}/v1/ports?fields=address",
        f"{BASE}/v1/ports?fields=address&marker=p1",
    ]


def test_writes_send_ironic_bodies() -> None:
    adapter = FakeAdapter(
        Answer(204), Answer(202), Answer(200, NODE), Answer(201, {"uuid": "p1"})
    )
    client = make_client(adapter)
    client.set_boot_device("u1")
    client.set_power_state("u1", "rebooting")
    client.patch_node("u1", [{"op": "add", "path": "/properties/cpus", "value": 2}])
    client.create_port("u1", {"address": "aa", "pxe_enabled": True, "bogus": 1})
    assert adapter.requests == [
        (
            "PUT",
            f"{BASE}/v1/nodes/u1/management/boot_device",
            {"boot_device": "pxe", "persistent": False},
        ),
        ("PUT", f"{BASE}/v1/nodes/u1/states/power", {"target": "rebooting"}),
        (
            "PATCH",
            f"{BASE}/v1/nodes/u1",
            [{"op": "add", "path": "/properties/cpus", "value": 2}],
        ),
        (
            "POST",
            f"{BASE}/v1/ports",
            {"node_uuid": "u1", "address": "aa", "pxe_enabled": True},
        ),
    ]


def test_locked_then_success_is_retried() -> None:
    adapter = FakeAdapter(error(409, "Node u1 is locked by host c1"), OK_NODE)
    assert make_client(adapter).get_node("u1")["uuid"] == "u1"
    assert adapter.calls == 2


def test_locked_forever_is_node_locked() -> None:
    adapter = FakeAdapter(*[error(409, "Node u1 is locked by host c1")] * 4)
    with pytest.raises(exceptions.NodeLocked, match="locked"):
        make_client(adapter, retries=3).get_node("u1")
    assert adapter.calls == 4


def test_other_conflict_not_retried() -> None:
    adapter = FakeAdapter(error(409, "A port with MAC address x already exists"))
    with pytest.raises(exceptions.Conflict, match="already exists"):
        make_client(adapter).create_port("u1", {"address": "x"})
    assert adapter.calls == 1


def test_not_found() -> None:
    adapter = FakeAdapter(error(404, "Node nope could not be found."))
    with pytest.raises(exceptions.NodeNotFound, match="nope"):
        make_client(adapter).get_node("nope")


def test_503_retried_then_error() -> None:
    adapter = FakeAdapter(*[error(503, "busy")] * 2)
    with pytest.raises(exceptions.BaremetalError, match="busy"):
        make_client(adapter, retries=1).get_node("u1")
    assert adapter.calls == 2


def test_500_not_retried() -> None:
    adapter = FakeAdapter(error(500, "boom"))
    with pytest.raises(exceptions.BaremetalError, match="boom"):
        make_client(adapter).get_node("u1")
    assert adapter.calls == 1


def test_400_is_invalid_input() -> None:
    adapter = FakeAdapter(error(400, "bad patch"))
    with pytest.raises(exceptions.InvalidInput, match="bad patch"):
        make_client(adapter).patch_node("u1", [])


def test_dropped_connection_retried() -> None:
    adapter = FakeAdapter(ks_exc.ConnectFailure("reset by peer"), OK_NODE)
    assert make_client(adapter).get_node("u1")["uuid"] == "u1"
    adapter = FakeAdapter(*[ks_exc.ConnectFailure("refused")] * 3)
    with pytest.raises(exceptions.BaremetalError, match="cannot reach Ironic"):
        make_client(adapter, retries=2).get_node("u1")


def test_deleting_a_missing_port_is_a_no_op() -> None:
    adapter = FakeAdapter(error(404, "Port p1 could not be found."))
    make_client(adapter).delete_port("p1")
    assert adapter.calls == 1


def test_removing_a_trait_the_node_lacks_is_a_no_op() -> None:
    adapter = FakeAdapter(error(404, "Node u1 doesn't have a trait 'CUSTOM_X'"))
    make_client(adapter).remove_trait("u1", "CUSTOM_X")
    assert adapter.calls == 1


def test_removing_a_trait_of_a_missing_node_is_not_found() -> None:
    adapter = FakeAdapter(error(404, "Node u1 could not be found."))
    with pytest.raises(exceptions.NotFound, match="could not be found"):
        make_client(adapter).remove_trait("u1", "CUSTOM_X")


def test_each_call_is_one_debug_line(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("DEBUG", logger="inspector.baremetal.client"):
        make_client(FakeAdapter(error(503, "busy"), OK_NODE), retries=1).get_node("u1")
        with pytest.raises(exceptions.NodeNotFound):
            make_client(FakeAdapter(error(404, "no"))).get_node("u2")
    lines = [
        r.getMessage() for r in caplog.records if r.getMessage().startswith("Ironic ")
    ]
    assert len(lines) == 2, lines
    assert lines[0].startswith("Ironic get node for u1: ok in ")
    assert lines[1].startswith("Ironic get node for u2: failed in ")


def test_an_answer_that_is_not_json_is_an_ironic_error() -> None:
    """A proxy's HTML page where Ironic should answer: an Ironic error, not
    a 500 of ours."""
    adapter = FakeAdapter(Answer(200, text="<html>gateway</html>"))
    with pytest.raises(exceptions.BaremetalError, match="unexpected answer"):
        make_client(adapter).get_node("u1")


def test_an_error_page_that_is_not_json_keeps_its_text() -> None:
    adapter = FakeAdapter(Answer(502, text="Bad Gateway"))
    with pytest.raises(exceptions.BaremetalError, match="Bad Gateway"):
        make_client(adapter, retries=0).get_node("u1")


def test_names_in_urls_are_quoted() -> None:
    adapter = FakeAdapter(OK_NODE)
    make_client(adapter).get_node("rack 1/node?2")
    assert "/v1/nodes/rack%201%2Fnode%3F2?fields=" in adapter.requests[0][1]


@pytest.mark.parametrize("text", ["[1, 2]", '"a string"', ""])
def test_an_answer_that_is_no_object_is_an_ironic_error(text: str) -> None:
    adapter = FakeAdapter(Answer(200, text=text))
    with pytest.raises(exceptions.BaremetalError, match="unexpected answer|no node"):
        make_client(adapter).get_node("u1")


def test_ironic_inspection_calls() -> None:
    """[redfish]engine = ironic: the provision action, and the inventory
    at microversion 1.81 (that request only)."""
    headers: list[Any] = []

    class Recording(FakeAdapter):
        def request(self, url: str, method: str, **kwargs: Any) -> Any:
            headers.append(kwargs.get("headers"))
            return super().request(url, method, **kwargs)

    stored = {"inventory": {"cpu": {"count": 2}}, "plugin_data": {}}
    adapter = Recording(Answer(202), Answer(200, stored))
    client = make_client(adapter)
    client.set_provision_state("u1", "inspect")
    assert client.get_inventory("u1") == stored
    assert adapter.requests == [
        ("PUT", f"{BASE}/v1/nodes/u1/states/provision", {"target": "inspect"}),
        ("GET", f"{BASE}/v1/nodes/u1/inventory", None),
    ]
    assert headers == [None, {"X-OpenStack-Ironic-API-Version": "1.81"}]
