"""Host addresses as listeners take them and URLs spell them."""

import ipaddress


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def is_ip(host: str) -> bool:
    """Whether ``host`` is an IP address (an IPv6 one maybe in brackets),
    not a name."""
    return _ip(host) is not None


def is_wildcard(host: str) -> bool:
    """Whether listening on ``host`` means every address of the machine
    (``0.0.0.0``, ``::``, or none given)."""
    found = _ip(host)
    return not host.strip("[]") or (found is not None and found.is_unspecified)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (a name is assumed to reach
    other hosts)."""
    found = _ip(host)
    return found is not None and found.is_loopback


def url_host(host: str) -> str:
    """``host`` as the host part of a URL: an IPv6 address in brackets."""
    bare = host.strip("[]")
    return f"[{bare}]" if ":" in bare else host
