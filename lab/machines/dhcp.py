"""A real DHCP segment in network namespaces: dnsmasq servers and a client.

A "switch" namespace holds a bridge; each dnsmasq server and the client
get a namespace of their own joined to it by a veth pair, so several
servers can answer on one segment (each with its own pool). The client asks
with busybox ``udhcpc`` after taking the MAC to test. Addresses are from
192.0.2.0/24 (TEST-NET-1) inside the namespaces only. Two traps handled:
checksum offload is turned off on every veth end (udhcpc drops offers with
unfilled UDP checksums), and dnsmasq runs with ``no-ping`` (no 3 s delay
for a new MAC). Each server's configuration is the shipped sample
(etc/dnsmasq/dnsmasq-inspection.conf) with the segment's interface, pool
and paths put in, so the tests run what operators are given. Needs root,
iproute2, ethtool, dnsmasq and busybox; every namespace and process is
removed by :meth:`DhcpSegment.close`.
"""

import dataclasses
import os
import pathlib
import shutil
import signal
import subprocess
import time
import uuid

from lab import checkout

DNSMASQ = "/usr/sbin/dnsmasq"
SAMPLE = checkout.ROOT / "etc/dnsmasq/dnsmasq-inspection.conf"
"""The dnsmasq configuration shipped for the inspection network."""


def render_sample(replace: dict[str, str | None], extra: list[str]) -> str:
    """The shipped sample with the lines of each key in ``replace`` put in
    its place (``None`` drops them) and ``extra`` lines appended.

    Every key replaced must be in the sample, so the sample cannot lose a
    setting the tests rely on without the tests noticing."""
    lines, seen = [], set()
    for line in SAMPLE.read_text().splitlines():
        key = line.split("=", 1)[0].strip()
        if line.startswith("#") or key not in replace:
            lines.append(line)
        elif key not in seen:
            seen.add(key)
            if replace[key] is not None:
                lines.append(str(replace[key]))
    missing_keys = set(replace) - seen
    if missing_keys:
        raise ValueError(f"{SAMPLE} has no {sorted(missing_keys)} line")
    return "\n".join([*lines, *extra, ""])


class Unavailable(RuntimeError):
    """This machine cannot run the segment; the message says why."""


def missing() -> str | None:
    """What is missing to run a segment here, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "ethtool", "busybox"):
        if shutil.which(tool) is None and not os.path.exists(f"/usr/sbin/{tool}"):
            return f"{tool} is not installed (make packages)"
    if not os.path.exists(DNSMASQ):
        return "dnsmasq is not installed (Debian dnsmasq-base; make packages)"
    if not os.path.exists("/usr/sbin/iptables-restore"):
        return "iptables is not installed (make packages)"
    return None


def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=check, timeout=30)


def _ethtool() -> str:
    return shutil.which("ethtool") or "/usr/sbin/ethtool"


@dataclasses.dataclass
class Dnsmasq:
    """One dnsmasq server's files; its process is started by a command."""

    name: str
    namespace: str
    address: str
    pool: tuple[str, str]
    work_dir: pathlib.Path

    @property
    def conf_file(self) -> pathlib.Path:
        return self.work_dir / "dnsmasq.conf"

    @property
    def pid_file(self) -> pathlib.Path:
        return self.work_dir / "dnsmasq.pid"

    @property
    def log_file(self) -> pathlib.Path:
        return self.work_dir / "dnsmasq.log"

    @property
    def hostsdir(self) -> pathlib.Path:
        return self.work_dir / "hostsdir"

    @property
    def hostsfile(self) -> pathlib.Path:
        """Read instead of the hostsdir when the segment says so (SIGHUP)."""
        return self.work_dir / "hostsfile"

    def start_command(self) -> str:
        """The shell command that starts this dnsmasq (it daemonizes; its
        PID goes to the pid file): a PXE filter's dnsmasq_start_command."""
        return f"ip netns exec {self.namespace} {DNSMASQ} --conf-file={self.conf_file}"

    def stop_command(self) -> str:
        return f"kill $(cat {self.pid_file})"

    def pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def running(self) -> bool:
        pid = self.pid()
        if pid is None:
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    def kill(self) -> None:
        pid = self.pid()
        if pid is not None and self.running():
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 5
            while self.running() and time.monotonic() < deadline:
                time.sleep(0.05)


