"""Delivering pushes within a bounded time: the inspection's own first,
then what the spool holds, in the time left; what the service did not
take is spooled, what it refused for good is dropped, and nothing is
raised.

The sending runs in a worker thread that the hook waits for at most
``timeout`` seconds, so Ironic's inspection (which holds the node's lock
meanwhile) is never held longer, even by a service that accepts the
connection and then answers byte by byte; such a worker ends on its own
(each request is bounded by the time left) and spools what it could not
deliver. The inspection's own push goes first: while its inspection is
Ironic's current one the service can check and take it; a spooled push
may be for an inspection Ironic has since replaced (the service refuses
it, and it is dropped).
"""

import logging
import threading
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from inspector_push_hook import body, sender
from inspector_push_hook.settings import Settings
from inspector_push_hook.spool import Spool

LOG = logging.getLogger(__name__)

MIN_SEND = 0.05
"""Seconds below which no request is started."""


class Delivery:
    """Sends pushes as ``settings`` say; ``auth`` gives each request's
    authentication headers (it may raise: the push is then spooled)."""

    def __init__(
        self,
        settings: Settings,
        auth: Callable[[], dict[str, str]],
        clock: Callable[[], float] = time.monotonic,
        url_opener: urllib.request.OpenerDirector | None = None,
    ) -> None:
        self.settings = settings
        self.spool = Spool(settings.spool_dir, settings.spool_max)
        self._auth = auth
        self._clock = clock
        self._opener = url_opener or sender.opener(settings)

    def push(self, push: dict[str, Any]) -> None:
        """Deliver ``push`` (see :func:`body.build`), waiting at most
        ``timeout`` seconds for it and the spool's resends."""
        node = str(push.get("node_uuid"))
        data = body.encode(push)
        deadline = self._clock() + self.settings.timeout
        worker = threading.Thread(
            target=self._guarded,
            args=(data, node, deadline),
            name=f"inspector-push-{node}",
            daemon=True,
        )
        worker.start()
        worker.join(self.settings.timeout)
        if worker.is_alive():
            LOG.warning(
                "Node %s: the push to %s did not end within %.1f s; Ironic's "
                "inspection goes on (the push ends, or is spooled, in the "
                "background)",
                node,
                self.settings.endpoint,
                self.settings.timeout,
            )

    def _guarded(self, data: bytes, node: str, deadline: float) -> None:
        try:
            self.deliver(data, node, deadline)
        except Exception:
            LOG.exception("Node %s: the inspection's push failed", node)

    def deliver(self, data: bytes, node: str, deadline: float) -> sender.Answer:
        """Send ``data`` (the push of ``node``) by ``deadline`` (of the
        clock), spool it or drop it; on success resend the spool."""
        answer = self._send(data, deadline)
        if answer.delivered:
            LOG.info(
                "Node %s: inspection pushed to %s (%s)",
                node,
                self.settings.endpoint,
                answer.status,
            )
            self.resend(deadline)
        elif answer.worth_retrying:
            self._keep(data, node, answer)
        else:
            LOG.warning(
                "Node %s: the service refused the inspection's push for good "
                "(HTTP %s: %s); it is not sent again",
                node,
                answer.status,
                answer.message,
            )
        return answer

    def _send(self, data: bytes, deadline: float) -> sender.Answer:
        remaining = deadline - self._clock()
        if remaining < MIN_SEND:
            return sender.Answer(None, "no time left")
        try:
            headers = self._auth()
        except Exception as exc:  # a Keystone that cannot be reached, ...
            return sender.Answer(None, f"no credentials: {type(exc).__name__}: {exc}")
        return sender.post(
            self._opener, self.settings.endpoint, data, headers, remaining
        )

    def _keep(self, data: bytes, node: str, answer: sender.Answer) -> None:
        why = answer.message
        if answer.status is not None:
            why = f"HTTP {answer.status}: {answer.message}"
        if not self.spool.enabled:
            LOG.warning(
                "Node %s: the service did not take the inspection's push (%s) "
                "and there is no spool: the push is lost",
                node,
                why,
            )
            return
        try:
            path = self.spool.add(data, node)
        except OSError as exc:
            LOG.warning(
                "Node %s: the service did not take the inspection's push (%s), "
                "and it could not be spooled in %s: %s",
                node,
                why,
                self.settings.spool_dir,
                exc,
            )
            return
        LOG.warning(
            "Node %s: the service did not take the inspection's push (%s): "
            "spooled as %s, sent again after a later inspection",
            node,
            why,
            path,
        )

    def resend(self, deadline: float) -> int:
        """Send spooled pushes, oldest first, until ``deadline`` or the
        first that fails again; how many were delivered."""
        delivered = 0
        with self.spool.resending() as mine:
            if not mine:
                return 0
            for entry in self.spool.entries():
                if deadline - self._clock() < MIN_SEND:
                    break
                try:
                    data = entry.read_bytes()
                except FileNotFoundError:
                    continue
                answer = self._send(data, deadline)
                if not answer.delivered and answer.worth_retrying:
                    break  # it stays, and so do the ones after it
                entry.unlink(missing_ok=True)
                if answer.delivered:
                    delivered += 1
                    LOG.info("Spooled inspection push %s delivered", entry.name)
                else:
                    LOG.warning(
                        "Spooled inspection push %s refused for good (HTTP %s: "
                        "%s): dropped",
                        entry.name,
                        answer.status,
                        answer.message,
                    )
        return delivered
