"""What every PXE filter backend does: the interface the filter's keeper
(:mod:`inspector.pxe_filter.service`) drives."""

from typing import Protocol

from inspector.pxe_filter.policy import Desired


class FilterBackend(Protocol):
    """Where the filter's decision is written (dnsmasq's hostsdir or
    hostsfile, an iptables chain), as this process last wrote it."""

    path: str
    """What is written, for messages and the status report."""
    unknown: bool | None
    """Whether MACs without an entry are allowed (None: nothing written yet)."""

    def check(self) -> None:
        """:raises ConfigError: the backend cannot be used as configured."""

    def prepare(self) -> None:
        """Start from a known state (empty, or what is there read back).

        :raises OSError: it cannot be read or written.
        """

    def apply(self, desired: Desired) -> int:
        """Write what changed from the last call; how many entries."""

    def compact(self) -> int:
        """Tidy up after a repair sync (entries removed); 0 when the
        backend has nothing to tidy."""

    def counts(self) -> tuple[int, int]:
        """MACs allowed and denied by an entry."""
