"""/healthcheck and /metrics on the standalone app (real SQLite and conductor)."""

import dataclasses
from typing import Any

import pytest
from oslo_config import cfg
from prometheus_client import parser

from inspector import states
from inspector.api.app import create_app
from inspector.db import engine
from tests.functional.conftest import Service, add_node, random_mac, start


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in parser.text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def _metric(text: str, name: str, **labels: str) -> float:
    return _samples(text).get((name, tuple(sorted(labels.items()))), 0.0)


def test_healthcheck_reports_each_backend(service: Service) -> None:
    resp = service.client.get("/healthcheck")
    assert resp.status_code == 200
    assert resp.get_data(as_text=True).splitlines() == [
        "database: OK",
        "coordination: OK",
        "messaging: OK",
    ]
    assert service.client.head("/healthcheck").status_code == 204
    body = service.client.get(
        "/healthcheck", headers={"Accept": "application/json"}
    ).get_json()
    assert body == {
        "detailed": False,
        "reasons": ["database: OK", "coordination: OK", "messaging: OK"],
    }


def test_healthcheck_details_only_when_enabled(
    service: Service, conf: cfg.ConfigOpts
) -> None:
    conf.set_override("detailed", True, group="healthcheck")
    client = create_app(service.rt).test_client()
    body = client.get("/healthcheck", headers={"Accept": "application/json"}).get_json()
    details = {r["reason"]: r["details"] for r in body["reasons"]}
    assert details["database: OK"].startswith("sqlite:///")
    assert "standalone" in details["coordination: OK"]


def test_healthcheck_names_a_broken_database(service: Service, tmp_path: Any) -> None:
    # a database file in a directory that does not exist cannot be opened
    broken = engine.Database(f"sqlite:///{tmp_path}/missing/dir/db.sqlite")
    client = create_app(dataclasses.replace(service.rt, db=broken)).test_client()
    resp = client.get("/healthcheck")
    assert resp.status_code == 503
    assert resp.get_data(as_text=True).splitlines()[0] == "database: FAILED"
    assert client.head("/healthcheck").status_code == 503
    # the API itself still answers: only the check failed
    assert client.get("/").status_code == 200
    broken.dispose()


def test_healthcheck_source_ranges(service: Service, conf: cfg.ConfigOpts) -> None:
    conf.set_override("allowed_source_ranges", ["10.0.0.0/8"], group="healthcheck")
    client = create_app(service.rt).test_client()
    assert client.get("/healthcheck").status_code == 404  # the API's own 404
    resp = client.get("/healthcheck", environ_base={"REMOTE_ADDR": "10.1.2.3"})
    assert resp.status_code == 200


@pytest.mark.parametrize(
    "group,path", [("healthcheck", "/healthcheck"), ("metrics", "/metrics")]
)
def test_paths_can_be_disabled(
    service: Service, conf: cfg.ConfigOpts, group: str, path: str
) -> None:
    conf.set_override("enabled", False, group=group)
    client = create_app(service.rt).test_client()
    resp = client.get(path)
    assert resp.status_code == 404
    assert "error" in resp.get_json()  # the v1 API answered


def test_metrics_follow_an_introspection(service: Service, payload: Any) -> None:
    service.rt.conf.set_override("final_states_interval", 0, group="metrics")
    before = service.client.get("/metrics").get_data(as_text=True)
    node = add_node(service)
    uuid = start(service, node)
    waiting = service.client.get("/metrics").get_data(as_text=True)
    assert (
        _metric(waiting, "ironic_inspector_introspections", state="waiting")
        >= _metric(before, "ironic_inspector_introspections", state="waiting") + 1
    )
    data = payload(random_mac(), node["driver_info"]["ipmi_address"])
    assert service.client.post("/v1/continue", json=data).status_code == 200
    service.wait_for(uuid, *states.FINAL)
    resp = service.client.get("/metrics")
    assert resp.status_code == 200
    assert resp.headers["Content-Type"].startswith("text/plain; version=")
    after = resp.get_data(as_text=True)

    def grew(name: str, **labels: str) -> float:
        return _metric(after, name, **labels) - _metric(before, name, **labels)

    assert grew("ironic_inspector_introspections", state="finished") >= 1
    assert grew("ironic_inspector_processing_seconds_count", result="success") >= 1
    assert grew("ironic_inspector_lock_wait_seconds_count") >= 2  # start, process
    assert _metric(after, "ironic_inspector_conductors_alive") == 1
    assert service.client.post("/metrics").status_code == 405
    assert service.client.head("/metrics").get_data() == b""


def test_metrics_count_the_history_once_per_interval(
    service: Service, payload: Any
) -> None:
    """Finished and error are recounted every final_states_interval (they
    grow with the history); work in progress is counted at every scrape."""
    conf = service.rt.conf
    conf.set_override("final_states_interval", 0, group="metrics")
    before = service.client.get("/metrics").get_data(as_text=True)  # counted now
    conf.clear_override("final_states_interval", group="metrics")
    assert conf.metrics.final_states_interval == 60
    node = add_node(service)
    uuid = start(service, node)
    waiting = service.client.get("/metrics").get_data(as_text=True)
    name = "ironic_inspector_introspections"
    assert _metric(waiting, name, state="waiting") == (
        _metric(before, name, state="waiting") + 1
    )
    data = payload(random_mac(), node["driver_info"]["ipmi_address"])
    assert service.client.post("/v1/continue", json=data).status_code == 200
    service.wait_for(uuid, states.FINISHED)
    cached = service.client.get("/metrics").get_data(as_text=True)
    assert _metric(cached, name, state="waiting") == _metric(
        before, name, state="waiting"
    )
    assert _metric(cached, name, state="finished") == _metric(
        before, name, state="finished"
    )
    conf.set_override("final_states_interval", 0, group="metrics")
    fresh = service.client.get("/metrics").get_data(as_text=True)
    assert _metric(fresh, name, state="finished") == (
        _metric(before, name, state="finished") + 1
    )


def test_metrics_unavailable_database_is_503(service: Service, tmp_path: Any) -> None:
    broken = engine.Database(f"sqlite:///{tmp_path}/missing/dir/db.sqlite")
    client = create_app(dataclasses.replace(service.rt, db=broken)).test_client()
    resp = client.get("/metrics")
    assert resp.status_code == 503
    body = resp.get_data(as_text=True)
    assert body.startswith("Metrics cannot be collected (Service temporarily")
    assert str(tmp_path) not in body and "sqlite" not in body  # the log's
    broken.dispose()
