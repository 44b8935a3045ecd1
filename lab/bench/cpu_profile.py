"""Where the CPU goes: py-spy on every inspector process during a bench run.

``make bench BENCH_PROFILE=dir`` samples each process (and its children,
so Apache's mod_wsgi daemons too) only while the introspections run, with
``--gil`` so that only the thread doing Python work counts, then prints
the share of the samples each library and each of our functions takes.
py-spy is a separate tool (``pip install py-spy`` anywhere on PATH); it
costs CPU itself, so a profiled run's machines/s are not comparable to
an unprofiled one's.
"""

import collections
import pathlib
import re
import shutil
import signal
import subprocess

from lab import procstat

RATE = 250
"""Samples per second and process."""

LIBRARIES = (
    ("oslo.messaging, kombu, amqp", r"oslo_messaging/|kombu/|amqp/"),
    ("tooz, etcd3gw", r"tooz/|etcd3gw/"),
    ("requests, urllib3", r"requests/|urllib3/"),
    ("SQLAlchemy", r"sqlalchemy/"),
    ("psycopg2, sqlite3", r"psycopg2/|sqlite3/"),
    ("Flask, Werkzeug", r"flask/|werkzeug/"),
    ("http.client, socket", r"http/client|socket\.py"),
    ("logging, oslo.log", r"logging/|oslo_log/"),
    ("json", r"json/"),
    ("oslo.config", r"oslo_config/"),
)

_OURS = re.compile(r"([\w.<>]+) \((inspector/[^:]+)")


class Profiler:
    """py-spy attached to a set of processes until :meth:`stop`."""

    def __init__(self, directory: pathlib.Path, pids: dict[str, int]) -> None:
        self.directory = directory
        self.pids = pids
        self._running: list[subprocess.Popen[bytes]] = []

    @staticmethod
    def missing() -> str | None:
        if shutil.which("py-spy"):
            return None
        return "py-spy is not on PATH (pip install py-spy)"

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        for name, pid in self.pids.items():
            for each in procstat.tree(pid):
                out = self.directory / f"{name}-{each}.txt"
                self._running.append(
                    subprocess.Popen(
                        [
                            "py-spy",
                            "record",
                            "--gil",
                            "--nonblocking",
                            "-r",
                            str(RATE),
                            "-f",
                            "raw",
                            "-o",
                            str(out),
                            "-p",
                            str(each),
                        ],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )

    def stop(self) -> None:
        for proc in self._running:
            proc.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
        for proc in self._running:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def report(self) -> str:
        by_process: dict[str, collections.Counter[str]] = {}
        totals: collections.Counter[str] = collections.Counter()
        for path in sorted(self.directory.glob("*.txt")):
            name = path.stem.rsplit("-", 1)[0]
            counts = by_process.setdefault(name, collections.Counter())
            for line in path.read_text().splitlines():
                stack, _, number = line.rpartition(" ")
                if not stack or not number.isdigit():
                    continue
                samples = int(number)
                totals[name] += samples
                for label, pattern in LIBRARIES:
                    if re.search(pattern, stack):
                        counts["lib " + label] += samples
                seen = set()
                for frame in stack.split(";"):
                    match = _OURS.match(frame)
                    if match and match.group(0) not in seen:
                        seen.add(match.group(0))
                        counts[f"{match.group(1)} ({match.group(2)})"] += samples
        lines = []
        for name, counts in by_process.items():
            total = totals[name]
            if not total:
                continue
            lines.append(
                f"{name}: {total} samples ({total / RATE:.1f} CPU s at {RATE}/s)"
            )
            ranked = counts.most_common()
            for key, value in [(k, v) for k, v in ranked if k.startswith("lib ")]:
                lines.append(f"  {100 * value / total:5.1f} %  {key[4:]}")
            ours = [(k, v) for k, v in ranked if not k.startswith("lib ")]
            for key, value in ours[:20]:
                lines.append(f"  {100 * value / total:5.1f} %  {key}")
        return "\n".join(lines)
