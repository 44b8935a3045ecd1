"""The table of versioned features, walked version by version: ``GET /v1``,
the routing, the status fields, rule creation and the OpenAPI document
answer what it declares (the issue: 1.21 answered /v1/pxe-filters but
``GET /v1`` did not list it)."""

from typing import Any

import pytest

from inspector.api import app as api_app
from inspector.api import openapi, versions
from inspector.api.app import create_app
from tests.functional.conftest import Service

ALL = [(1, minor) for minor in range(versions.MINIMUM[1], versions.MAXIMUM[1] + 1)]


def _at(version: versions.Version) -> dict[str, str]:
    return {versions.HEADER: versions.format_version(version)}


def test_the_table() -> None:
    names = [f.name for f in versions.FEATURES]
    assert len(names) == len(set(names))
    assert {f.kind for f in versions.FEATURES} <= {"resource", "field", "behaviour"}
    assert all(
        versions.MINIMUM <= f.since <= versions.MAXIMUM for f in versions.FEATURES
    )
    assert versions.MAXIMUM == max(f.since for f in versions.FEATURES)
    assert all(f.path.startswith("/v1/") for f in versions.RESOURCES)
    with pytest.raises(KeyError):
        versions.since("no-such-feature")


def test_every_resource_is_routed_and_checked(service: Service) -> None:
    app = create_app(service.rt)
    rules = [rule.rule for rule in app.url_map.iter_rules()]
    for feature in versions.RESOURCES:
        assert feature.path in rules, feature
    newer = {f.name for f in versions.RESOURCES if f.since > versions.MINIMUM}
    assert {f.name for f in app.extensions[api_app.NEWER].values()} == newer


@pytest.mark.parametrize("version", ALL, ids=versions.format_version)
def test_root_and_routing_at(service: Service, version: versions.Version) -> None:
    body = service.client.get("/v1", headers=_at(version)).get_json()
    listed = [(r["name"], r["links"][0]["href"]) for r in body["resources"]]
    expected = [
        f for f in versions.FEATURES if f.kind == "resource" and f.since <= version
    ]
    assert [name for name, _ in listed] == [f.name for f in expected]
    assert all(
        href.endswith(f.path) for (_, href), f in zip(listed, expected, strict=True)
    )
    for feature in versions.RESOURCES:
        if feature.name == "continue":
            continue  # POST only
        resp = service.client.get(feature.path, headers=_at(version))
        if version < feature.since:
            assert resp.status_code == 404, (feature, resp.get_json())
            message = resp.get_json()["error"]["message"]
            assert f"needs version {versions.format_version(feature.since)}" in message
        else:
            assert resp.status_code == 200, (feature, resp.get_json())


def test_status_fields_at_each_version(service: Service, status_record: Any) -> None:
    uuid = status_record()
    fields = [f for f in versions.FEATURES if f.kind == "field"]
    assert fields
    for version in ALL:
        for path in (f"/v1/introspection/{uuid}", "/v1/introspection"):
            body: Any = service.client.get(path, headers=_at(version)).get_json()
            status = body if "uuid" in body else body["introspection"][0]
            for feature in fields:
                assert (feature.name in status) == (version >= feature.since), (
                    path,
                    version,
                    feature,
                )


def test_rule_creation_answer(service: Service) -> None:
    since = versions.since("rule-created-201")
    rule = {"actions": [{"action": "fail", "message": "never"}]}
    for version, code in (((since[0], since[1] - 1), 200), (since, 201)):
        resp = service.client.post("/v1/rules", json=rule, headers=_at(version))
        assert resp.status_code == code
        service.client.delete(f"/v1/rules/{resp.get_json()['uuid']}")


def test_openapi_versions_from_the_table() -> None:
    document = openapi.document()
    for path, operations in document["paths"].items():
        resource = versions.resource_at(path.split("{")[0].rstrip("/"))
        for op in operations.values():
            if resource is None or resource.since == versions.MINIMUM:
                assert openapi.MIN_VERSION not in op, path
            else:
                assert op[openapi.MIN_VERSION] == versions.format_version(
                    resource.since
                )
    declared = {(f["name"], f["since"]) for f in document["x-openstack-versioned"]}
    assert declared == {
        (f.name, versions.format_version(f.since)) for f in versions.FEATURES
    }
    for feature in versions.RESOURCES:
        assert feature.path in document["paths"], feature
