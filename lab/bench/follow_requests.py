"""What the follower asked of Ironic, read back from Ironic's API log
(lab/bench/follow.py): each request's kind, their counts, and the polls
with how long each took."""

import collections
import datetime
import pathlib
from typing import Any

from lab.bench.stats import percentile
from lab.servers.ironic_log import ACCESS, TIMED, UUID

POLL = "poll (page after the marker)"
SCAN = "whole scan (first page)"


def kind_of(method: str, path: str) -> str:
    """What the inspector's request to Ironic was, for the counts."""
    if method == "GET" and path.startswith("/v1/nodes?"):
        if "sort_key=inspection_finished_at" in path:
            return POLL
        if "fields=uuid&" in path or path.endswith("fields=uuid"):
            return "reconcile node list page"
        if "marker=" in path:
            return "whole scan page"
        return SCAN
    if method == "GET" and path.endswith("/inventory"):
        return "inventory"
    if method == "GET" and UUID.fullmatch(path.split("?")[0].rsplit("/", 1)[-1]):
        return "node (marker check)"
    return f"{method} {UUID.sub('<uuid>', path.split('?')[0])}"


class Requests:
    """Ironic's API requests logged after this object was made, by kind."""

    def __init__(self, log_file: pathlib.Path) -> None:
        self.log_file = log_file
        self.offset = log_file.stat().st_size if log_file.exists() else 0

    def text(self) -> str:
        with open(self.log_file, "rb") as log:
            log.seek(self.offset)
            return log.read().decode(errors="replace")

    def counts(self) -> collections.Counter[str]:
        return collections.Counter(
            kind_of(m.group(1), m.group(2)) for m in ACCESS.finditer(self.text())
        )


def polls_in(text: str) -> list[dict[str, Any]]:
    """The follower's polls in Ironic's API log ``text``: each from its
    marker check (or a whole scan's first page) to its last request, with
    the inventories it read and how long Ironic took to answer those."""
    polls: list[dict[str, Any]] = []
    for match in TIMED.finditer(text):
        when, method, path, millis = match.groups()
        end = datetime.datetime.strptime(when, "%Y-%m-%d %H:%M:%S.%f").timestamp()
        kind = kind_of(method, path)
        if kind in ("node (marker check)", SCAN):
            start = end - float(millis) / 1000
            polls.append({"start": start, "end": end, "inventory_ms": []})
        elif polls:
            polls[-1]["end"] = end
            if kind == "inventory":
                polls[-1]["inventory_ms"].append(float(millis))
    return polls


def poll_timeline(polls: list[dict[str, Any]]) -> dict[str, Any]:
    """What the polls that read inventories took: each one's nodes, its
    seconds and the wait before it (from the end of the poll before);
    Ironic's answer to an inventory read and a node's turn (the poll's
    wall per node read: its read and its record, less what reads made
    ahead hide), p50 in ms."""
    rows, ironic_ms, turn_ms = [], [], []
    for before, poll in zip(polls, polls[1:], strict=False):
        nodes = len(poll["inventory_ms"])
        if not nodes:
            continue
        seconds = poll["end"] - poll["start"]
        rows.append(
            {
                "nodes": nodes,
                "seconds": round(seconds, 1),
                "wait_before_s": round(poll["start"] - before["end"], 1),
            }
        )
        ironic_ms += poll["inventory_ms"]
        turn_ms.append(seconds * 1000 / nodes)
    return {
        "polls": rows,
        "inventory_read_ms_p50": round(percentile(ironic_ms, 50), 1),
        "turn_ms_p50": round(percentile(turn_ms, 50), 1),
    }
