"""A ramdisk's post is shaped once: parsed by the API, serialised once into
the database, read once by the conductor, never deep-copied; its logs go
apart on arrival and never into a serialised document."""

import base64
import copy
import json
import pathlib
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from oslo_config import cfg

from inspector import states
from tests.functional.conftest import (
    Service,
    add_node,
    build_payload,
    random_mac,
    start,
)

LOGS = base64.b64encode(b"\x1f\x8bnot really a tarball").decode()
_DUMPS = json.dumps


class Counts:
    """Calls of json and copy whose document is the ramdisk's post."""

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.serialised = 0
        self.parsed = 0
        self.copied = 0
        self.logs_serialised = 0

    def _is_post(self, text: str) -> bool:
        # the processed data carries the same inventory, and "all_interfaces";
        # the hardware record and links name the MACs, but no "inventory"
        return (
            self.marker in text
            and '"inventory"' in text
            and '"all_interfaces"' not in text
        )

    def dumps(self, real: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        text = real(value, *args, **kwargs)
        self.serialised += self._is_post(text)
        self.logs_serialised += LOGS in text
        return text

    def dump(self, real: Any, value: Any, out: Any, *args: Any, **kw: Any) -> None:
        self.dumps(_DUMPS, value, *args, **kw)
        real(value, out, *args, **kw)

    def loads(self, real: Any, text: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(text, bytes | bytearray):
            decoded = text.decode("utf-8", "replace")
        else:
            decoded = str(text)
        self.parsed += self._is_post(decoded)
        return real(text, *args, **kwargs)

    def deepcopy(self, real: Any, value: Any, *args: Any) -> Any:
        self.copied += isinstance(value, dict) and "inventory" in value
        return real(value, *args)


@pytest.fixture
def counting() -> Iterator[Any]:
    """Start counting with ``counting(marker)``; the counts it returns."""
    patches: list[Any] = []

    def begin(marker: str) -> Counts:
        counts = Counts(marker)
        for module, name in (
            (json, "dumps"),
            (json, "dump"),
            (json, "loads"),
            (copy, "deepcopy"),
        ):
            real = getattr(module, name)
            method = getattr(counts, name)
            patch = mock.patch.object(
                module,
                name,
                side_effect=lambda *a, _r=real, _m=method, **k: _m(_r, *a, **k),
            )
            patch.start()
            patches.append(patch)
        return counts

    yield begin
    for patch in reversed(patches):
        patch.stop()


@pytest.mark.parametrize(
    ("store", "expected"),
    [
        # the API parses it and stores it; the conductor reads it
        ("database", (1, 2, 0)),
        # and files it: read from the database, written to unprocessed.json
        ("directory", (2, 3, 0)),
    ],
)
@pytest.mark.parametrize("error", [None, "disk on fire"])
def test_the_post_is_serialised_once_and_parsed_twice(
    service: Service,
    conf: cfg.ConfigOpts,
    tmp_path: pathlib.Path,
    counting: Any,
    error: str | None,
    store: str,
    expected: tuple[int, int, int],
) -> None:
    conf.set_override("store_data", store, group="processing")
    conf.set_override("store_data_dir", str(tmp_path / "store"), group="processing")
    (tmp_path / "logs").mkdir()
    conf.set_override("ramdisk_logs_dir", str(tmp_path / "logs"), group="processing")
    conf.set_override("always_store_ramdisk_logs", True, group="processing")
    node = add_node(service)
    uuid = start(service, node)
    mac = random_mac()
    data = build_payload(mac, node["driver_info"]["ipmi_address"])
    data["logs"] = LOGS
    data["error"] = error
    body = json.dumps(data)  # the ramdisk's side, not counted

    counts = counting(mac)
    resp = service.client.post(
        "/v1/continue", data=body, content_type="application/json"
    )
    assert resp.status_code == 200, resp.get_json()
    status = service.wait_for(uuid, *states.FINAL)
    assert status["state"] == (states.ERROR if error else states.FINISHED), status
    assert (counts.serialised, counts.parsed, counts.copied) == expected
    assert counts.logs_serialised == 0  # the logs stay the string posted
    assert list((tmp_path / "logs").iterdir()), "the logs were written"
