"""Ironic's API log read back: which requests it answered, and when.

Ironic logs one ``ironic.api`` line per request (the lab's stand-in writes
the same lines), so what the inspector asked of Ironic during a run is the
lines written since it began: counted per call by the benchmarks, per node
by the out-of-band demo (no power or boot-device call may name a machine
inspected out of band).
"""

import collections
import datetime
import pathlib
import re
from collections.abc import Iterable

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
