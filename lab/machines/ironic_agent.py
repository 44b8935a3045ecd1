"""Ironic's own in-band inspection of a lab machine (inspect interface
``agent``): nothing boots; the lab posts the machine's ramdisk data to
Ironic's ``/v1/continue_inspection`` as ironic-python-agent would."""

import time
from typing import Any

from lab.machines.enroll import IronicAPI
from lab.waiting import wait_until

CONTINUE = {"X-OpenStack-Ironic-API-Version": "1.96"}
"""The version Ironic 39's lookup and continue_inspection answer at."""


def inspect(api: IronicAPI, uuid: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Ironic inspects ``uuid`` with ``payload`` as the ramdisk's post;
    the node once its inspection ended in ``manageable``.

    :raises AssertionError: it ended in ``inspect failed`` (Ironic's
        ``last_error`` said).
    """
    node, _took = inspect_timed(api, uuid, payload)
    return node


def inspect_timed(
    api: IronicAPI, uuid: str, payload: dict[str, Any], interval: float = 0.2
) -> tuple[dict[str, Any], float]:
    """:func:`inspect`, and the seconds from the ramdisk's post to
    ``manageable`` (the stretch Ironic's inspection hooks run in), the end
    watched every ``interval`` seconds."""
    api.request(
        "PATCH",
        f"/v1/nodes/{uuid}",
        json=[{"op": "replace", "path": "/inspect_interface", "value": "agent"}],
    )
    api.request("PUT", f"/v1/nodes/{uuid}/states/provision", json={"target": "inspect"})
    wait_until(
        lambda: api.node(uuid)["provision_state"],
        60,
        f"{uuid} to wait in Ironic's inspect wait",
        until=lambda state: state == "inspect wait",
        interval=min(interval, 0.2),
    )
    posted = time.monotonic()
    api.request("POST", "/v1/continue_inspection", json=payload, headers=CONTINUE)
    node: dict[str, Any] = wait_until(
        lambda: api.node(uuid),
        60,
        f"{uuid} to end Ironic's inspection",
        until=lambda n: n["provision_state"] in ("manageable", "inspect failed"),
        interval=interval,
    )
    took = time.monotonic() - posted
    assert node["provision_state"] == "manageable", node["last_error"]
    return node, took
