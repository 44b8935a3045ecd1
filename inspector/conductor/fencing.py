"""Fencing: before a step acts, is its work still this conductor's?

Every step runs for one version of its introspection (the claim's). A
conductor that was paused or cut off while another took the step over, or
whose node an operator moved on, finds a newer version here and stops
(:class:`~inspector.exceptions.StaleState`) instead of writing to Ironic on
stale authority. The workflows fence through this module only.
"""

from inspector.db import introspections, stored_data
from inspector.db.introspections import IntrospectionRecord
from inspector.runtime import Runtime


def fence(rt: Runtime, record: IntrospectionRecord) -> None:
    """Raise :class:`StaleState` unless ``record``'s version is current."""
    introspections.check_current(rt.db, record.uuid, record.version)


def fenced_post(rt: Runtime, record: IntrospectionRecord) -> stored_data.Post:
    """The ramdisk's post stored for ``record``, and the fence, in one
    statement.

    :raises StaleState: the introspection moved on (or is gone).
    :raises DataNotFound: it is current, but no data is stored.
    """
    return stored_data.get_post(rt.db, record.uuid, record.version)
