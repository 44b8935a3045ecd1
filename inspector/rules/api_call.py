"""The ``api-call`` rule action: a POST to an allowed host, with a timeout.

The host of ``url`` must be on ``[rules]api_call_allowed_hosts``, by name
or by the addresses it resolves to (:func:`allowed`): checked when the
rule is created (400) and again when it runs (the list may have shrunk
since, a name may resolve elsewhere). The host is written in the rule,
never taken from a variable (a variable may fill the path and the query). The call goes
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

import ipaddress
import socket
import urllib.parse
from typing import Any

from inspector import exceptions
from inspector.hooks.base import NodeContext
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


def _entry(entry: str) -> tuple[str, int | None] | None:
    parts = urllib.parse.urlsplit("//" + entry.strip())
    try:
        return (parts.hostname or "").lower(), parts.port
    except ValueError:
        return None


def _addresses(host: str, port: int | None) -> set[str]:
    """The IP addresses ``host`` resolves to (an address: itself).

    :raises ValueError: it does not resolve.
    """
    try:
        found = socket.getaddrinfo(host, port or 80, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise ValueError(f"host {host} does not resolve: {exc}") from None
    return {
        ipaddress.ip_address(str(info[4][0]).split("%")[0]).compressed for info in found
    }


def allowed(url: str, hosts: tuple[str, ...] | list[str]) -> str | None:
    """Check ``url``'s host against ``hosts`` (``host`` or ``host:port``).

    A host is allowed when it is written as an entry is (a name the
    operator trusts, with its own DNS), or when the addresses it resolves
    to are among those of an entry (``http://10.0.0.5/`` for an entry
    ``hooks.example`` that resolves to 10.0.0.5, or a name for an entry
    that is an address). Over http the call then goes to the address that
    was checked (the name is sent as ``Host``), so a name resolving
    elsewhere by the time of the call reaches nothing else; over https
    every address of the host must be allowed, and the certificate is
    checked against the name as written.

    :returns: the address to connect to over http, None to connect to the
        host as written.
    :raises ValueError: the host is not allowed.
    """
    host, port = _endpoint(url)
    entries = [e for e in map(_entry, hosts) if e is not None]
    matching = [name for name, p in entries if p is None or p == port]
    if host in matching:
        return None
    if matching:
        try:
            wanted = _addresses(host, port)
        except ValueError:
            wanted = set()
        permitted: set[str] = set()
        for name in matching:
            try:
                permitted |= _addresses(name, port)
            except ValueError:
                continue  # an entry that does not resolve allows no address
        usable = sorted(wanted & permitted)
        https = urllib.parse.urlsplit(url).scheme == "https"
        if usable and (not https or wanted <= permitted):
            return usable[0]
    raise ValueError(
        f"host {host}{f':{port}' if port else ''} of url is not on "
        f"[rules]api_call_allowed_hosts ({', '.join(hosts) or 'empty'}), "
        "by name or by address"
    )


def _pinned(url: str, address: str) -> tuple[str, str]:
    """``url`` sent to ``address``, and the Host header it names."""
    parts = urllib.parse.urlsplit(url)
    userinfo, _at, hostport = parts.netloc.rpartition("@")
    ip = f"[{address}]" if ":" in address else address
    netloc = f"{userinfo}@" if userinfo else ""
    netloc += ip + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc)), hostport


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
            address = allowed(url, run.allowed_hosts)
        except ValueError as exc:
            raise exceptions.ProcessingError(f"api-call refused: {exc}") from None
        timeout = min(float(params.get("timeout", DEFAULT_TIMEOUT)), run.max_timeout)
        body = params.get("body", {"node_uuid": ctx.uuid, "rule": run.rule})
        note: dict[str, Any] = {"api_call": url, "timeout": timeout, "body": body}
        run.notes.append(note)
        if run.trial:
            note["called"] = False  # a trial reaches nothing
            return
        headers = dict(params.get("headers") or {})
        target = url
        if address is not None and url.lower().startswith("http:"):
            target, host = _pinned(url, address)
            headers = {"Host": host, **headers}
        note["status"] = _post(url, body, headers, timeout, target)
        note["called"] = True


def _post(
    url: str,
    body: Any,
    headers: dict[str, str],
    timeout: float,
    target: str | None = None,
) -> int:
    """POST to ``target`` (``url`` sent to a checked address; default
    ``url``) within ``timeout`` seconds in all; the answer's status.
    Messages name ``url``."""
    import threading

    outcome: dict[str, Any] = {}

    def exchange() -> None:
        try:
            outcome["status"] = _exchange(url, target or url, body, headers, timeout)
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


def _exchange(
    url: str, target: str, body: Any, headers: dict[str, str], timeout: float
) -> int:
    import requests  # loaded by the first api-call only

    try:
        with requests.Session() as session:
            session.trust_env = False  # no proxy or netrc from the environment
            with session.post(
                target,
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
