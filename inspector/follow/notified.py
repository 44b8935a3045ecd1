"""Following Ironic's inspections by its notifications: a listener on
Ironic's versioned notifications topic records an inspection moments
after Ironic finishes it, where polling would wait for its next poll.

Ironic sends no inspection event of its own: an inspection that ends
well shows as ``baremetal.node.provision_set.end`` with the event
``done`` from ``inspecting`` (or ``inspect wait``) to ``manageable``. The
node is read again from Ironic (its times and interface, one request),
so a notification never says more than Ironic's API does: a forged one
can at most make the follower look at a node sooner.

Every conductor listens in one pool, so the broker hands each
notification to one of them; the row compared and swapped in
:func:`inspector.db.followed.record` keeps a notification and a poll
from both recording one inspection. Notifications are lossy: the poll
runs beside them.
"""

import logging
from typing import Any

import oslo_messaging as messaging
from oslo_config import cfg

from inspector import exceptions
from inspector.follow import poller

LOG = logging.getLogger(__name__)

POOL = "ironic-inspector-follow"
"""The listeners' pool: each notification goes to one conductor."""
EVENT_TYPE = "baremetal.node.provision_set.end"
INSPECTING = ("inspecting", "inspect wait")


def ended_inspection(event_type: str, payload: Any) -> str | None:
    """The node whose inspection the notification says ended well; None
    for any other notification."""
    if event_type != EVENT_TYPE or not isinstance(payload, dict):
        return None
    data = payload.get("ironic_object.data")
    if not isinstance(data, dict):
        return None
    if data.get("event") != "done":
        return None
    if data.get("previous_provision_state") not in INSPECTING:
        return None
    uuid = data.get("uuid")
    return uuid if isinstance(uuid, str) and uuid else None


class NotificationEndpoint:
    """oslo.messaging's endpoint: ``info`` notifications only."""

    filter_rule = messaging.NotificationFilter(
        event_type=r"^baremetal\.node\.provision_set\.end$"
    )

    def __init__(self, follower: poller.Follower) -> None:
        self.follower = follower

    def info(
        self,
        ctxt: Any,
        publisher_id: str,
        event_type: str,
        payload: Any,
        metadata: Any,
    ) -> Any:
        uuid = ended_inspection(event_type, payload)
        if uuid is None:
            return messaging.NotificationResult.HANDLED
        try:
            self.follower.record_notified(uuid)
        except poller.Stop as exc:
            # the poll records it when Ironic answers again
            LOG.warning(
                "Node %s: Ironic's notification of an ended inspection was "
                "not followed now: %s",
                uuid,
                exc,
            )
        except exceptions.DatabaseUnavailable as exc:
            LOG.warning(
                "Node %s: Ironic's notification of an ended inspection was "
                "not followed now (the database is unreachable: %s); the "
                "next poll records it",
                uuid,
                exc.reason,
            )
        return messaging.NotificationResult.HANDLED


class Listener:
    """The notification listener of one conductor process."""

    def __init__(self, conf: cfg.ConfigOpts, follower: poller.Follower) -> None:
        transport = messaging.get_notification_transport(conf)
        target = messaging.Target(
            topic=conf.ironic_follow.notification_topic,
            exchange=conf.ironic_follow.notification_exchange,
        )
        self._listener = messaging.get_notification_listener(
            transport,
            [target],
            [NotificationEndpoint(follower)],
            executor="threading",
            pool=POOL,
        )
        self._topic = conf.ironic_follow.notification_topic

    def start(self) -> None:
        self._listener.start()
        LOG.info(
            "Following Ironic's inspections by its notifications too (topic %s)",
            self._topic,
        )

    def stop(self) -> None:
        self._listener.stop()
        self._listener.wait()
