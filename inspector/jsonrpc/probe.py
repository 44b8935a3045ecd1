"""Whether the conductors' JSON-RPC endpoints answer: an authenticated
``ping`` to each, for ``/healthcheck`` and ``ironic-inspector-status``."""

import concurrent.futures
import dataclasses
from collections.abc import Callable

from inspector.jsonrpc.client import CallFailed, JsonRpcSender


@dataclasses.dataclass(frozen=True)
class PingResult:
    """One conductor's answer to a ping, or why there was none."""

    host: str
    url: str | None
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{self.host} {self.url or '(no endpoint published)'}: {self.detail}"


def ping(sender: JsonRpcSender, host: str, url: str | None) -> PingResult:
    if url is None:
        return PingResult(host, None, False, "published no JSON-RPC endpoint")
    try:
        result = sender.call(url, "ping", {})
    except CallFailed as exc:
        return PingResult(host, url, False, str(exc).removeprefix(f"{url}: "))
    answered = result.get("host") if isinstance(result, dict) else None
    if answered != host:
        return PingResult(host, url, False, f"answered as {answered!r}, not {host!r}")
    return PingResult(host, url, True, "answers")


def ping_all(
    sender: JsonRpcSender, hosts: list[str], endpoint: Callable[[str], str | None]
) -> list[PingResult]:
    """Every conductor at once (a dead one costs one timeout, not one each)."""
    if not hosts:
        return []
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(len(hosts), 8)) as pool:
        return list(pool.map(lambda h: ping(sender, h, endpoint(h)), hosts))


def summary(answers: list[PingResult]) -> tuple[bool, str]:
    """(at least one answers, one line naming each)."""
    if not answers:
        return False, "json-rpc: no live conductor to call"
    ok = [a for a in answers if a.ok]
    lines = "; ".join(a.line() for a in answers)
    return bool(
        ok
    ), f"json-rpc: {len(ok)} of {len(answers)} conductor(s) answer: {lines}"
