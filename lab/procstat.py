"""CPU time and memory of the lab's processes, read from /proc."""

import os
import pathlib


def _children(pid: int) -> list[int]:
    result = []
    for task in pathlib.Path(f"/proc/{pid}/task").glob("*"):
        try:
            text = (task / "children").read_text()
        except OSError:
            continue
        result += [int(c) for c in text.split()]
    return result


def children(pid: int) -> list[int]:
    """Direct children of ``pid``."""
    return _children(pid)


def tree(pid: int) -> list[int]:
    """``pid`` and all its descendants."""
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        todo += _children(current)
    return pids


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its descendants."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for each in tree(pid):
        try:
            fields = pathlib.Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1]
        except OSError:
            continue
        parts = fields.split()
        total += int(parts[11]) + int(parts[12])
    return total / ticks


def _stat_fields(pid: int) -> list[str] | None:
    try:
        return pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def own_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` alone (no children)."""
    parts = _stat_fields(pid)
    if parts is None:
        return 0.0
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def lifetime_cpu_seconds(pid: int) -> float:
    """CPU seconds of ``pid``'s tree, including children already reaped.

    Each live process counts its own time and that of the children it has
    waited for (cutime, cstime), so a process that ran and ended between
    two readings still shows in the difference, through its parent; a
    daemon that double-forked away from the tree does not.
    """
    total = 0
    for each in tree(pid):
        parts = _stat_fields(each)
        if parts is not None:
            total += sum(int(p) for p in parts[11:15])
    return total / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int) -> float:
    """Peak resident memory (VmHWM) of one process, in MiB."""
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def host_cpu_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of the whole host since boot, from /proc/stat."""
    fields = [int(x) for x in pathlib.Path("/proc/stat").read_text().split()[1:9]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)
