"""The hook as Ironic calls it: a task whose node is inspected, options
from oslo.config, the push's body, credentials, and no exception ever."""

import base64
import datetime
import logging
import pathlib
import time
import types
from typing import Any

import pytest
from inspector_push_hook import body, settings
from oslo_config import cfg

from tests.unit.push_hook.conftest import Service

NODE = "3be26c0b-03f2-4d7d-a6a1-4e5a8b7e6f03"
STARTED = datetime.datetime(2026, 12, 1, 10, 0, 0, 123456)


def task(**fields: Any) -> Any:
    """A task as the hook reads it: ``task.node`` and its fields."""
    node = {
        "uuid": NODE,
        "name": "rack1-3",
        "inspect_interface": "agent",
        "inspection_started_at": STARTED,
        **fields,
    }
    return types.SimpleNamespace(node=types.SimpleNamespace(**node))


def inventory() -> dict[str, Any]:
    return {"cpu": {"count": 8}, "interfaces": [], "disks": []}


def plugin_data() -> dict[str, Any]:
    return {"boot_interface": "01-52-54-00-00-00-03", "logs": "H4sIAAAA"}


def conf(tmp_path: pathlib.Path, **options: Any) -> cfg.ConfigOpts:
    """Ironic's configuration as the hook finds it (``state_path`` is
    Ironic's option)."""
    found = cfg.ConfigOpts()
    found.register_opt(cfg.StrOpt("state_path", default=str(tmp_path)))
    found([], default_config_files=[])
    settings.register(found)
    for name, value in options.items():
        found.set_override(name, value, group=settings.GROUP)
    return found


def test_the_options_are_listed_for_the_sample_generator() -> None:
    ((group, found),) = settings.list_opts()
    assert group == "inspector_push"
    names = {opt.name for opt in found}
    assert {"url", "auth_type", "timeout", "spool_dir", "spool_max"} <= names
    assert next(o for o in found if o.name == "password").secret


def test_the_body_keeps_the_logs_apart_and_the_plugin_data_as_it_was() -> None:
    data = plugin_data()

    push = body.build(task().node, inventory(), data)

    assert push == {
        "node_uuid": NODE,
        "node_name": "rack1-3",
        "inspect_interface": "agent",
        "inspection_started_at": "2026-12-01T10:00:00.123456+00:00",
        "inventory": inventory(),
        "plugin_data": {"boot_interface": "01-52-54-00-00-00-03"},
        "logs": "H4sIAAAA",
    }
    assert data == plugin_data()  # other hooks still see the logs


def test_times_are_written_in_utc() -> None:
    plus_two = datetime.timezone(datetime.timedelta(hours=2))
    aware = datetime.datetime(2026, 12, 1, 12, 0, 0, tzinfo=plus_two)
    assert body.utc_iso(aware) == "2026-12-01T10:00:00+00:00"
    assert body.utc_iso("2026-12-01T10:00:00") == "2026-12-01T10:00:00"
    assert body.utc_iso(None) is None


def test_what_json_cannot_hold_is_sent_as_text() -> None:
    raw = body.encode({"plugin_data": {"when": STARTED}})
    assert raw == b'{"plugin_data":{"when":"2026-12-01 10:00:00.123456"}}'


def test_the_hook_pushes_with_its_options(
    hook_module: Any, service: Service, tmp_path: pathlib.Path
) -> None:
    options = conf(
        tmp_path,
        url=service.url,
        auth_type="http_basic",
        username="ironic",
        password="s3cret",
    )
    hook = hook_module.PushHook(options)

    hook(task(), inventory(), plugin_data())

    assert [b["node_uuid"] for b in service.bodies] == [NODE]
    assert service.bodies[0]["logs"] == "H4sIAAAA"
    expected = "Basic " + base64.b64encode(b"ironic:s3cret").decode()
    assert service.headers[0]["Authorization"] == expected
    assert hook.dependencies == []  # Ironic reads it when it loads the hooks


def test_the_default_spool_is_below_ironics_state_path(
    hook_module: Any, closed_url: str, tmp_path: pathlib.Path
) -> None:
    hook = hook_module.PushHook(conf(tmp_path, url=closed_url))

    hook(task(), inventory(), plugin_data())

    assert len(list((tmp_path / "inspector_push").glob("*.json"))) == 1


def test_keystone_sends_the_token_of_ironics_session(
    hook_module: Any, service: Service, tmp_path: pathlib.Path
) -> None:
    hook = hook_module.PushHook(
        conf(tmp_path, url=service.url, auth_type="keystone", keystone_section="x")
    )
    hook._keystone = types.SimpleNamespace(get_token=lambda: "gAAAA-token")

    hook(task(), inventory(), plugin_data())

    assert service.headers[0]["X-Auth-Token"] == "gAAAA-token"


def test_keystone_without_ironic_spools_and_never_raises(
    hook_module: Any, service: Service, tmp_path: pathlib.Path
) -> None:
    # no ironic.common.keystone here: the token cannot be had
    hook = hook_module.PushHook(conf(tmp_path, url=service.url, auth_type="keystone"))

    hook(task(), inventory(), plugin_data())

    assert service.bodies == []
    assert len(list((tmp_path / "inspector_push").glob("*.json"))) == 1


def test_without_a_url_the_hook_does_nothing_and_says_so_once(
    hook_module: Any, tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    hook = hook_module.PushHook(conf(tmp_path))
    with caplog.at_level(logging.WARNING):
        hook(task(), inventory(), plugin_data())
        hook(task(), inventory(), plugin_data())

    assert caplog.text.count("url is not set") == 1


def test_a_node_without_a_start_time_is_not_pushed(
    hook_module: Any, service: Service, tmp_path: pathlib.Path
) -> None:
    hook = hook_module.PushHook(conf(tmp_path, url=service.url))

    hook(task(inspection_started_at=None), inventory(), plugin_data())

    assert service.bodies == []


@pytest.mark.parametrize(
    "broken",
    [
        types.SimpleNamespace(),  # no node at all
        types.SimpleNamespace(node=None),
        "not a task",
    ],
)
def test_the_hook_never_raises(
    hook_module: Any,
    service: Service,
    tmp_path: pathlib.Path,
    broken: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    hook = hook_module.PushHook(conf(tmp_path, url=service.url))

    hook(broken, inventory(), plugin_data())
    hook(task(), object(), None)  # what JSON cannot hold, sent as text

    assert "could not be pushed" in caplog.text or service.bodies


def test_options_that_cannot_be_read_never_raise(
    hook_module: Any, tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    hook = hook_module.PushHook(object())  # not a configuration at all

    hook(task(), inventory(), plugin_data())

    assert "could not be pushed" in caplog.text


def test_a_service_down_adds_at_most_the_timeout(
    hook_module: Any, closed_url: str, tmp_path: pathlib.Path
) -> None:
    hook = hook_module.PushHook(conf(tmp_path, url=closed_url, timeout=0.5))
    hook(task(), inventory(), plugin_data())  # the first call reads the options
    started = time.monotonic()

    for _ in range(5):
        hook(task(), inventory(), plugin_data())

    assert (time.monotonic() - started) / 5 < 0.5