class DhcpSegment:
    """A bridged segment with ``servers`` dnsmasq servers and one client."""

    def __init__(
        self, work_dir: pathlib.Path, servers: int = 1, hostsfile: bool = False
    ) -> None:
        reason = missing()
        if reason:
            raise Unavailable(reason)
        self.work_dir = pathlib.Path(work_dir)
        self.tag = uuid.uuid4().hex[:6]
        self.hostsfile = hostsfile
        """Servers read one --dhcp-hostsfile instead of a --dhcp-hostsdir."""
        self.switch = f"dh{self.tag}-sw"
        self.client_ns = f"dh{self.tag}-cl"
        self.namespaces: list[str] = []
        self.servers = [
            Dnsmasq(
                name=f"dhcp-{n}",
                namespace=f"dh{self.tag}-s{n}",
                address=f"192.0.2.{n}",
                pool=(f"192.0.2.{100 + 20 * (n - 1)}", f"192.0.2.{119 + 20 * (n - 1)}"),
                work_dir=self.work_dir / f"dhcp-{n}",
            )
            for n in range(1, servers + 1)
        ]

    def start(self) -> None:
        """Make the namespaces and links and write each server's config
        (the servers are started by their start command)."""
        self._namespace(self.switch)
        _run("ip", "-n", self.switch, "link", "add", "br0", "type", "bridge")
        _run("ip", "-n", self.switch, "link", "set", "br0", "up")
        for index, server in enumerate(self.servers, 1):
            self._namespace(server.namespace)
            self._attach(server.namespace, f"s{index}", f"{server.address}/24")
            server.work_dir.mkdir(parents=True, exist_ok=True)
            server.hostsdir.mkdir(exist_ok=True)
            server.hostsfile.touch()
            hosts = (
                f"dhcp-hostsfile={server.hostsfile}"
                if self.hostsfile
                else f"dhcp-hostsdir={server.hostsdir}"
            )
            tftp_root = server.work_dir / "tftpboot"
            tftp_root.mkdir(exist_ok=True)
            server.conf_file.write_text(
                render_sample(
                    {
                        "interface": "interface=eth0",
                        "dhcp-range": f"dhcp-range={server.pool[0]},"
                        f"{server.pool[1]},255.255.255.0,2m",
                        "dhcp-hostsdir": hosts,
                        "dhcp-leasefile": "dhcp-leasefile="
                        f"{server.work_dir / 'leases'}",
                        "pid-file": f"pid-file={server.pid_file}",
                        "tftp-root": f"tftp-root={tftp_root}",
                        # the lab has no ironic-inspector user
                        "user": "user=root",
                        "group": None,
                    },
                    [f"log-facility={server.log_file}", "no-ping"],
                )
            )
        self._namespace(self.client_ns)
        self._attach(self.client_ns, "c", None)

    def _namespace(self, name: str) -> None:
        _run("ip", "netns", "add", name)
        self.namespaces.append(name)
        _run("ip", "-n", name, "link", "set", "lo", "up")

    def _attach(self, namespace: str, suffix: str, address: str | None) -> None:
        """A veth pair: ``eth0`` in ``namespace``, the other end on the bridge."""
        outer, inner = f"dh{self.tag}{suffix}", f"dh{self.tag}{suffix}i"
        _run("ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
        _run("ip", "link", "set", outer, "netns", self.switch)
        _run("ip", "link", "set", inner, "netns", namespace)
        _run("ip", "-n", namespace, "link", "set", inner, "name", "eth0")
        _run("ip", "-n", self.switch, "link", "set", outer, "master", "br0")
        _run("ip", "-n", self.switch, "link", "set", outer, "up")
        _run("ip", "-n", namespace, "link", "set", "eth0", "up")
        if address:
            _run("ip", "-n", namespace, "addr", "add", address, "dev", "eth0")
        for ns, dev in ((namespace, "eth0"), (self.switch, outer)):
            _run("ip", "netns", "exec", ns, _ethtool(), "-K", dev, "tx", "off")

    def offered(self, mac: str, tries: int = 2, wait: int = 1) -> str | None:
        """Ask for an address as ``mac``: the address offered, or None when
        no server answered (after ``tries`` discovers ``wait`` s apart)."""
        _run("ip", "-n", self.client_ns, "link", "set", "eth0", "down")
        _run("ip", "-n", self.client_ns, "link", "set", "eth0", "address", mac)
        _run("ip", "-n", self.client_ns, "link", "set", "eth0", "up")
        script = self.work_dir / "udhcpc-script.sh"
        if not script.exists():
            script.write_text(
                '#!/bin/sh\n[ "$1" = bound ] && echo "LEASE $ip"\nexit 0\n'
            )
            script.chmod(0o755)
        done = subprocess.run(
            [
                "ip", "netns", "exec", self.client_ns, "busybox", "udhcpc",
                "-i", "eth0", "-n", "-q", "-f", "-t", str(tries), "-T", str(wait),
                "-s", str(script),
            ],
            capture_output=True,
            text=True,
            timeout=tries * wait + 20,
            check=False,
        )  # fmt: skip
        for line in done.stdout.splitlines():
            if line.startswith("LEASE "):
                return line.split()[1]
        return None

    def close(self) -> None:
        for server in self.servers:
            server.kill()
        for name in reversed(self.namespaces):
            _run("ip", "netns", "del", name, check=False)
        self.namespaces.clear()

    def __enter__(self) -> "DhcpSegment":
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
