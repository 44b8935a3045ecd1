"""The filter's decision, from what the database and Ironic say.

- MACs of nodes under introspection: allowed;
- every other MAC Ironic knows: denied;
- unknown MACs (the wildcard entry, and MACs the filter wrote before whose
  port is gone): allowed while an introspection runs or discovery is on,
  never with ``deny_unknown_macs``, and never while the filter has lost its
  source of truth (it fails closed for new boots).
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Desired:
    """What every entry of the filter should say."""

    allow: frozenset[str]
    deny: frozenset[str]
    unknown_allowed: bool

    def entries(self, written: frozenset[str] = frozenset()) -> dict[str, bool]:
        """MAC -> allowed, for the known MACs and for ``written`` (entries
        the backend holds from before), which follow the unknown policy
        when they are neither allowed nor denied any more."""
        result = dict.fromkeys(written - self.allow - self.deny, self.unknown_allowed)
        result.update(dict.fromkeys(self.deny, False))
        result.update(dict.fromkeys(self.allow, True))
        return result


def decide(
    booting: frozenset[str],
    known: frozenset[str],
    introspecting: bool,
    discovery: bool,
    deny_unknown: bool,
    fail_closed: bool = False,
) -> Desired:
    """The filter for ``booting`` MACs (under introspection) among ``known``
    (Ironic's ports); ``fail_closed`` keeps every deny and allows no unknown
    MAC (the source of truth is lost)."""
    unknown = (introspecting or discovery) and not deny_unknown and not fail_closed
    return Desired(
        allow=frozenset(booting),
        deny=frozenset(known) - frozenset(booting),
        unknown_allowed=unknown,
    )


def changes(
    desired: Desired, written: dict[str, bool], unknown: bool | None
) -> tuple[dict[str, bool], int]:
    """What a backend holding ``written`` entries (and ``unknown`` for the
    wildcard) must hold for ``desired``, and how many entries differ."""
    entries = desired.entries(frozenset(written))
    changed = sum(1 for mac, ok in entries.items() if written.get(mac) is not ok)
    if unknown is not desired.unknown_allowed:
        changed += 1
    return entries, changed
