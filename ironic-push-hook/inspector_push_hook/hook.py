"""The hook Ironic loads: entry point ``inspector_push`` of the group
``ironic.inspection.hooks``, enabled by appending ``inspector_push`` to
Ironic's ``[inspector]hooks`` (agent inspection) and
``[redfish]inspection_hooks`` (redfish inspection).

The one module that imports Ironic (its hook base class, and its
keystoneauth helpers for ``auth_type = keystone``): it is imported only
inside Ironic, where those are installed. Ironic runs ``__call__`` holding
the node's lock, before its rules and before it stores the inventory; an
exception would fail the inspection, so none leaves it.
"""

import base64
import logging
import threading
from collections.abc import Callable
from typing import Any

from ironic.drivers.modules.inspector.hooks.base import InspectionHook

from inspector_push_hook import body, settings
from inspector_push_hook.delivery import Delivery

LOG = logging.getLogger(__name__)


class PushHook(InspectionHook):
    """Pushes each inspection, its inventory, plugin data and ramdisk logs
    to the service; never raises, never holds the inspection longer than
    ``[inspector_push]timeout``."""

    def __init__(self, conf: Any = None) -> None:
        """``conf``: Ironic's configuration (oslo.config's global, which
        Ironic parsed before loading its hooks)."""
        self._conf = conf
        self._guard = threading.Lock()
        self._delivery: Delivery | None = None
        self._off = False
        self._keystone: Any = None

    def __call__(self, task: Any, inventory: Any, plugin_data: Any) -> None:
        node = getattr(getattr(task, "node", None), "uuid", None)
        try:
            delivery = self._ready()
            if delivery is None:
                return
            push = body.build(task.node, inventory, plugin_data)
            if push["inspection_started_at"] is None:
                # the service checks the push against this time in Ironic
                LOG.info(
                    "Node %s: Ironic shows no inspection start time: the "
                    "inspection is not pushed",
                    node,
                )
                return
            delivery.push(push)
        except Exception:
            LOG.exception(
                "Node %s: the inspection could not be pushed to the service "
                "(Ironic's inspection goes on)",
                node,
            )

    def _ready(self) -> Delivery | None:
        """The delivery, made from the options at the first call; None
        when ``[inspector_push]url`` is not set."""
        if self._delivery is not None or self._off:
            return self._delivery
        with self._guard:
            if self._delivery is None and not self._off:
                conf = self._conf
                if conf is None:
                    from oslo_config import cfg

                    conf = self._conf = cfg.CONF
                settings.register(conf)
                found = settings.from_conf(conf)
                if not found.url:
                    LOG.warning(
                        "[%s]url is not set: the inspection hook inspector_push "
                        "pushes nothing",
                        settings.GROUP,
                    )
                    self._off = True
                    return None
                self._delivery = Delivery(found, self._auth(found))
        return self._delivery

    def _auth(self, found: settings.Settings) -> Callable[[], dict[str, str]]:
        """What makes each request's authentication headers."""
        if found.auth_type == "http_basic":
            pair = f"{found.username or ''}:{found.password or ''}".encode()
            header = {"Authorization": "Basic " + base64.b64encode(pair).decode()}
            return lambda: header
        if found.auth_type == "keystone":
            return lambda: {"X-Auth-Token": self._token(found.keystone_section)}
        return dict

    def _token(self, section: str) -> str:
        """A token of Ironic's service user from the keystoneauth options
        of ``section`` (keystoneauth keeps it until it expires)."""
        if self._keystone is None:
            from ironic.common import keystone

            auth = keystone.get_auth(section)
            self._keystone = keystone.get_session(section, auth=auth)
        return str(self._keystone.get_token())
