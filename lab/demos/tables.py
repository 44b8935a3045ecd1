"""The demos' text tables: one row a machine, columns as wide as their
widest cell."""

from typing import Any

from lab.machines.hardware import GiB


def hardware_cells(data: dict[str, Any] | None) -> list[str]:
    """The CPUs, memory, root disk and NIC count of a machine's stored
    data as the demos' tables show them ("-" each without data)."""
    if not data:
        return ["-"] * 4
    disk = data.get("root_disk") or {}
    root = f"{disk.get('name', '?')} {disk.get('size', 0) // GiB} GiB" if disk else "-"
    return [
        str(data.get("cpus", "-")),
        f"{data.get('memory_mb', 0) // 1024} GiB",
        root,
        str(len(data.get("all_interfaces") or {})),
    ]


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in rows]
    return "\n".join(lines)
