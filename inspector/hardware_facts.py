"""The facts of a machine's hardware record that the fleet view filters,
groups and compares on: one column each in ``hardware_runs``, written by
the history (:mod:`inspector.history.record`), read by the fleet view
(:mod:`inspector.db.fleet`, :mod:`inspector.fleet.queries`) and chosen
from by ``[inventory]peer_facts``. Declared once, here."""

INTEGER = ("cpus", "memory_mb", "local_gb", "disks", "nics")
"""The facts that are whole numbers (filters compare them as integers)."""
TEXT = ("cpu_model", "cpu_arch", "vendor", "product", "serial", "bios_version")
COLUMNS = (
    "cpus",
    "cpu_model",
    "cpu_arch",
    "memory_mb",
    "local_gb",
    "disks",
    "nics",
    "vendor",
    "product",
    "serial",
    "bios_version",
)
"""Every fact, in the table's order."""
OWN = ("serial",)
"""Facts every machine has its own value of: never compared among peers."""

assert sorted(COLUMNS) == sorted(INTEGER + TEXT)
