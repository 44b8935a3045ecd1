"""Loopback for the lab's servers: free ports, whether something answers,
and the end of a server's log; a host name for loopback."""

import ipaddress
import pathlib
import socket
import urllib.error
import urllib.request


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def answers_http(url: str) -> bool:
    """Whether ``url`` answers a GET with any HTTP status.

    :raises OSError: nothing listens there (yet).
    """
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True


def accepts(address: str | tuple[str, int]) -> bool:
    """Whether a Unix socket path or a TCP address accepts a connection
    (a TLS port, whose client may need a certificate, or a socket that no
    plain HTTP GET reaches).

    :raises OSError: nothing listens there (yet).
    """
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.settimeout(2)
        probe.connect(address)
    return True


def tail(path: pathlib.Path, chars: int = 2000) -> str:
    """The end of a server's log file, for error messages."""
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return "(no log)"


IRONIC_LOOPBACK_NAMES = ("localhost", "localhost.localdomain")
"""The host names Ironic takes for loopback (beside loopback addresses)."""


def named_loopback(
    hosts: pathlib.Path = pathlib.Path("/etc/hosts"),
) -> tuple[str, str] | None:
    """A host name of this machine that resolves to loopback addresses
    only, other than :data:`IRONIC_LOOPBACK_NAMES`, and its (first)
    address; None when there is none.

    Ironic refuses a loopback address as the ramdisk's callback URL, but
    not a name that resolves to one. Tried in order: the machine's own
    name (127.0.0.1 in many containers, 127.0.1.1 on Debian), then the
    other names ``hosts`` gives a 127.x address (``localhost4`` on
    Fedora).
    """
    candidates = [socket.gethostname()]
    try:
        lines = hosts.read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        fields = line.split("#", 1)[0].split()
        if len(fields) > 1 and fields[0].startswith("127."):
            candidates += fields[1:]
    for name in candidates:
        if name in IRONIC_LOOPBACK_NAMES or _is_address(name):
            continue
        try:
            found = socket.getaddrinfo(name, None, socket.AF_INET, socket.SOCK_STREAM)
        except OSError:
            continue
        addresses = [str(info[4][0]) for info in found]
        if addresses and all(ipaddress.ip_address(a).is_loopback for a in addresses):
            return name, addresses[0]
    return None


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
