"""What the inspector asks of Ironic: calls per machine and their CPU cost.

Ironic logs one ``ironic.api`` line per request. The benchmark counts the
lines written during a run, and afterwards replays each kind of call the
inspector makes against the then idle Ironic to measure the CPU time Ironic
spends on it. Together they say how many machines per second one Ironic
process can serve at most, whatever the inspector does.
"""

import collections
import datetime
import pathlib
import re
import time
from collections.abc import Callable, Iterable
from typing import Any

import requests

from lab import procstat

ACCESS = re.compile(r"ironic\.api .*? - (GET|POST|PUT|PATCH|DELETE) (\S+) - (\d{3}) ")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
PLAYER_LISTING = "GET /v1/nodes?fields="
"""The lab's ramdisk player watching power states: not the inspector."""


TIMED = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) .*?ironic\.api .*? - "
    r"(GET|POST|PUT|PATCH|DELETE) (\S+) - \d{3} \(([\d.]+)ms\)",
    re.M,
)
"""A request's line with when it was logged (as it ended) and how long it
took."""


class AccessLog:
    """Requests Ironic logged after this object was made."""

    def __init__(self, log_file: pathlib.Path) -> None:
        self.log_file = log_file
        self.offset = log_file.stat().st_size if log_file.exists() else 0

    def _text(self) -> str:
        with open(self.log_file, "rb") as log:
            log.seek(self.offset)
            return log.read().decode(errors="replace")

    def per_node(self, uuids: Iterable[str]) -> dict[str, collections.Counter[str]]:
        """For each of ``uuids``: ``METHOD /path`` (the node's UUID as
        ``<uuid>``) -> count of the requests naming it in their path."""
        wanted = set(uuids)
        found: dict[str, collections.Counter[str]] = {
            uuid: collections.Counter() for uuid in wanted
        }
        for match in ACCESS.finditer(self._text()):
            method, path = match.group(1), match.group(2)
            for uuid in set(UUID.findall(path)) & wanted:
                found[uuid][f"{method} {path.replace(uuid, '<uuid>')}"] += 1
        return found

    def first_arrivals(self, method: str, suffix: str) -> dict[str, float]:
        """Node UUID -> when Ironic got its first ``method`` request to a
        path ending in ``suffix`` (seconds since the epoch, local time:
        the line's time less the request's duration). When a request was
        sent, not when its effect could be seen: under load Ironic takes
        seconds to answer a power request."""
        found: dict[str, float] = {}
        for match in TIMED.finditer(self._text()):
            when, verb, path, millis = match.groups()
            if verb != method or not path.split("?")[0].endswith(suffix):
                continue
            for uuid in UUID.findall(path):
                ended = datetime.datetime.strptime(when, "%Y-%m-%d %H:%M:%S.%f")
                found.setdefault(uuid, ended.timestamp() - float(millis) / 1000)
        return found

    def calls(self) -> collections.Counter[str]:
        """``METHOD /path`` (UUIDs as ``<uuid>``) -> count, player excluded."""
        text = self._text()
        found: collections.Counter[str] = collections.Counter()
        for match in ACCESS.finditer(text):
            method, path = match.group(1), match.group(2)
            call = f"{method} {UUID.sub('<uuid>', path)}"
            if not call.startswith(PLAYER_LISTING):
                found[call] += 1
        return found


def _each(url: str, uuids: list[str]) -> dict[str, Callable[[str], Any]]:
    http = requests.Session()
    http.headers["X-OpenStack-Ironic-API-Version"] = "1.80"

    def ok(resp: requests.Response) -> None:
        resp.raise_for_status()

    def port_round_trip(uuid: str) -> None:
        mac = "02:1a:b0:" + ":".join(uuid[i : i + 2] for i in (0, 2, 4))
        resp = http.post(f"{url}/v1/ports", json={"node_uuid": uuid, "address": mac})
        ok(resp)
        ok(http.delete(f"{url}/v1/ports/{resp.json()['uuid']}"))

    return {
        "GET node": lambda u: ok(http.get(f"{url}/v1/nodes/{u}")),
        "GET ports of a node": lambda u: ok(
            http.get(f"{url}/v1/ports/detail?node_uuid={u}")
        ),
        "PUT boot device": lambda u: ok(
            http.put(
                f"{url}/v1/nodes/{u}/management/boot_device",
                json={"boot_device": "pxe", "persistent": False},
            )
        ),
        "PUT power reboot": lambda u: ok(
            http.put(f"{url}/v1/nodes/{u}/states/power", json={"target": "rebooting"})
        ),
        "PATCH node properties": lambda u: ok(
            http.patch(
                f"{url}/v1/nodes/{u}",
                json=[
                    {
                        "op": "add",
                        "path": "/extra/lab_probe",
                        "value": str(time.monotonic()),
                    }
                ],
            )
        ),
        "POST + DELETE port": port_round_trip,
        "PUT power off": lambda u: ok(
            http.put(f"{url}/v1/nodes/{u}/states/power", json={"target": "power off"})
        ),
    }


def cpu_per_call(
    url: str, pid: int, uuids: list[str], rounds: int = 20
) -> dict[str, float]:
    """Ironic CPU milliseconds per call, one call at a time on an idle Ironic.

    Power calls finish in a background worker of Ironic; a pause after each
    batch lets that work land in the measurement.
    """
    costs: dict[str, float] = {}
    for name, call in _each(url, uuids).items():
        time.sleep(0.5)
        before = procstat.cpu_seconds(pid)
        for index in range(rounds):
            call(uuids[index % len(uuids)])
        time.sleep(0.5)
        costs[name] = round((procstat.cpu_seconds(pid) - before) * 1000 / rounds, 1)
    return costs
