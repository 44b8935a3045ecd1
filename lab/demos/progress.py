"""A live progress line with per-state counts (or plain lines off a tty),
and the demos' watch of their introspections behind it."""

import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, TextIO

STATE_ORDER = ("starting", "waiting", "processing", "finished", "error")


class Progress:
    def __init__(
        self, total: int, stream: TextIO | None = None, width: int = 30
    ) -> None:
        self.total = total
        self.stream = stream or sys.stdout
        self.width = width
        self.tty = self.stream.isatty()
        self.started = time.monotonic()
        self._last_plain = 0.0

    def render(self, counts: dict[str, int]) -> str:
        done = counts.get("finished", 0) + counts.get("error", 0)
        filled = int(self.width * done / self.total) if self.total else self.width
        bar = "#" * filled + "-" * (self.width - filled)
        states = " ".join(f"{s}={counts[s]}" for s in STATE_ORDER if counts.get(s))
        others = " ".join(
            f"{s}={n}" for s, n in sorted(counts.items()) if s not in STATE_ORDER and n
        )
        elapsed = time.monotonic() - self.started
        return f"[{bar}] {done}/{self.total} {elapsed:5.1f}s {states} {others}".rstrip()

    def update(self, counts: dict[str, int]) -> None:
        line = self.render(counts)
        if self.tty:
            self.stream.write("\r\033[K" + line)
            self.stream.flush()
        elif time.monotonic() - self._last_plain >= 2.0:
            self._last_plain = time.monotonic()
            print(line, file=self.stream, flush=True)

    def finish(self, counts: dict[str, int]) -> None:
        line = self.render(counts)
        if self.tty:
            self.stream.write("\r\033[K" + line + "\n")
        else:
            print(line, file=self.stream)
        self.stream.flush()


def follow(
    poll: Callable[[], dict[str, dict[str, Any]]], count: int, timeout: float
) -> tuple[dict[str, dict[str, Any]], dict[str, float]]:
    """Look at ``poll``'s statuses (by node UUID) every 0.2 s with a
    progress line until ``count`` have finished or ``timeout`` passed; the
    last statuses and when each node was first seen finished."""
    progress = Progress(count)
    finished_at: dict[str, float] = {}
    deadline = time.monotonic() + timeout
    while True:
        statuses = poll()
        for uuid, status in statuses.items():
            if status["finished"] and uuid not in finished_at:
                finished_at[uuid] = time.monotonic()
        counts = Counter(s["state"] for s in statuses.values())
        progress.update(counts)
        if len(finished_at) == count or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    progress.finish(counts)
    return statuses, finished_at
