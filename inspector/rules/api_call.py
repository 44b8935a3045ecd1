"""The ``api-call`` rule action: a POST to an allowed host, with a timeout.

The host of ``url`` must be on ``[rules]api_call_allowed_hosts``: checked
when the rule is created (400) and again when it runs (the list may have
shrunk since). The host is written in the rule, never taken from a
variable (a variable may fill the path and the query). The call goes
through requests with the rule's ``timeout`` (seconds, default 10, at most
``[rules]api_call_max_timeout``) as a total deadline: the connection, the
request and the answer's status line and headers must all come within it
(a server that answers a byte at a time cannot stretch it; the body of the
answer is not read). The exchange runs in a thread of its own, which the
node's processing stops waiting for at the deadline. No redirects (a
redirect could leave the allowed hosts) and no proxies from the
environment. The body is ``body`` when given, else
``{"node_uuid": ..., "rule": ...}``. A failure (no answer in time, a
refused connection, an HTTP error status) ends the processing in error
naming the rule, the URL and the cause. In a trial it is not made: the
trial says it would be.
"""

import urllib.parse
from typing import Any

from inspector import exceptions
from inspector.processing.base import NodeContext
from inspector.rules.actions import RuleRun, RunAction

DEFAULT_TIMEOUT = 10.0


def _endpoint(url: str) -> tuple[str, int | None]:
    """(host, port) of ``url``.

    :raises ValueError: not an http(s) URL with a host.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"url {url!r} must be http:// or https://")
    if not parts.hostname:
        raise ValueError(f"url {url!r} has no host")
    if "{" in parts.netloc or "}" in parts.netloc:
        raise ValueError(f"url {url!r}: the host must be written, not a variable")
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"url {url!r}: {exc}") from None
    return parts.hostname.lower(), port


def allowed(url: str, hosts: tuple[str, ...] | list[str]) -> None:
    """:raises ValueError: ``url``'s host is not on ``hosts``."""
    host, port = _endpoint(url)
    for entry in hosts:
        entry_parts = urllib.parse.urlsplit("//" + entry.strip())
        if (entry_parts.hostname or "").lower() != host:
            continue
        try:
            entry_port = entry_parts.port
        except ValueError:
            continue
        if entry_port is None or entry_port == port:
            return
    raise ValueError(
        f"host {host}{f':{port}' if port else ''} of url is not on "
        f"[rules]api_call_allowed_hosts ({', '.join(hosts) or 'empty'})"
    )


class ApiCall(RunAction):
    """POST to ``url`` (its host on ``[rules]api_call_allowed_hosts``)."""

    PARAMS = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "minLength": 1},
            "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 300},
            "body": {},
            "headers": {
                "type": "object",
                "additionalProperties": {"type": "string"},
            },
        },
        "required": ["url"],
    }

    def validate(self, params: dict[str, Any]) -> None:
        _endpoint(params["url"])

    def apply_in(self, run: RuleRun, ctx: NodeContext, params: dict[str, Any]) -> None:
        url = str(params["url"])
        try:
            allowed(url, run.allowed_hosts)
        except ValueError as exc:
            raise exceptions.ProcessingError(f"api-call refused: {exc}") from None
        timeout = min(float(params.get("timeout", DEFAULT_TIMEOUT)), run.max_timeout)
        body = params.get("body", {"node_uuid": ctx.uuid, "rule": run.rule})
        note: dict[str, Any] = {"api_call": url, "timeout": timeout, "body": body}
        run.notes.append(note)
        if run.trial:
            note["called"] = False  # a trial reaches nothing
            return
        note["status"] = _post(url, body, params.get("headers") or {}, timeout)
        note["called"] = True


def _post(url: str, body: Any, headers: dict[str, str], timeout: float) -> int:
    """POST within ``timeout`` seconds in all; the answer's status."""
    import threading

    outcome: dict[str, Any] = {}

    def exchange() -> None:
        try:
            outcome["status"] = _exchange(url, body, headers, timeout)
        except BaseException as exc:  # handed to the waiting thread
            outcome["error"] = exc

    worker = threading.Thread(target=exchange, name="api-call", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        # its reads time out by themselves (each within the timeout); the
        # node does not wait for them
        raise exceptions.ProcessingError(
            f"api-call to {url} got no answer within {timeout:g} s"
        )
    if "error" in outcome:
        raise outcome["error"]
    return int(outcome["status"])


def _exchange(url: str, body: Any, headers: dict[str, str], timeout: float) -> int:
    import requests  # loaded by the first api-call only

    try:
        with requests.Session() as session:
            session.trust_env = False  # no proxy or netrc from the environment
            with session.post(
                url,
                json=body,
                headers=headers,
                timeout=(timeout, timeout),
                allow_redirects=False,
                stream=True,  # the status and headers only, unless it failed
            ) as response:
                if response.status_code < 300:
                    return response.status_code
                text = response.raw.read(200, decode_content=True)
    except requests.Timeout:
        raise exceptions.ProcessingError(
            f"api-call to {url} got no answer within {timeout:g} s"
        ) from None
    except requests.RequestException as exc:
        raise exceptions.ProcessingError(
            f"api-call to {url} failed: {exc.__class__.__name__}: {exc}"
        ) from None
    raise exceptions.ProcessingError(
        f"api-call to {url} answered HTTP {response.status_code}: "
        f"{text.decode('utf-8', 'replace')!r}"
    )
