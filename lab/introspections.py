"""Introspections through the public API, as an operator's script does
them: every one started, several at a time, and all of them listed."""

import concurrent.futures
import threading
import time
from typing import Any

import requests


def states(url: str, version: str | None = None) -> dict[str, dict[str, Any]]:
    """Every introspection's status by node UUID (one listing, no limit),
    at API ``version`` when given."""
    headers = {"X-OpenStack-Ironic-Inspector-API-Version": version} if version else {}
    listing = f"{url}/v1/introspection?limit=0"
    answer = requests.get(listing, headers=headers, timeout=30)
    return {i["uuid"]: i for i in answer.json()["introspection"]}


def start_all(url: str, uuids: list[str], workers: int = 8) -> dict[str, float]:
    """Start every introspection, ``workers`` at a time; when each was
    accepted (``time.monotonic()``) by node UUID."""
    local = threading.local()

    def start(uuid: str) -> tuple[str, float]:
        if not hasattr(local, "http"):
            local.http = requests.Session()
        try:
            resp = local.http.post(f"{url}/v1/introspection/{uuid}", timeout=60)
        except requests.ConnectionError:
            # Apache's event MPM closes idle keep-alive connections when its
            # workers are busy; one reused at that moment is closed before
            # the request is read: again, on a new connection
            local.http = requests.Session()
            resp = local.http.post(f"{url}/v1/introspection/{uuid}", timeout=60)
        if resp.status_code != 202:
            raise RuntimeError(
                f"Starting introspection of {uuid} failed: "
                f"{resp.status_code} {resp.text}"
            )
        return uuid, time.monotonic()

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        return dict(pool.map(start, uuids))
