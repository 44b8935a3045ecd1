"""A private network link for multicast tests: a network namespace joined to
the root namespace by a veth pair, and a watch on the host's other
interfaces for mDNS packets sent out of them.

Multicast needs an interface with the MULTICAST flag: a namespace's own
``lo`` has only LOOPBACK, so a veth pair it is. The root end gets
``10.213.N.1/30`` and the namespace end ``10.213.N.2/30``, N chosen so that
no route of the host covers the pair; nothing is routed beyond the pair.
Needs root and iproute2's ``ip``.
"""

import dataclasses
import ipaddress
import os
import random
import shutil
import socket
import struct
import subprocess
import threading

MDNS_PORT = 5353

_ETH_P_ALL = 0x0003
_PACKET_OUTGOING = 4


class Unavailable(RuntimeError):
    """This machine cannot make the link; the message says why."""


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["ip", *args], capture_output=True, text=True, check=check, timeout=30
    )


def _free_subnet() -> ipaddress.IPv4Network:
    taken = []
    for line in _ip("-4", "route", "show", "table", "all").stdout.splitlines():
        first = line.split()[0] if line.split() else ""
        if first in ("local", "broadcast") and len(line.split()) > 1:
            first = line.split()[1]
        try:
            taken.append(ipaddress.ip_network(first, strict=False))
        except ValueError:
            continue
    candidates = list(range(256))
    random.shuffle(candidates)
    for n in candidates:
        subnet = ipaddress.IPv4Network(f"10.213.{n}.0/30")
        if not any(subnet.overlaps(net) for net in taken if net.prefixlen):
            return subnet
    raise Unavailable("every 10.213.N.0/30 overlaps a route of this host")


@dataclasses.dataclass
class Link:
    """A namespace and the veth pair to it (see the module's docstring)."""

    namespace: str
    host_interface: str
    peer_interface: str
    host_address: str
    peer_address: str

    @classmethod
    def create(cls) -> "Link":
        """Make the namespace and the pair, both ends up.

        :raises Unavailable: not root, no ``ip``, or ``ip`` refused (its
            message included).
        """
        if os.geteuid() != 0:
            raise Unavailable("network namespaces need root")
        if shutil.which("ip") is None:
            raise Unavailable("iproute2's ip is not installed")
        tag = f"{os.getpid() % 100000}{random.randrange(100)}"
        subnet = _free_subnet()
        host, peer = (str(a) for a in list(subnet.hosts())[:2])
        link = cls(f"inspector-mdns-{tag}", f"imd{tag}h", f"imd{tag}p", host, peer)
        try:
            _ip("netns", "add", link.namespace)
            _ip(
                "link", "add", link.host_interface, "type", "veth",
                "peer", "name", link.peer_interface, "netns", link.namespace,
            )  # fmt: skip
            _ip("addr", "add", f"{host}/30", "dev", link.host_interface)
            _ip("link", "set", link.host_interface, "up")
            link.run("ip", "addr", "add", f"{peer}/30", "dev", link.peer_interface)
            link.run("ip", "link", "set", link.peer_interface, "up")
            link.run("ip", "link", "set", "lo", "up")
        except subprocess.CalledProcessError as exc:
            link.delete()
            raise Unavailable(
                f"{' '.join(exc.cmd)} failed: {exc.stderr.strip()}"
            ) from exc
        return link

    def command(self, *argv: str) -> list[str]:
        """``argv`` run inside the namespace."""
        return ["ip", "netns", "exec", self.namespace, *argv]

    def run(self, *argv: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*argv),
            capture_output=True,
            text=True,
            check=True,
            timeout=timeout,
        )

    def flags(self, interface: str) -> set[str]:
        """The interface's link flags inside the namespace (MULTICAST, UP...)."""
        out = self.run("ip", "-o", "link", "show", interface).stdout
        return set(out.split("<", 1)[1].split(">", 1)[0].split(","))

    def delete(self) -> None:
        """Remove the pair and the namespace; safe to call twice."""
        # deleting the root end deletes its peer, deleting the namespace the rest
        _ip("link", "delete", self.host_interface, check=False)
        _ip("netns", "delete", self.namespace, check=False)

    def exists(self) -> bool:
        return self.namespace in _ip("netns", "list").stdout.split()


@dataclasses.dataclass(frozen=True)
class SentPacket:
    interface: str
    destination: str


class OutgoingMdnsWatch:
    """Records every UDP packet to port 5353 that leaves a root-namespace
    interface other than ``allowed`` and ``lo`` while it runs (a packet
    socket on all interfaces; root only). ``lo`` is left out: what goes
    there stays in the host (zeroconf sends to its own veth address by
    ``lo``). Use as a context manager."""

    def __init__(self, allowed: str) -> None:
        self.allowed = allowed
        self.seen: list[SentPacket] = []
        self.on_allowed = 0
        self._stop = threading.Event()
        self._sock = socket.socket(
            socket.AF_PACKET, socket.SOCK_RAW, socket.htons(_ETH_P_ALL)
        )
        self._sock.settimeout(0.2)
        self._thread = threading.Thread(target=self._read, daemon=True)

    def __enter__(self) -> "OutgoingMdnsWatch":
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                frame, address = self._sock.recvfrom(65535)
            except TimeoutError:
                continue
            except OSError:
                return
            if address[2] != _PACKET_OUTGOING:
                continue
            destination = _mdns_destination(frame, address[1])
            if destination is None:
                continue
            name = address[0]
            if name == self.allowed:
                self.on_allowed += 1
            elif name != "lo":
                self.seen.append(SentPacket(name, destination))


def _mdns_destination(frame: bytes, ethertype: int) -> str | None:
    """The destination address of a UDP packet to port 5353 in an Ethernet
    frame (IPv4 or IPv6, no extension headers), else None. ``ethertype``
    is in host order, as a packet socket's address gives it."""
    payload = frame[14:]
    if ethertype == 0x0800 and len(payload) >= 20:
        header = (payload[0] & 0x0F) * 4
        if payload[9] != socket.IPPROTO_UDP or len(payload) < header + 4:
            return None
        (port,) = struct.unpack("!H", payload[header + 2 : header + 4])
        return socket.inet_ntoa(payload[16:20]) if port == MDNS_PORT else None
    if ethertype == 0x86DD and len(payload) >= 44:
        if payload[6] != socket.IPPROTO_UDP:
            return None
        (port,) = struct.unpack("!H", payload[42:44])
        if port != MDNS_PORT:
            return None
        return socket.inet_ntop(socket.AF_INET6, payload[24:40])
    return None
