"""The iptables backend: one chain of MAC rules in front of the DHCP server.

ironic-inspector's layout: ``INPUT -i <dnsmasq_interface> -p udp --dport
67`` (547 for IPv6) jumps to ``[iptables]firewall_chain``, which drops
denied MACs (and, while unknown MACs are denied, accepts the allowed ones
and drops everything else). The whole chain is rewritten in one
``iptables-restore --noflush`` batch, committed atomically by the kernel:
never one process per MAC. It cannot work behind DHCP relays (the source MAC
is the relay's).
"""

import logging
import subprocess

from inspector import exceptions
from inspector.pxe_filter.policy import Desired, changes

LOG = logging.getLogger(__name__)

TIMEOUT = 60.0


class Chain:
    """The filter's chain, as the last batch wrote it."""

    def __init__(
        self,
        interface: str,
        chain: str,
        ip_version: str = "4",
        prefix: tuple[str, ...] = (),
    ) -> None:
        self.interface = interface
        self.chain = chain
        self.ip_version = ip_version
        self.prefix = prefix
        """Run the commands through this (tests: ``ip netns exec NS``)."""
        self.written: dict[str, bool] = {}
        self.unknown: bool | None = None
        self.path = f"iptables chain {chain} on {interface}"

    @property
    def _tool(self) -> str:
        return "ip6tables" if self.ip_version == "6" else "iptables"

    @property
    def _port(self) -> str:
        return "547" if self.ip_version == "6" else "67"

    def _jump(self) -> list[str]:
        return ["INPUT", "-i", self.interface, "-p", "udp", "--dport", self._port,
                "-j", self.chain]  # fmt: skip

    def check(self) -> None:
        """:raises ConfigError: no such interface, or iptables cannot run."""
        shown = self._run(["ip", "link", "show", self.interface], check=False)
        if shown.returncode != 0:
            raise exceptions.ConfigError(
                f"Invalid configuration: [iptables]dnsmasq_interface "
                f"{self.interface} is not an interface of this host"
            )

    def prepare(self) -> None:
        """Create the chain (empty) and the jump to it, once."""
        self._restore([f":{self.chain} - [0:0]", f"-F {self.chain}"])
        present = self._run([self._tool, "-C", *self._jump()], check=False)
        if present.returncode != 0:
            self._run([self._tool, "-I", *self._jump()])
        LOG.info("PXE filter: %s ready", self.path)

    def apply(self, desired: Desired) -> int:
        """Rewrite the chain when an entry changed; how many changed."""
        entries, changed = changes(desired, self.written, self.unknown)
        if not changed:
            return 0
        rules = [f":{self.chain} - [0:0]", f"-F {self.chain}"]
        rules += [
            f"-A {self.chain} -m mac --mac-source {mac} -j DROP"
            for mac, ok in sorted(entries.items())
            if not ok
        ]
        if not desired.unknown_allowed:
            rules += [
                f"-A {self.chain} -m mac --mac-source {mac} -j ACCEPT"
                for mac, ok in sorted(entries.items())
                if ok
            ]
            rules.append(f"-A {self.chain} -j DROP")
        self._restore(rules)
        self.written = dict(entries)
        self.unknown = desired.unknown_allowed
        return changed

    def compact(self) -> int:
        """Nothing to tidy: the chain is rewritten whole."""
        return 0

    def counts(self) -> tuple[int, int]:
        allowed = sum(1 for ok in self.written.values() if ok)
        return allowed, len(self.written) - allowed

    def _restore(self, rules: list[str]) -> None:
        batch = "\n".join(["*filter", *rules, "COMMIT", ""])
        self._run([f"{self._tool}-restore", "--noflush"], stdin=batch)

    def _run(
        self, command: list[str], stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        try:
            done = subprocess.run(
                [*self.prefix, *command],
                input=stdin,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise exceptions.ConfigError(
                f"PXE filter: {command[0]} cannot run: {exc}"
            ) from exc
        if check and done.returncode != 0:
            output = (done.stderr or done.stdout).strip().splitlines()
            raise exceptions.ConfigError(
                f"PXE filter: {command[0]} failed with exit status "
                f"{done.returncode}: {output[-1] if output else '(no output)'}"
            )
        return done
