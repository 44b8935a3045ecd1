"""The dnsmasq backend: one file per MAC in dnsmasq's ``--dhcp-hostsdir``.

The format is ironic-inspector's, so an existing dnsmasq configuration
works unchanged: a file named after the MAC holding ``<mac>`` (allowed) or
``<mac>,ignore`` (denied), and the file ``unknown_hosts_filter`` holding the
wildcard ``*:*:*:*:*:*`` or ``*:*:*:*:*:*,ignore`` for every other MAC.
dnsmasq sees a file within a fraction of a second (inotify); each one is
written under a dot-name and renamed into place, so it never reads half a
line. Only entries that change are written.
"""

import logging
import os
import re
import signal

from inspector import exceptions
from inspector.pxe_filter.policy import Desired

LOG = logging.getLogger(__name__)

UNKNOWN_HOSTS_FILE = "unknown_hosts_filter"
WILDCARD = "*:*:*:*:*:*"
MAC = re.compile(r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$")
OPTION = "[dnsmasq_pxe_filter]dhcp_hostsdir"


class HostsDir:
    """The hostsdir as this process last wrote it (kept in memory)."""

    def __init__(self, path: str, purge: bool, pid_file: str = "") -> None:
        self.path = path
        self.purge = purge
        self.pid_file = pid_file
        """dnsmasq's pid-file: lets :meth:`compact` make it forget removed
        files (dnsmasq keeps a deleted file's record until SIGHUP)."""
        self._last: Desired | None = None
        self.written: dict[str, bool] = {}
        """MAC -> allowed, for every MAC file in the directory."""
        self.unknown: bool | None = None
        """What the wildcard file says (None: no file yet)."""

    def check(self) -> None:
        """:raises ConfigError: the directory is missing or not writable."""
        if not os.path.isdir(self.path):
            raise exceptions.ConfigError(
                f"Invalid configuration: {OPTION} {self.path} is not a directory "
                "(create it, writable by the service, readable by dnsmasq)"
            )
        if not os.access(self.path, os.W_OK | os.X_OK):
            raise exceptions.ConfigError(
                f"Invalid configuration: {OPTION} {self.path} is not writable by "
                "this service's user"
            )

    def prepare(self) -> None:
        """Empty the directory (``purge_dhcp_hostsdir``) or read what it holds."""
        for name in os.listdir(self.path):
            full = os.path.join(self.path, name)
            if not os.path.isfile(full):
                continue
            if self.purge or name.startswith(".tmp-"):
                os.remove(full)
                continue
            mac = name.lower()
            if name == UNKNOWN_HOSTS_FILE:
                self.unknown = not _read(full).endswith(",ignore")
            elif MAC.match(mac):
                self.written[mac] = not _read(full).endswith(",ignore")
        LOG.info(
            "PXE filter: %s %s (%d MAC entries kept)",
            "purged" if self.purge else "read",
            self.path,
            len(self.written),
        )

    def apply(self, desired: Desired) -> int:
        """Write the entries that differ from ``desired``; how many."""
        self._last = desired
        changed = 0
        for mac, allowed in desired.entries(frozenset(self.written)).items():
            if self.written.get(mac) is not allowed:
                self._write(mac, f"{mac}\n" if allowed else f"{mac},ignore\n")
                self.written[mac] = allowed
                changed += 1
        if self.unknown is not desired.unknown_allowed:
            line = WILDCARD if desired.unknown_allowed else f"{WILDCARD},ignore"
            self._write(UNKNOWN_HOSTS_FILE, line + "\n")
            self.unknown = desired.unknown_allowed
            changed += 1
        return changed

    def compact(self) -> int:
        """Remove the files of MACs Ironic no longer knows (they follow the
        wildcard anyway) and SIGHUP dnsmasq so it forgets them; only with
        ``pid_file``. How many files were removed."""
        if not self.pid_file or self._last is None:
            return 0
        stale = set(self.written) - self._last.allow - self._last.deny
        if not stale:
            return 0
        for mac in stale:
            try:
                os.remove(os.path.join(self.path, mac))
            except FileNotFoundError:
                pass
            del self.written[mac]
        try:
            with open(self.pid_file, encoding="ascii") as handle:
                os.kill(int(handle.read().split()[0]), signal.SIGHUP)
        except (OSError, ValueError, IndexError) as exc:
            LOG.warning(
                "PXE filter: removed %d entries of deleted ports but could not "
                "SIGHUP dnsmasq (%s): %s",
                len(stale),
                self.pid_file,
                exc,
            )
        else:
            LOG.info(
                "PXE filter: removed %d entries of deleted ports; dnsmasq reloaded",
                len(stale),
            )
        return len(stale)

    def counts(self) -> tuple[int, int]:
        """(allowed, denied) MAC entries."""
        allowed = sum(1 for a in self.written.values() if a)
        return allowed, len(self.written) - allowed

    def _write(self, name: str, content: str) -> None:
        final = os.path.join(self.path, name)
        temporary = os.path.join(self.path, f".tmp-{name}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, content.encode())
        finally:
            os.close(fd)
        os.replace(temporary, final)


def _read(path: str) -> str:
    with open(path, encoding="ascii", errors="replace") as handle:
        return handle.read().strip()
