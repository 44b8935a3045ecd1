"""The expected cabling (``[inventory]expected_cabling``): which switch
port each NIC of a node should be seen on.

One rule a line, four comma-separated fields (CSV quoting allowed)::

    # node, nic, switch, port
    rack1-*,       eth0,              rack1-tor, Ethernet1/*
    compute-0042,  52:54:00:12:34:56, 00:1c:73:aa:bb:cc, Ethernet7

``node`` is a node name or a shell-style pattern (``*``, ``?``, ``[..]``)
on names, or a node UUID; ``nic`` an interface name or a MAC address;
``switch`` the switch's LLDP system name or chassis id; ``port`` its LLDP
port id, a pattern allowed. Blank lines and lines starting with ``#`` are
skipped. The first rule that matches a node's NIC decides.
"""

import csv
import dataclasses
import fnmatch
import re

from inspector import exceptions

FIELDS = ("node", "nic", "switch", "port")
OPTION = "[inventory]expected_cabling"
_MAC = re.compile(r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$")


class Malformed(ValueError):
    """The file cannot be used; the message names the file and the line."""


@dataclasses.dataclass(frozen=True)
class CablingRule:
    """One line of the file."""

    line: int
    node: str
    nic: str
    switch: str
    port: str

    def matches_node(self, uuid: str, name: str | None) -> bool:
        if self.node.lower() == uuid.lower():
            return True
        return name is not None and fnmatch.fnmatchcase(name, self.node)

    def matches_nic(self, mac: str, nic_name: str | None) -> bool:
        if _MAC.match(self.nic.lower()):
            return mac.lower() == self.nic.lower()
        return nic_name == self.nic

    def switch_ok(self, switch_id: str | None, switch_name: str | None) -> bool:
        return self.switch in (switch_id, switch_name) or (
            switch_id is not None and self.switch.lower() == switch_id.lower()
        )

    def port_ok(self, port_id: str | None) -> bool:
        return port_id is not None and fnmatch.fnmatchcase(port_id, self.port)


def parse(text: str, source: str) -> list[CablingRule]:
    """The rules of ``text`` (the file ``source``).

    :raises Malformed: naming ``source`` and the first bad line.
    """
    rules = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            fields = next(csv.reader([line], skipinitialspace=True, strict=True))
        except csv.Error as exc:
            raise Malformed(f"{source} line {number}: {exc}") from None
        fields = [f.strip() for f in fields]
        if len(fields) != len(FIELDS):
            raise Malformed(
                f"{source} line {number}: expected {len(FIELDS)} comma-separated "
                f"fields ({', '.join(FIELDS)}), found {len(fields)}"
            )
        for name, value in zip(FIELDS, fields, strict=True):
            if not value:
                raise Malformed(f"{source} line {number}: the {name} is empty")
        nic = fields[1]
        if ":" in nic and not _MAC.match(nic.lower()):
            raise Malformed(
                f"{source} line {number}: {nic[:40]!r} is not a MAC address "
                "(six hexadecimal pairs separated by colons) or a NIC name"
            )
        rules.append(CablingRule(number, *fields))
    return rules


def load(path: str) -> list[CablingRule]:
    """The rules of file ``path``.

    :raises Malformed: it cannot be read or a line is bad.
    """
    try:
        with open(path, encoding="utf-8") as stream:
            text = stream.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise Malformed(f"{path} cannot be read: {exc}") from None
    return parse(text, path)


def configured(path: str | None) -> list[CablingRule]:
    """The rules of the configured file (none when it is unset): what the
    start-up check, the CLI and the API's first read share.

    :raises ConfigError: naming the option, the file and the bad line.
    """
    if not path:
        return []
    try:
        return load(path)
    except Malformed as exc:
        raise exceptions.ConfigError(
            f"Invalid configuration: {OPTION}: {exc}"
        ) from None
