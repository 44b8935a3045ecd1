"""Loopback for the lab's servers: free ports, whether something answers,
and the end of a server's log."""

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
