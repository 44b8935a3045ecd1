"""Ironic's notifications: which say an inspection ended, the follower
recording the node read again from Ironic, and the start-up refusal
without a broker."""

from typing import Any

import oslo_messaging as messaging
import pytest
from oslo_config import cfg

from inspector import exceptions
from inspector.conf import ironic_follow
from inspector.db import hardware_runs
from inspector.follow import notified
from inspector.follow.poller import Follower
from inspector.runtime import Runtime
from tests.unit.follow.conftest import FakeIronic

A = "aaaaaaaa-0000-4000-8000-000000000001"


def payload(**fields: Any) -> dict[str, Any]:
    data = {
        "uuid": A,
        "event": "done",
        "previous_provision_state": "inspecting",
        "provision_state": "manageable",
        **fields,
    }
    return {
        "ironic_object.name": "NodeSetProvisionStatePayload",
        "ironic_object.data": data,
    }


@pytest.mark.parametrize(
    ("event_type", "body", "node"),
    [
        ("baremetal.node.provision_set.end", payload(), A),
        (
            "baremetal.node.provision_set.end",
            payload(previous_provision_state="inspect wait"),
            A,
        ),
        ("baremetal.node.provision_set.end", payload(event="provide"), None),
        (
            "baremetal.node.provision_set.end",
            payload(previous_provision_state="cleaning"),
            None,
        ),
        ("baremetal.node.provision_set.start", payload(), None),
        ("baremetal.node.provision_set.end", {"no": "object"}, None),
        ("baremetal.node.provision_set.end", "text", None),
        ("baremetal.node.provision_set.end", payload(uuid=None), None),
    ],
)
def test_which_notifications_end_an_inspection(
    event_type: str, body: Any, node: str | None
) -> None:
    assert notified.ended_inspection(event_type, body) == node


def test_a_notification_records_the_inspection_once(
    rt: Runtime, ironic: FakeIronic
) -> None:
    ironic.add(A, 10, interface="redfish")
    follower = Follower(rt)
    endpoint = notified.NotificationEndpoint(follower)

    result = endpoint.info(
        {}, "ironic-conductor.c1", notified.EVENT_TYPE, payload(), {}
    )
    endpoint.info({}, "ironic-conductor.c1", notified.EVENT_TYPE, payload(), {})

    assert result == messaging.NotificationResult.HANDLED
    history = hardware_runs.history(rt.db, A, limit=10)
    assert [(e.source, e.interface) for e in history] == [("ironic", "redfish")]
    report = follower.poll()  # the poll behind it finds it recorded
    assert report is not None and report.recorded == 0 and report.known == 1


def test_a_notification_while_ironic_is_away_is_left_to_the_poll(
    rt: Runtime, ironic: FakeIronic, caplog: pytest.LogCaptureFixture
) -> None:
    ironic.add(A, 10)
    ironic.fail["inspected_node"] = exceptions.BaremetalError("Ironic answered 503")
    follower = Follower(rt)

    notified.NotificationEndpoint(follower).info(
        {}, "x", notified.EVENT_TYPE, payload(), {}
    )

    assert hardware_runs.history(rt.db, A, limit=10) == []
    assert "not followed now" in caplog.text
    del ironic.fail["inspected_node"]
    assert follower.poll().recorded == 1  # type: ignore[union-attr]


def test_a_node_inspected_through_us_is_not_followed(
    rt: Runtime, ironic: FakeIronic
) -> None:
    ironic.add(A, 10, interface="inspector")
    assert not Follower(rt).record_notified(A)
    assert hardware_runs.history(rt.db, A, limit=10) == []


@pytest.mark.parametrize(
    ("options", "refused"),
    [
        ({}, True),
        ({("DEFAULT", "transport_url"): "fake://"}, True),
        ({("DEFAULT", "transport_url"): "rabbit://u:p@127.0.0.1:5672/"}, False),
        (
            {
                (
                    "oslo_messaging_notifications",
                    "transport_url",
                ): "rabbit://u:p@127.0.0.1:5672/"
            },
            False,
        ),
    ],
)
def test_notifications_need_a_broker(
    conf: cfg.ConfigOpts, options: dict[tuple[str, str], str], refused: bool
) -> None:
    conf.set_override("notifications", True, group="ironic_follow")
    ironic_follow.notification_url(conf)  # registers oslo.messaging's options
    for (group, name), value in options.items():
        conf.set_override(name, value, group=None if group == "DEFAULT" else group)
    if refused:
        with pytest.raises(exceptions.ConfigError, match="notifications"):
            ironic_follow.check(conf)
    else:
        ironic_follow.check(conf)
